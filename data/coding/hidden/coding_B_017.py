"""Hidden acceptance tests of coding_B_017 (generated; never shown to agents)."""

import pytest
from datekit import parse_date
from datetime import date


def test_default_behaviour_1():
    assert parse_date('12/31/2024') == date(2024, 12, 31)


def test_default_behaviour_2():
    assert parse_date('05/03/2023') == date(2023, 5, 3)


def test_option_value_1():
    assert parse_date('31.12.2024', order='dmy') == date(2024, 12, 31)


def test_option_value_2():
    assert parse_date('05/03/2023', order='dmy') == date(2023, 3, 5)


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        parse_date('12/31/2024', order='no-such-value')
