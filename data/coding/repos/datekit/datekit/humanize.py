"""Durations in words."""

_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def describe_duration(seconds):
    """Describe a duration by its largest whole unit: 7500 seconds are ``"2 hours"``."""
    if seconds < 0:
        raise ValueError("durations are not negative")
    for name, size in _UNITS:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {name}" + ("s" if count != 1 else "")
    return "0 seconds"
