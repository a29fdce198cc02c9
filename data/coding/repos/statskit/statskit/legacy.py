"""Deprecated names kept for statskit 0.2 users."""

import warnings

from statskit.describe import mean


def average(values):
    """Deprecated since 0.3: use mean."""
    warnings.warn("average is deprecated; use mean", DeprecationWarning, stacklevel=2)
    return mean(values)
