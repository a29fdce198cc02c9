"""Deprecated names kept for csvlite 1.x users."""

import warnings

from csvlite.reader import read_records


def load_csv(text):
    """Deprecated since 2.0: use read_records."""
    warnings.warn("load_csv is deprecated; use read_records", DeprecationWarning, stacklevel=2)
    return read_records(text)
