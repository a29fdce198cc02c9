"""The currencies moneyfmt knows, with their number of decimals."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Currency:
    """An ISO 4217 currency."""

    code: str
    decimals: int
    name: str


CURRENCIES = {
    c.code: c
    for c in (
        Currency("CHF", 2, "Swiss franc"),
        Currency("EUR", 2, "Euro"),
        Currency("GBP", 2, "Pound sterling"),
        Currency("JPY", 0, "Japanese yen"),
        Currency("KWD", 3, "Kuwaiti dinar"),
        Currency("USD", 2, "US dollar"),
    )
}


def currency(code):
    """The currency with this ISO code (case-insensitive)."""
    try:
        return CURRENCIES[code.upper()]
    except KeyError:
        raise ValueError(f"unknown currency: {code}") from None
