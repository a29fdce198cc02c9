"""Formatting, rounding and parsing of money amounts."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from moneyfmt.currencies import currency


def _quantize(amount, decimals):
    """Round an amount half up to a number of decimals."""
    return amount.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def format_amount(value, code="EUR"):
    """Format an amount with its currency code: ``format_amount(12.5)`` is ``"12.50 EUR"``.

    Negative amounts are not supported yet.
    """
    info = currency(code)
    amount = _quantize(Decimal(str(value)), info.decimals)
    if amount < 0:
        raise ValueError(f"negative amount: {value}")
    return f"{amount} {info.code}"


def round_amount(value, code="EUR"):
    """Round an amount to the number of decimals of its currency (half up)."""
    info = currency(code)
    return _quantize(Decimal(str(value)), info.decimals)


def parse_amount(text):
    """Parse ``"12.50 EUR"`` into ``(Decimal("12.50"), "EUR")``."""
    number, _, code = text.strip().partition(" ")
    info = currency(code.strip())
    try:
        amount = Decimal(number)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    return _quantize(amount, info.decimals), info.code
