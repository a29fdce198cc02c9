"""textkit: slugs, shortened text and titles."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

FILES = {
    **project_files(
        "textkit",
        "3.0.2",
        "Slugs, shortened text and titles",
        '>>> from textkit import slugify, title_case\n>>> slugify("Hello, World!")\n'
        "'hello-world'\n",
    ),
    "textkit/__init__.py": '''\
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
''',
    "textkit/slug.py": '''\
"""URL slugs."""

import re


def slugify(text, separator="-"):
    """Lower-case ASCII words joined by ``separator``; every other character is dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return separator.join(words)
''',
    "textkit/shorten.py": '''\
"""Shortening text to a width."""


def truncate(text, width):
    """Cut text to at most ``width`` characters."""
    if width < 1:
        raise ValueError("width must be positive")
    return text[:width]
''',
    "textkit/case.py": '''\
"""Letter case of titles."""


def title_case(text):
    """Capitalize every word of a title (the rest of each word in lower case)."""
    return " ".join(word.capitalize() for word in text.split())
''',
    "textkit/legacy.py": deprecated_alias(
        "textkit", "make_slug", "slug.slugify", "text", since="3.0", users="2.x"
    ),
    "tests/test_slug.py": """\
from textkit import slugify


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Release 2.0  ", separator="_") == "release_2_0"
""",
    "tests/test_shorten.py": """\
import pytest

from textkit import truncate


def test_short_text_is_kept():
    assert truncate("abc", 5) == "abc"


def test_width_must_be_positive():
    with pytest.raises(ValueError):
        truncate("abc", 0)
""",
    "tests/test_case.py": """\
from textkit import title_case


def test_title_case_of_one_word():
    assert title_case("pYTHON") == "Python"
    assert title_case("") == ""
""",
    "tests/test_legacy.py": """\
import pytest

from textkit import make_slug


def test_make_slug_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert make_slug("A b") == "a-b"
""",
}

FEATURES = (
    Feature(
        key="textkit.letters",
        module="textkit/slug.py",
        call="slugify",
        imports="from textkit import slugify",
        summary="slugify mangles names with accents and umlauts",
        problem=(
            "slugify drops every letter outside ASCII, so shop and street names with accents "
            "or umlauts get mangled slugs."
        ),
        aspect="what slugify does with letters outside ASCII",
        fact_key="non_ascii_letters",
        option="letters",
        option_names=("non_ascii", "diacritics", "unicode"),
        messages=(
            "unsupported letter handling",
            "unknown transliteration",
            "invalid letters option",
        ),  # fmt: skip
        default_message="unknown letter handling",
        old='''\
def slugify(text, separator="-"):
    """Lower-case ASCII words joined by ``separator``; every other character is dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return separator.join(words)
''',
        new='''\
def slugify(text, separator="-"@PARAM@):
    """Lower-case words joined by ``separator``; punctuation is dropped."""
    @CHECK@
    text = text.lower()
    @BRANCHES@
    words = re.findall(pattern, text)
    return separator.join(words)
''',
        modes=(
            Mode(
                "german",
                "umlauts and the sharp s are spelled out, so Müller Straße becomes mueller-strasse",
                'for source, target in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss")):\n'
                "    text = text.replace(source, target)\n"
                'pattern = r"[a-z0-9]+"',
                (('"Müller Straße"', '"mueller-strasse"'), ('"Öl & Gas", "_"', '"oel_gas"')),
            ),
            Mode(
                "strip_accents",
                "accents are removed from letters, so Crème Brûlée becomes creme-brulee",
                "import unicodedata\n\n"
                'decomposed = unicodedata.normalize("NFKD", text)\n'
                'text = "".join(c for c in decomposed if not unicodedata.combining(c))\n'
                'pattern = r"[a-z0-9]+"',
                (('"Crème Brûlée"', '"creme-brulee"'), ('"Ångström 2", "_"', '"angstrom_2"')),
            ),
            Mode(
                "keep",
                "accented letters stay as they are, so Müller Straße becomes müller-straße",
                'pattern = r"[^\\W_]+"',
                (('"Müller Straße"', '"müller-straße"'), ('"Crème Brûlée", "."', '"crème.brûlée"')),
            ),
        ),
    ),
    Feature(
        key="textkit.truncate_marker",
        module="textkit/shorten.py",
        call="truncate",
        imports="from textkit import truncate",
        summary="truncate gives no sign that text was cut",
        problem=(
            "truncate cuts the text at the width without any mark, so readers cannot tell "
            "that something is missing."
        ),
        aspect="how truncate marks the cut",
        fact_key="cut_marker",
        option="marker",
        option_names=("ending", "cut_style", "overflow"),
        messages=("unsupported marker", "unknown cut style", "invalid truncation marker"),
        default_message="unknown marker",
        old='''\
def truncate(text, width):
    """Cut text to at most ``width`` characters."""
    if width < 1:
        raise ValueError("width must be positive")
    return text[:width]
''',
        new='''\
def truncate(text, width@PARAM@):
    """Shorten text to at most ``width`` characters, marking the cut."""
    @CHECK@
    if width < 1:
        raise ValueError("width must be positive")
    if len(text) <= width:
        return text
    @BRANCHES@
''',
        modes=(
            Mode(
                "dots",
                "the kept text ends in three dots within the width, so Hello world cut to 8 "
                "characters is Hello...",
                'return text[: max(width - 3, 0)] + "..."[:width]',
                (('"Hello world", 8', '"Hello..."'), ('"abcdef", 4', '"a..."')),
            ),
            Mode(
                "ellipsis",
                "the kept text ends in the single ellipsis character, so Hello world cut to 8 "
                "characters is Hello w…",
                'return text[: width - 1] + "…"',
                (('"Hello world", 8', '"Hello w…"'), ('"abcdef", 4', '"abc…"')),
            ),
            Mode(
                "words",
                "the text is cut after the last whole word that fits with three dots, so "
                "Hello big world cut to 12 characters is Hello...",
                "kept = text[: max(width - 3, 0)]\n"
                'if " " in kept:\n'
                '    kept = kept[: kept.rindex(" ")]\n'
                'return kept.rstrip() + "..."',
                (
                    ('"Hello big world", 12', '"Hello..."'),
                    ('"the quick brown fox", 14', '"the quick..."'),
                ),
            ),  # fmt: skip
            Mode(
                "bracket",
                "the kept text ends in [...] within the width, so Hello world cut to 10 "
                "characters is Hello[...]",
                'return text[: max(width - 5, 0)] + "[...]"',
                (('"Hello world", 10', '"Hello[...]"'), ('"abcdefgh", 7', '"ab[...]"')),
            ),
        ),
    ),
    Feature(
        key="textkit.title_rules",
        module="textkit/case.py",
        call="title_case",
        imports="from textkit import title_case",
        summary="title_case capitalizes too much",
        problem=(
            "title_case capitalizes every word and lower-cases the rest of it, which the "
            "editors find wrong for real titles."
        ),
        aspect="which words title_case capitalizes",
        fact_key="capitalization_rule",
        option="style",
        option_names=("rules", "capitalization", "casing"),
        messages=("unsupported title style", "unknown capitalization", "invalid casing"),
        default_message="unknown title style",
        old='''\
def title_case(text):
    """Capitalize every word of a title (the rest of each word in lower case)."""
    return " ".join(word.capitalize() for word in text.split())
''',
        new='''\
def title_case(text@PARAM@):
    """Capitalize the words of a title."""
    @CHECK@
    words = text.split()
    @BRANCHES@
    return " ".join(result)
''',
        modes=(
            Mode(
                "english",
                "small words (a, an, and, in, of, on, or, the, to) stay lower case unless they "
                "come first, so the lord of the rings becomes The Lord of the Rings",
                'small = {"a", "an", "and", "in", "of", "on", "or", "the", "to"}\n'
                "result = [\n"
                "    word.capitalize() if index == 0 or word.lower() not in small\n"
                "    else word.lower()\n"
                "    for index, word in enumerate(words)\n"
                "]",
                (
                    ('"the lord of the rings"', '"The Lord of the Rings"'),
                    ('"A TALE OF TWO CITIES"', '"A Tale of Two Cities"'),
                ),
            ),
            Mode(
                "first_only",
                "only the first word starts with a capital and the rest is lower case, so "
                "Hello World becomes Hello world",
                "result = [\n"
                "    word.capitalize() if index == 0 else word.lower()\n"
                "    for index, word in enumerate(words)\n"
                "]",
                (
                    ('"the LORD of the rings"', '"The lord of the rings"'),
                    ('"Hello World"', '"Hello world"'),
                ),
            ),  # fmt: skip
            Mode(
                "keep_acronyms",
                "every word is capitalized but words written all in capitals stay as they "
                "are, so an HTML primer becomes An HTML Primer",
                "result = [\n"
                "    word if word.isupper() and len(word) > 1 else word.capitalize()\n"
                "    for word in words\n"
                "]",
                (
                    ('"NASA and the ESA"', '"NASA And The ESA"'),
                    ('"an HTML primer"', '"An HTML Primer"'),
                ),
            ),  # fmt: skip
        ),
    ),
)

REPOSITORY = Repository(
    name="textkit",
    description="a small library for slugs, shortened text and titles",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("textkit/legacy.py", "make_slug", "tests/test_legacy.py"),
    rename=Rename(
        "textkit/shorten.py", "truncate", "shorten", 'textkit.shorten("abcdef", 3) == "abc"'
    ),
    dependency="unidecode>=1.3",
    next_version="3.1.0",
)
