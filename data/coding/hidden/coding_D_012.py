"""Hidden acceptance tests of coding_D_012 (generated; never shown to agents)."""

import pytest
from moneyfmt import format_amount


def test_default_behaviour_1():
    assert format_amount(-40) == "40.00 EUR CR"


def test_default_behaviour_2():
    assert format_amount(-1.5, 'GBP') == "1.50 GBP CR"


def test_option_value_1():
    assert format_amount(-12.5, negative='minus') == "-12.50 EUR"


def test_option_value_2():
    assert format_amount(-3, 'USD', negative='minus') == "-3.00 USD"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        format_amount(-40, negative='no-such-value')
