"""cliargs: small helpers for command-line programs."""

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
def parse_args(argv, spec):
    """Parse ``--name value`` (or ``--name=value``) options and ``--flag`` switches.

    ``spec`` maps option names to a type (``int``, ``float``, ``str``), or to ``bool`` for a
    switch that takes no value. Other arguments are collected under ``"args"``. Unknown
    options raise ValueError; when an option is given twice, the last value wins.
    """
    result = {name: (False if kind is bool else None) for name, kind in spec.items()}
    positional = []
    pending = list(argv)
    while pending:
        arg = pending.pop(0)
        if not arg.startswith("--"):
            positional.append(arg)
            continue
        name, _, inline = arg[2:].partition("=")
        if name not in spec:
            raise ValueError(f"unknown option: --{name}")
        kind = spec[name]
        if kind is bool:
            result[name] = True
            continue
        if inline:
            raw = inline
        elif pending:
            raw = pending.pop(0)
        else:
            raise ValueError(f"option --{name} needs a value")
        result[name] = kind(raw)
    result["args"] = positional
    return result
'''

FILES = {
    **project_files(
        "cliargs",
        "0.4.1",
        "Small helpers for command-line programs",
        '>>> from cliargs import parse_args\n>>> parse_args(["--jobs", "4", "build"], '
        '{"jobs": int})\n{"jobs": 4, "args": ["build"]}\n',
    ),
    "cliargs/__init__.py": '''\
"""cliargs: small helpers for command-line programs."""

from cliargs._version import __version__
from cliargs.confirm import parse_yes_no
from cliargs.legacy import getopts
from cliargs.parser import parse_args
from cliargs.usage import format_usage

__all__ = [
    "__version__",
    "format_usage",
    "getopts",
    "parse_args",
    "parse_yes_no",
]
''',
    "cliargs/parser.py": f'''\
"""A tiny command-line option parser."""


{_PARSE_OLD}''',
    "cliargs/confirm.py": '''\
"""Answers to yes/no questions."""


def parse_yes_no(answer):
    """Interpret a y/n answer (case-insensitive): ``"y"`` is True and ``"n"`` is False."""
    word = answer.strip().lower()
    if word == "y":
        return True
    if word == "n":
        return False
    raise ValueError(f"not a yes/no answer: {answer!r}")
''',
    "cliargs/usage.py": '''\
"""Usage lines."""


def format_usage(prog, spec):
    """A one-line usage summary: ``usage: prog [--jobs INT] [--verbose]``."""
    parts = [f"usage: {prog}"]
    for name, kind in spec.items():
        parts.append(f"[--{name}]" if kind is bool else f"[--{name} {kind.__name__.upper()}]")
    return " ".join(parts)
''',
    "cliargs/legacy.py": deprecated_alias(
        "cliargs", "getopts", "parser.parse_args", "argv, spec", since="0.4", users="0.3"
    ),
    "tests/test_parser.py": """\
import pytest

from cliargs import parse_args


def test_switches_and_arguments():
    result = parse_args(["--verbose", "build"], {"verbose": bool, "jobs": int})
    assert result == {"verbose": True, "jobs": None, "args": ["build"]}


def test_unknown_option():
    with pytest.raises(ValueError):
        parse_args(["--nope"], {"jobs": int})


def test_missing_value():
    with pytest.raises(ValueError):
        parse_args(["--jobs"], {"jobs": int})
""",
    "tests/test_confirm.py": """\
import pytest

from cliargs import parse_yes_no


def test_n_and_nonsense():
    assert parse_yes_no(" N ") is False
    with pytest.raises(ValueError):
        parse_yes_no("maybe")
""",
    "tests/test_usage.py": """\
from cliargs import format_usage


def test_usage_line():
    assert format_usage("tool", {"jobs": int, "verbose": bool}) == (
        "usage: tool [--jobs INT] [--verbose]"
    )
""",
    "tests/test_legacy.py": """\
import pytest

from cliargs import getopts


def test_getopts_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert getopts(["a"], {}) == {"args": ["a"]}
""",
}

FEATURES = (
    Feature(
        key="cliargs.answer_words",
        module="cliargs/confirm.py",
        call="parse_yes_no",
        imports="from cliargs import parse_yes_no",
        summary="parse_yes_no only understands y and n",
        problem=("parse_yes_no only accepts y and n, so users who type a whole word get an error."),
        aspect="which words parse_yes_no accepts",
        fact_key="accepted_answers",
        option="language",
        option_names=("locale", "vocabulary", "answer_words"),
        messages=("unsupported language", "unknown answer vocabulary", "invalid locale"),
        default_message="unknown language",
        old='''\
def parse_yes_no(answer):
    """Interpret a y/n answer (case-insensitive): ``"y"`` is True and ``"n"`` is False."""
    word = answer.strip().lower()
    if word == "y":
        return True
    if word == "n":
        return False
    raise ValueError(f"not a yes/no answer: {answer!r}")
''',
        new='''\
def parse_yes_no(answer@PARAM@):
    """Interpret a yes/no answer (case-insensitive)."""
    @CHECK@
    word = answer.strip().lower()
    @BRANCHES@
    if word in yes_words:
        return True
    if word in no_words:
        return False
    raise ValueError(f"not a yes/no answer: {answer!r}")
''',
        modes=(
            Mode(
                "english",
                "yes and no are accepted as well as y and n, so 'Yes' means True",
                'yes_words, no_words = ("y", "yes"), ("n", "no")',
                (('"Yes"', "True"), ('" no "', "False")),
            ),
            Mode(
                "german",
                "the German ja and nein are accepted as well as j and n, so 'Ja' means True",
                'yes_words, no_words = ("j", "ja"), ("n", "nein")',
                (('"Ja"', "True"), ('"nein"', "False")),
            ),
            Mode(
                "french",
                "the French oui and non are accepted as well as o and n, so 'OUI' means True",
                'yes_words, no_words = ("o", "oui"), ("n", "non")',
                (('"OUI"', "True"), ('"non"', "False")),
            ),
            Mode(
                "spanish",
                "the Spanish si, sí and no are accepted as well as s and n, so 'Si' means True",
                'yes_words, no_words = ("s", "si", "sí"), ("n", "no")',
                (('"Si"', "True"), ('"no"', "False")),
            ),
        ),
    ),
    Feature(
        key="cliargs.repeated",
        module="cliargs/parser.py",
        call="parse_args",
        imports="from cliargs import parse_args",
        summary="Repeated options lose values",
        problem=(
            "When an option is given twice, parse_args keeps only the last value, so "
            "commands like --tag a --tag b silently lose a tag."
        ),
        aspect="what parse_args does with an option that is given more than once",
        fact_key="repeated_options",
        option="repeat",
        option_names=("on_repeat", "duplicates", "multiple"),
        messages=(
            "unsupported repeat mode",
            "unknown handling of repeats",
            "invalid repeat option",
        ),  # fmt: skip
        default_message="unknown repeat mode",
        old=_PARSE_OLD,
        new='''\
def parse_args(argv, spec@PARAM@):
    """Parse ``--name value`` (or ``--name=value``) options and ``--flag`` switches.

    ``spec`` maps option names to a type (``int``, ``float``, ``str``), or to ``bool`` for a
    switch that takes no value. Other arguments are collected under ``"args"``. Unknown
    options raise ValueError.
    """
    @CHECK@
    result = {name: (False if kind is bool else None) for name, kind in spec.items()}
    positional = []
    seen = set()
    pending = list(argv)
    while pending:
        arg = pending.pop(0)
        if not arg.startswith("--"):
            positional.append(arg)
            continue
        name, _, inline = arg[2:].partition("=")
        if name not in spec:
            raise ValueError(f"unknown option: --{name}")
        kind = spec[name]
        if kind is bool:
            result[name] = True
            continue
        if inline:
            raw = inline
        elif pending:
            raw = pending.pop(0)
        else:
            raise ValueError(f"option --{name} needs a value")
        value = kind(raw)
        @BRANCHES@
        seen.add(name)
    result["args"] = positional
    return result
''',
        modes=(
            Mode(
                "list",
                "every value is kept, in order, in a list, so --tag a --tag b gives ['a', 'b']",
                "if name not in seen:\n    result[name] = []\nresult[name].append(value)",
                (
                    (
                        '["--tag", "a", "--tag=b", "x"], {"tag": str}',
                        '{"tag": ["a", "b"], "args": ["x"]}',
                    ),
                    (
                        '["--n", "1", "--n", "2"], {"n": int, "v": bool}',
                        '{"n": [1, 2], "v": False, "args": []}',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "first",
                "the first value wins and later ones are ignored, so --tag a --tag b gives 'a'",
                "if name not in seen:\n    result[name] = value",
                (
                    ('["--tag", "a", "--tag=b", "x"], {"tag": str}', '{"tag": "a", "args": ["x"]}'),
                    (
                        '["--n", "1", "--n", "2"], {"n": int, "v": bool}',
                        '{"n": 1, "v": False, "args": []}',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "join",
                "the values are joined with commas into one string, so --tag a --tag b gives 'a,b'",
                'result[name] = f"{result[name]},{value}" if name in seen else value',
                (
                    (
                        '["--tag", "a", "--tag=b", "x"], {"tag": str}',
                        '{"tag": "a,b", "args": ["x"]}',
                    ),
                    (
                        '["--path", "/usr", "--path", "/opt"], {"path": str}',
                        '{"path": "/usr,/opt", "args": []}',
                    ),
                ),
            ),  # fmt: skip
        ),
    ),
    Feature(
        key="cliargs.negation",
        module="cliargs/parser.py",
        call="parse_args",
        imports="from cliargs import parse_args",
        summary="Switches cannot be turned off",
        problem=(
            "A switch set in a wrapper script cannot be turned off again on the command "
            "line: parse_args knows no negated form and rejects it as an unknown option."
        ),
        aspect="which prefix turns a switch off",
        fact_key="negation_prefix",
        option="negation",
        option_names=("negate", "off_prefix", "negative_form"),
        messages=("unsupported negation", "unknown negation prefix", "invalid negation style"),
        default_message="unknown negation",
        old=_PARSE_OLD,
        new='''\
def parse_args(argv, spec@PARAM@):
    """Parse ``--name value`` (or ``--name=value``) options and ``--flag`` switches.

    ``spec`` maps option names to a type (``int``, ``float``, ``str``), or to ``bool`` for a
    switch that takes no value; a prefixed switch turns it off again. Other arguments are
    collected under ``"args"``. Unknown options raise ValueError; when an option is given
    twice, the last value wins.
    """
    @CHECK@
    @BRANCHES@
    result = {name: (False if kind is bool else None) for name, kind in spec.items()}
    positional = []
    pending = list(argv)
    while pending:
        arg = pending.pop(0)
        if not arg.startswith("--"):
            positional.append(arg)
            continue
        name, _, inline = arg[2:].partition("=")
        if name.startswith(prefix) and spec.get(name[len(prefix) :]) is bool:
            result[name[len(prefix) :]] = False
            continue
        if name not in spec:
            raise ValueError(f"unknown option: --{name}")
        kind = spec[name]
        if kind is bool:
            result[name] = True
            continue
        if inline:
            raw = inline
        elif pending:
            raw = pending.pop(0)
        else:
            raise ValueError(f"option --{name} needs a value")
        result[name] = kind(raw)
    result["args"] = positional
    return result
''',
        modes=(
            Mode(
                "no",
                "the prefix no-, as in --no-color",
                'prefix = "no-"',
                (
                    ('["--color", "--no-color"], {"color": bool}', '{"color": False, "args": []}'),
                    (
                        '["--cache", "--no-cache", "build"], {"cache": bool, "jobs": int}',
                        '{"cache": False, "jobs": None, "args": ["build"]}',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "disable",
                "the prefix disable-, as in --disable-color",
                'prefix = "disable-"',
                (
                    (
                        '["--color", "--disable-color"], {"color": bool}',
                        '{"color": False, "args": []}',
                    ),
                    (
                        '["--disable-color", "x"], {"color": bool}',
                        '{"color": False, "args": ["x"]}',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "without",
                "the prefix without-, as in --without-tests",
                'prefix = "without-"',
                (
                    (
                        '["--tests", "--without-tests"], {"tests": bool}',
                        '{"tests": False, "args": []}',
                    ),
                    (
                        '["--without-docs"], {"docs": bool, "tests": bool}',
                        '{"docs": False, "tests": False, "args": []}',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "skip",
                "the prefix skip-, as in --skip-lint",
                'prefix = "skip-"',
                (
                    ('["--lint", "--skip-lint"], {"lint": bool}', '{"lint": False, "args": []}'),
                    ('["--skip-lint", "src"], {"lint": bool}', '{"lint": False, "args": ["src"]}'),
                ),
            ),  # fmt: skip
        ),
    ),
)

REPOSITORY = Repository(
    name="cliargs",
    description="a small library of helpers for command-line programs",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("cliargs/legacy.py", "getopts", "tests/test_legacy.py"),
    rename=Rename(
        "cliargs/usage.py",
        "format_usage",
        "usage_line",
        'cliargs.usage_line("tool", {"verbose": bool}) == "usage: tool [--verbose]"',
    ),
    dependency="colorama>=0.4.6",
    next_version="0.5.0",
)
