"""Usage lines."""


def format_usage(prog, spec):
    """A one-line usage summary: ``usage: prog [--jobs INT] [--verbose]``."""
    parts = [f"usage: {prog}"]
    for name, kind in spec.items():
        parts.append(f"[--{name}]" if kind is bool else f"[--{name} {kind.__name__.upper()}]")
    return " ".join(parts)
