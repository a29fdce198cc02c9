"""URL slugs."""

import re


def slugify(text, separator="-"):
    """Lower-case ASCII words joined by ``separator``; every other character is dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return separator.join(words)
