"""Hidden acceptance tests of coding_E_009 (generated; never shown to agents)."""

import pytest
import re
from datekit import parse_date
from datetime import date


def test_default_behaviour_1():
    assert parse_date('2024/12/31') == date(2024, 12, 31)


def test_default_behaviour_2():
    assert parse_date('2023.03.05') == date(2023, 3, 5)


def test_option_value_1():
    assert parse_date('12/31/2024', field_order='mdy') == date(2024, 12, 31)


def test_option_value_2():
    assert parse_date('05/03/2023', field_order='mdy') == date(2023, 5, 3)


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid date layout')):
        parse_date('2024/12/31', field_order='no-such-value')
