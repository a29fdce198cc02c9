"""Deprecated names kept for retrykit 0.6 users."""

import warnings

from retrykit.delays import delays


def wait_times(attempts):
    """Deprecated since 0.7: use delays."""
    warnings.warn("wait_times is deprecated; use delays", DeprecationWarning, stacklevel=2)
    return delays(attempts)
