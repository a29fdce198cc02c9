"""tablefmt: rows as plain-text tables."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

_RENDER_OLD = '''\
def render(rows, headers):
    """A table with columns two spaces apart, each as wide as its widest cell."""
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in table
    ]
    return "\\n".join(lines) + "\\n"
'''

FILES = {
    **project_files(
        "tablefmt",
        "2.0.1",
        "Rows as plain-text tables",
        '>>> from tablefmt import render\n>>> print(render([["pen", 2]], ["item", "qty"]))\n'
        "item  qty\npen   2\n",
    ),
    "tablefmt/__init__.py": '''\
"""tablefmt: rows as plain-text tables."""

from tablefmt._version import __version__
from tablefmt.legacy import tabulate_rows
from tablefmt.render import column_widths, render

__all__ = [
    "__version__",
    "column_widths",
    "render",
    "tabulate_rows",
]
''',
    "tablefmt/render.py": f'''\
"""Rendering rows as text."""


def column_widths(rows, headers):
    """The width of each column: its widest cell, the header included."""
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    return [max(len(row[i]) for row in table) for i in range(len(headers))]


{_RENDER_OLD}''',
    "tablefmt/legacy.py": deprecated_alias(
        "tablefmt", "tabulate_rows", "render.render", "rows, headers", since="2.0", users="1.x"
    ),
    "tests/test_render.py": """\
from tablefmt import column_widths, render


def test_render_shows_every_cell():
    text = render([["pen", 2], ["notebook", 12]], ["item", "qty"])
    assert all(cell in text for cell in ("item", "qty", "pen", "2", "notebook", "12"))
    assert text.endswith("\\n")


def test_column_widths():
    assert column_widths([["a", 100]], ["name", "n"]) == [4, 3]
""",
    "tests/test_legacy.py": """\
import pytest

from tablefmt import tabulate_rows


def test_tabulate_rows_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert "cell" in tabulate_rows([["cell"]], ["h"])
""",
}

FEATURES = (
    Feature(
        key="tablefmt.table_style",
        module="tablefmt/render.py",
        call="render",
        imports="from tablefmt import render",
        summary="render cannot produce tables for our documentation",
        problem=(
            "render only produces columns separated by spaces, which cannot be pasted into "
            "the documentation or a spreadsheet."
        ),
        aspect="what kind of table render produces",
        fact_key="table_kind",
        option="style",
        option_names=("layout", "border", "table_format"),
        messages=("unsupported table style", "unknown layout", "invalid table format"),
        default_message="unknown style",
        old=_RENDER_OLD,
        new='''\
def render(rows, headers@PARAM@):
    """The rows under the headers as a text table."""
    @CHECK@
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    padded = [[cell.ljust(width) for cell, width in zip(row, widths)] for row in table]
    @BRANCHES@
    return "\\n".join(lines) + "\\n"
''',
        modes=(
            Mode(
                "markdown",
                "a Markdown table: cells between | bars, a row of dashes under the header",
                'rule = "| " + " | ".join("-" * width for width in widths) + " |"\n'
                'lines = ["| " + " | ".join(row) + " |" for row in padded]\n'
                "lines.insert(1, rule)",
                (
                    (
                        '[["pen", 2]], ["item", "qty"]',
                        r"""'| item | qty |\n| ---- | --- |\n| pen  | 2   |\n'""",
                    ),
                    (
                        '[["a", 1], ["bb", 22]], ["k", "v"]',
                        r"""'| k  | v  |\n| -- | -- |\n| a  | 1  |\n| bb | 22 |\n'""",
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "grid",
                "a grid: cells between | bars, with +---+ borders above and below the header "
                "and below the last row",
                'border = "+" + "+".join("-" * (width + 2) for width in widths) + "+"\n'
                'body = ["| " + " | ".join(row) + " |" for row in padded]\n'
                "lines = [border, body[0], border, *body[1:], border]",
                (
                    (
                        '[["pen", 2]], ["item", "qty"]',
                        r"""'+------+-----+\n| item | qty |\n+------+-----+\n'"""
                        r""" '| pen  | 2   |\n+------+-----+\n'""",
                    ),
                    (
                        '[["a", 1], ["bb", 22]], ["k", "v"]',
                        r"""'+----+----+\n| k  | v  |\n+----+----+\n'"""
                        r""" '| a  | 1  |\n| bb | 22 |\n+----+----+\n'""",
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "tsv",
                "tab-separated values without padding, for spreadsheets",
                'lines = ["\\t".join(row) for row in table]',
                (
                    ('[["pen", 2]], ["item", "qty"]', r"""'item\tqty\npen\t2\n'"""),
                    ('[["a", 1], ["bb", 22]], ["k", "v"]', r"""'k\tv\na\t1\nbb\t22\n'"""),
                ),
            ),
        ),
    ),
    Feature(
        key="tablefmt.alignment",
        module="tablefmt/render.py",
        call="render",
        imports="from tablefmt import render",
        summary="Numbers in tables are hard to compare",
        problem=(
            "render aligns every cell to the left, so columns of numbers are hard to compare."
        ),
        aspect="how render aligns the cells in their columns",
        fact_key="cell_alignment",
        option="align",
        option_names=("alignment", "justify", "column_align"),
        messages=("unsupported alignment", "unknown justification", "invalid column alignment"),
        default_message="unknown alignment",
        old=_RENDER_OLD,
        new='''\
def render(rows, headers@PARAM@):
    """A table with columns two spaces apart, each as wide as its widest cell."""
    @CHECK@
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    @BRANCHES@
    lines = [
        "  ".join(place(cell, width) for cell, width in zip(row, widths)).rstrip()
        for row in table
    ]
    return "\\n".join(lines) + "\\n"
''',
        modes=(
            Mode(
                "right",
                "every cell, headers included, is aligned to the right of its column",
                "def place(cell, width):\n    return cell.rjust(width)",
                (
                    (
                        '[["pen", 2], ["notebook", 12]], ["item", "qty"]',
                        r"""'    item  qty\n     pen    2\nnotebook   12\n'""",
                    ),
                    ('[["a", 100]], ["name", "n"]', r"""'name    n\n   a  100\n'"""),
                ),
            ),  # fmt: skip
            Mode(
                "numbers_right",
                "cells that are numbers go to the right of their column and all other cells, "
                "headers included, to the left",
                "def place(cell, width):\n"
                '    number = cell.replace(".", "", 1).lstrip("-").isdigit()\n'
                "    return cell.rjust(width) if number else cell.ljust(width)",
                (
                    (
                        '[["pen", 2], ["notebook", 12]], ["item", "qty"]',
                        r"""'item      qty\npen         2\nnotebook   12\n'""",
                    ),
                    ('[["a", 5]], ["name", "total"]', r"""'name  total\na         5\n'"""),
                ),
            ),  # fmt: skip
            Mode(
                "center",
                "every cell, headers included, is centered in its column",
                "def place(cell, width):\n    return cell.center(width)",
                (
                    (
                        '[["pen", 2], ["notebook", 12]], ["item", "qty"]',
                        r"""'  item    qty\n  pen      2\nnotebook   12\n'""",
                    ),
                    ('[["a", 100]], ["name", "n"]', r"""'name   n\n a    100\n'"""),
                ),
            ),  # fmt: skip
        ),
    ),
    Feature(
        key="tablefmt.missing",
        module="tablefmt/render.py",
        call="render",
        imports="from tablefmt import render",
        summary="Missing values show up as None",
        problem="render writes missing values (None) as the word None, which confuses readers.",
        aspect="how render shows a missing value",
        fact_key="missing_value",
        option="missing",
        option_names=("placeholder", "none_as", "blank"),
        messages=("unsupported placeholder", "unknown missing value text", "invalid blank"),
        default_message="unknown missing value style",
        old=_RENDER_OLD,
        new='''\
def render(rows, headers@PARAM@):
    """A table with columns two spaces apart, each as wide as its widest cell."""
    @CHECK@
    @BRANCHES@
    table = [list(headers)] + [
        [fill if cell is None else str(cell) for cell in row] for row in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in table
    ]
    return "\\n".join(lines) + "\\n"
''',
        modes=(
            Mode(
                "empty",
                "an empty cell",
                'fill = ""',
                (
                    ('[["pen", None]], ["item", "qty"]', r"""'item  qty\npen\n'"""),
                    ('[[None, 3]], ["a", "b"]', r"""'a  b\n   3\n'"""),
                ),
            ),
            Mode(
                "dash",
                "a single dash -",
                'fill = "-"',
                (
                    ('[["pen", None]], ["item", "qty"]', r"""'item  qty\npen   -\n'"""),
                    ('[[None, 3]], ["a", "b"]', r"""'a  b\n-  3\n'"""),
                ),
            ),
            Mode(
                "na",
                "the text n/a",
                'fill = "n/a"',
                (
                    ('[["pen", None]], ["item", "qty"]', r"""'item  qty\npen   n/a\n'"""),
                    ('[[None, 3]], ["a", "b"]', r"""'a    b\nn/a  3\n'"""),
                ),
            ),
            Mode(
                "question",
                "a question mark ?",
                'fill = "?"',
                (
                    ('[["pen", None]], ["item", "qty"]', r"""'item  qty\npen   ?\n'"""),
                    ('[[None, 3]], ["a", "b"]', r"""'a  b\n?  3\n'"""),
                ),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="tablefmt",
    description="a small library that renders rows as plain-text tables",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("tablefmt/legacy.py", "tabulate_rows", "tests/test_legacy.py"),
    rename=Rename(
        "tablefmt/render.py",
        "column_widths",
        "widths_of",
        'tablefmt.widths_of([["a", 100]], ["name", "n"]) == [4, 3]',
    ),  # fmt: skip
    dependency="wcwidth>=0.2.13",
    next_version="2.1.0",
)
