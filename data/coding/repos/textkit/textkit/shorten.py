"""Shortening text to a width."""


def truncate(text, width):
    """Cut text to at most ``width`` characters."""
    if width < 1:
        raise ValueError("width must be positive")
    return text[:width]
