"""Parsing dates from text."""

import re
from datetime import date

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def parse_date(text):
    """Parse an ISO 8601 calendar date such as ``2024-12-31``; other formats are rejected."""
    match = _ISO.match(text.strip())
    if match is None:
        raise ValueError(f"unsupported date format: {text!r}")
    year, month, day = (int(part) for part in match.groups())
    return date(year, month, day)
