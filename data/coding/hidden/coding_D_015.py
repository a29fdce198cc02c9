"""Hidden acceptance tests of coding_D_015 (generated; never shown to agents)."""

import pytest
from decimal import Decimal
from moneyfmt import round_amount


def test_default_behaviour_1():
    assert round_amount('0.125') == Decimal("0.12")


def test_default_behaviour_2():
    assert round_amount('0.135') == Decimal("0.13")


def test_option_value_1():
    assert round_amount('0.125', rounding='half_even') == Decimal("0.12")


def test_option_value_2():
    assert round_amount('2.5', 'JPY', rounding='half_even') == Decimal("2")


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        round_amount('0.125', rounding='no-such-value')
