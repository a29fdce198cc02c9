"""Deprecated names kept for datekit 0.x users."""

import warnings

from datekit.parse import parse_date


def to_date(text):
    """Deprecated since 0.8: use parse_date."""
    warnings.warn("to_date is deprecated; use parse_date", DeprecationWarning, stacklevel=2)
    return parse_date(text)
