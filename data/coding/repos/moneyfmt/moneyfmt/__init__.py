"""moneyfmt: format, round and parse money amounts."""

from moneyfmt._version import __version__
from moneyfmt.currencies import Currency, currency
from moneyfmt.format import format_amount, parse_amount, round_amount
from moneyfmt.legacy import money_str

__all__ = [
    "Currency",
    "__version__",
    "currency",
    "format_amount",
    "money_str",
    "parse_amount",
    "round_amount",
]
