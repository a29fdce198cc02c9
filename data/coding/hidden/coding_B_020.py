"""Hidden acceptance tests of coding_B_020 (generated; never shown to agents)."""

import pytest
from moneyfmt import format_amount


def test_default_behaviour_1():
    assert format_amount(1234567.5) == "1'234'567.50 EUR"


def test_default_behaviour_2():
    assert format_amount(98765.4321, 'KWD') == "98'765.432 KWD"


def test_option_value_1():
    assert format_amount(1234567.5, grouping='underscore') == "1_234_567.50 EUR"


def test_option_value_2():
    assert format_amount(4500, 'USD', grouping='underscore') == "4_500.00 USD"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        format_amount(1234567.5, grouping='no-such-value')
