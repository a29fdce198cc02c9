"""textkit: slugs, shortened text and titles."""

from textkit._version import __version__
from textkit.case import title_case
from textkit.legacy import make_slug
from textkit.shorten import truncate
from textkit.slug import slugify

__all__ = [
    "__version__",
    "make_slug",
    "slugify",
    "title_case",
    "truncate",
]
