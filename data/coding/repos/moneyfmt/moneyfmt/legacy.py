"""Deprecated names kept for moneyfmt 1.x users."""

import warnings

from moneyfmt.format import format_amount


def money_str(value, code="EUR"):
    """Deprecated since 1.2: use format_amount."""
    warnings.warn("money_str is deprecated; use format_amount", DeprecationWarning, stacklevel=2)
    return format_amount(value, code)
