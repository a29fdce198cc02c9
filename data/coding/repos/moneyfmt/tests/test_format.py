from decimal import Decimal

import pytest

from moneyfmt import format_amount, parse_amount, round_amount


def test_format_uses_the_currency_decimals():
    assert format_amount(12.5) == "12.50 EUR"
    assert format_amount(999, "JPY") == "999 JPY"
    assert format_amount("0.1235", "KWD") == "0.124 KWD"


def test_round_amount_keeps_exact_amounts():
    assert round_amount("2.5") == Decimal("2.50")
    assert round_amount("7", "KWD") == Decimal("7.000")


def test_parse_amount():
    assert parse_amount("7.25 CHF") == (Decimal("7.25"), "CHF")
    with pytest.raises(ValueError):
        parse_amount("seven CHF")
