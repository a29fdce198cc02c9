"""Deprecated names kept for configlite 1.4 users."""

import warnings

from configlite.parser import parse_config


def load_ini(text):
    """Deprecated since 1.5: use parse_config."""
    warnings.warn("load_ini is deprecated; use parse_config", DeprecationWarning, stacklevel=2)
    return parse_config(text)
