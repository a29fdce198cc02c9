"""Hidden acceptance tests of coding_B_016 (generated; never shown to agents)."""

import pytest
from moneyfmt import format_amount


def test_default_behaviour_1():
    assert format_amount(-12.5) == "-12.50 EUR"


def test_default_behaviour_2():
    assert format_amount(-3, 'USD') == "-3.00 USD"


def test_option_value_1():
    assert format_amount(-12.5, negative='parentheses') == "(12.50) EUR"


def test_option_value_2():
    assert format_amount(-1999, 'JPY', negative='parentheses') == "(1999) JPY"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        format_amount(-12.5, negative='no-such-value')
