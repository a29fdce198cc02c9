"""configlite: INI-style configuration files."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

_PARSE_OLD = '''\
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
'''

_GET_OLD = '''\
    def get(self, section, key, default=None):
        """The value of ``key`` in ``section`` as written, or ``default``."""
        return self.sections.get(section, {}).get(key, default)
'''

_GET_BOOL_OLD = '''\
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
'''

FILES = {
    **project_files(
        "configlite",
        "1.5.3",
        "Read INI-style configuration files",
        ">>> from configlite import parse_config\n"
        '>>> config = parse_config("[db]\\nport = 5432\\n")\n'
        '>>> config.get_int("db", "port")\n5432\n',
    ),
    "configlite/__init__.py": '''\
"""configlite: read INI-style configuration files."""

from configlite._version import __version__
from configlite.legacy import load_ini
from configlite.parser import Config, parse_config

__all__ = [
    "Config",
    "__version__",
    "load_ini",
    "parse_config",
]
''',
    "configlite/parser.py": f'''\
"""A small parser for INI-style configuration text."""

import re

_SECTION = re.compile(r"^\\[(.+)\\]$")


class Config:
    """Sections of ``key = value`` settings, kept as strings."""

    def __init__(self, sections):
        self.sections = sections

{_GET_OLD}
    def get_int(self, section, key, default=None):
        """An integer value, or ``default``."""
        raw = self.get(section, key)
        return default if raw is None else int(raw)

{_GET_BOOL_OLD}

{_PARSE_OLD}''',
    "configlite/legacy.py": deprecated_alias(
        "configlite", "load_ini", "parser.parse_config", "text", since="1.5", users="1.4"
    ),
    "tests/test_parser.py": '''\
import pytest

from configlite import parse_config

TEXT = """
# service settings
[db]
host = localhost
port = 5432
debug = TRUE
"""


def test_values():
    config = parse_config(TEXT)
    assert config.get("db", "host") == "localhost"
    assert config.get_int("db", "port") == 5432
    assert config.get_bool("db", "debug") is True
    assert config.get("db", "user", "admin") == "admin"


def test_not_a_boolean():
    with pytest.raises(ValueError):
        parse_config("[a]\\nflag = maybe\\n").get_bool("a", "flag")
''',
    "tests/test_legacy.py": """\
import pytest

from configlite import load_ini


def test_load_ini_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert load_ini("[a]\\nb = c\\n").get("a", "b") == "c"
""",
}

_BOOL_HELPER = """\
def flag(written, **options):
    return parse_config(f"[s]\\nk = {written}\\n").get_bool("s", "k", **options)
"""

_VALUE_HELPER = """\
def value(text, key, **options):
    return parse_config(text).get("s", key, **options)
"""

_SECTIONS_HELPER = """\
def sections(text, **options):
    return parse_config(text, **options).sections
"""

FEATURES = (
    Feature(
        key="configlite.duplicates",
        module="configlite/parser.py",
        call="sections",
        imports="from configlite import parse_config",
        helper=_SECTIONS_HELPER,
        summary="Configuration files with a repeated key are rejected",
        problem=(
            "parse_config rejects a file when a key appears twice in a section, but "
            "generated configuration files repeat keys on purpose."
        ),
        aspect="what parse_config does with a key that appears twice in a section",
        fact_key="repeated_keys",
        option="duplicates",
        option_names=("on_duplicate", "repeated_key", "duplicate_keys"),
        messages=(
            "unsupported duplicate handling",
            "unknown policy for repeated keys",
            "invalid duplicates option",
        ),  # fmt: skip
        default_message="unknown duplicate handling",
        old=_PARSE_OLD,
        new='''\
def parse_config(text@PARAM@):
    """Parse INI-style text: ``[section]`` headers, ``key = value`` lines, ``#`` comments."""
    @CHECK@
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
            @BRANCHES@
        else:
            current[key] = value
    return Config(sections)
''',
        modes=(
            Mode(
                "first",
                "the first value counts and later ones are ignored, so host = a then "
                "host = b gives a",
                "continue",
                (
                    ('"[db]\\nhost = a\\nhost = b\\n"', '{"db": {"host": "a"}}'),
                    ('"[x]\\nk = 1\\nk = 2\\nk = 3\\n"', '{"x": {"k": "1"}}'),
                ),
            ),
            Mode(
                "last",
                "the last value counts, so host = a then host = b gives b",
                "current[key] = value",
                (
                    ('"[db]\\nhost = a\\nhost = b\\n"', '{"db": {"host": "b"}}'),
                    ('"[x]\\nk = 1\\nk = 2\\nk = 3\\n"', '{"x": {"k": "3"}}'),
                ),
            ),
            Mode(
                "list",
                "all values are kept in a list, in order, so host = a then host = b gives "
                "['a', 'b']",
                "existing = current[key]\n"
                "current[key] = (existing if isinstance(existing, list) else [existing]) + [value]",
                (
                    ('"[db]\\nhost = a\\nhost = b\\n"', '{"db": {"host": ["a", "b"]}}'),
                    ('"[x]\\nk = 1\\nk = 2\\nk = 3\\n"', '{"x": {"k": ["1", "2", "3"]}}'),
                ),
            ),
            Mode(
                "join",
                "the values are joined with commas, so host = a then host = b gives a,b",
                'current[key] = current[key] + "," + value',
                (
                    ('"[db]\\nhost = a\\nhost = b\\n"', '{"db": {"host": "a,b"}}'),
                    ('"[x]\\nk = 1\\nk = 2\\nk = 3\\n"', '{"x": {"k": "1,2,3"}}'),
                ),
            ),
        ),
    ),
    Feature(
        key="configlite.booleans",
        module="configlite/parser.py",
        call="flag",
        imports="from configlite import parse_config",
        helper=_BOOL_HELPER,
        summary="get_bool rejects common ways of writing booleans",
        problem=(
            "get_bool only understands true and false, so configuration files written by "
            "operators are rejected."
        ),
        aspect="which spellings get_bool accepts besides true and false",
        fact_key="boolean_spellings",
        option="accepted",
        option_names=("vocabulary", "bool_words", "truth_words"),
        messages=(
            "unsupported boolean spelling",
            "unknown boolean vocabulary",
            "invalid boolean words",
        ),  # fmt: skip
        default_message="unknown boolean spelling",
        old=_GET_BOOL_OLD,
        new='''\
    def get_bool(self, section, key, default=None@PARAM@):
        """A boolean value (spellings are not case-sensitive)."""
        @CHECK@
        raw = self.get(section, key)
        if raw is None:
            return default
        word = raw.strip().lower()
        @BRANCHES@
        if word in truthy:
            return True
        if word in falsy:
            return False
        raise ValueError(f"[{section}] {key}: not a boolean: {raw!r}")
''',
        modes=(
            Mode(
                "yes_no",
                "yes and no also work, so Yes means True",
                'truthy, falsy = ("true", "yes"), ("false", "no")',
                (('"Yes"', "True"), ('"no"', "False")),
            ),
            Mode(
                "on_off",
                "on and off also work, so ON means True",
                'truthy, falsy = ("true", "on"), ("false", "off")',
                (('"ON"', "True"), ('"off"', "False")),
            ),
            Mode(
                "numeric",
                "1 and 0 also work, so 1 means True",
                'truthy, falsy = ("true", "1"), ("false", "0")',
                (('"1"', "True"), ('"0"', "False")),
            ),
            Mode(
                "all",
                "yes/no, on/off and 1/0 all work, so on means True and 0 means False",
                'truthy = ("true", "yes", "on", "1")\nfalsy = ("false", "no", "off", "0")',
                (('"on"', "True"), ('"0"', "False")),
            ),
        ),
    ),
    Feature(
        key="configlite.interpolation",
        module="configlite/parser.py",
        call="value",
        imports="from configlite import parse_config",
        helper=_VALUE_HELPER,
        summary="Settings cannot refer to other settings",
        problem=(
            "Configuration values cannot refer to other keys of their section, so paths "
            "like the data directory repeat the root directory everywhere."
        ),
        aspect="how a value refers to another key of its section",
        fact_key="reference_syntax",
        option="interpolation",
        option_names=("references", "expand", "substitution"),
        messages=(
            "unsupported interpolation",
            "unknown reference syntax",
            "invalid interpolation style",
        ),  # fmt: skip
        default_message="unknown interpolation",
        old=_GET_OLD,
        new='''\
    def get(self, section, key, default=None@PARAM@):
        """The value of ``key`` in ``section`` with references expanded, or ``default``.

        A reference to a key the section does not have is left as written.
        """
        @CHECK@
        values = self.sections.get(section, {})
        if key not in values:
            return default
        @BRANCHES@
        def expand(found):
            return values.get(found.group(1), found.group(0))

        return re.sub(pattern, expand, values[key])
''',
        modes=(
            Mode(
                "dollar_braces",
                "${name}, so data = ${root}/data expands root",
                r'pattern = r"\$\{(\w+)\}"',
                (
                    (r'"[s]\nroot = /srv\ndata = ${root}/data\n", "data"', '"/srv/data"'),
                    (r'"[s]\nu = ann\nurl = http://${u}@${host}\n", "url"', '"http://ann@${host}"'),
                ),
            ),
            Mode(
                "percent",
                "%(name)s, so data = %(root)s/data expands root",
                r'pattern = r"%\((\w+)\)s"',
                (
                    (r'"[s]\nroot = /srv\ndata = %(root)s/data\n", "data"', '"/srv/data"'),
                    (r'"[s]\na = 1\nb = %(a)s%(a)s\n", "b"', '"11"'),
                ),
            ),
            Mode(
                "dollar",
                "$name, so data = $root/data expands root",
                r'pattern = r"\$(\w+)"',
                (
                    (r'"[s]\nroot = /srv\ndata = $root/data\n", "data"', '"/srv/data"'),
                    (r'"[s]\nname = x\nmsg = hi $name and $other\n", "msg"', '"hi x and $other"'),
                ),
            ),
            Mode(
                "at_signs",
                "@name@, so data = @root@/data expands root",
                r'pattern = r"@(\w+)@"',
                (
                    (r'"[s]\nroot = /srv\ndata = @root@/data\n", "data"', '"/srv/data"'),
                    (r'"[s]\nv = 2\nw = @v@.@v@.@x@\n", "w"', '"2.2.@x@"'),
                ),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="configlite",
    description="a small library that reads INI-style configuration files",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("configlite/legacy.py", "load_ini", "tests/test_legacy.py"),
    rename=Rename(
        "configlite/parser.py",
        "parse_config",
        "load_config",
        'configlite.load_config("[a]\\nb = c\\n").get("a", "b") == "c"',
    ),  # fmt: skip
    dependency="platformdirs>=4.2",
    next_version="1.6.0",
)
