"""Hidden acceptance tests of coding_B_013 (generated; never shown to agents)."""

import pytest
from datekit import add_business_days
from datetime import date


def test_default_behaviour_1():
    assert add_business_days(date(2024, 1, 5), 1) == date(2024, 1, 7)


def test_default_behaviour_2():
    assert add_business_days(date(2024, 1, 5), 2) == date(2024, 1, 8)


def test_option_value_1():
    assert add_business_days(date(2024, 1, 4), 1, weekend='fri_sat') == date(2024, 1, 7)


def test_option_value_2():
    assert add_business_days(date(2024, 1, 3), 2, weekend='fri_sat') == date(2024, 1, 7)


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        add_business_days(date(2024, 1, 5), 1, weekend='no-such-value')
