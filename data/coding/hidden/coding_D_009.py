"""Hidden acceptance tests of coding_D_009 (generated; never shown to agents)."""

import pytest
from datekit import add_business_days
from datetime import date


def test_default_behaviour_1():
    assert add_business_days(date(2024, 1, 5), 1) == date(2024, 1, 6)


def test_default_behaviour_2():
    assert add_business_days(date(2024, 1, 4), 3) == date(2024, 1, 8)


def test_option_value_1():
    assert add_business_days(date(2024, 1, 5), 1, weekend='sat_only') == date(2024, 1, 7)


def test_option_value_2():
    assert add_business_days(date(2024, 1, 5), 2, weekend='sat_only') == date(2024, 1, 8)


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        add_business_days(date(2024, 1, 5), 1, weekend='no-such-value')
