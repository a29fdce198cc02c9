"""A small parser for INI-style configuration text."""

import re

_SECTION = re.compile(r"^\[(.+)\]$")


class Config:
    """Sections of ``key = value`` settings, kept as strings."""

    def __init__(self, sections):
        self.sections = sections

    def get(self, section, key, default=None):
        """The value of ``key`` in ``section`` as written, or ``default``."""
        return self.sections.get(section, {}).get(key, default)

    def get_int(self, section, key, default=None):
        """An integer value, or ``default``."""
        raw = self.get(section, key)
        return default if raw is None else int(raw)

    def get_bool(self, section, key, default=None):
        """A boolean value, written ``true`` or ``false`` (in any letter case)."""
        raw = self.get(section, key)
        if raw is None:
            return default
        word = raw.strip().lower()
        if word == "true":
            return True
        if word == "false":
            return False
        raise ValueError(f"[{section}] {key}: not a boolean: {raw!r}")


def parse_config(text):
    """Parse INI-style text: ``[section]`` headers, ``key = value`` lines, ``#`` comments.

    A key given twice in the same section is an error.
    """
    sections = {}
    current = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        header = _SECTION.match(stripped)
        if header is not None:
            current = sections.setdefault(header.group(1).strip(), {})
            continue
        if current is None or "=" not in stripped:
            raise ValueError(f"line {number}: expected [section] or key = value")
        key, _, value = stripped.partition("=")
        key, value = key.strip(), value.strip()
        if key in current:
            raise ValueError(f"line {number}: duplicate key {key!r}")
        current[key] = value
    return Config(sections)
