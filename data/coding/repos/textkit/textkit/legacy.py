"""Deprecated names kept for textkit 2.x users."""

import warnings

from textkit.slug import slugify


def make_slug(text):
    """Deprecated since 3.0: use slugify."""
    warnings.warn("make_slug is deprecated; use slugify", DeprecationWarning, stacklevel=2)
    return slugify(text)
