"""csvlite: reading and writing delimited text."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

_READ_OLD = '''\
def read_records(text, delimiter=","):
    """Read delimited text with a header line into a list of dicts (all values are strings)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = split_line(lines[0], delimiter)
    records = []
    for number, line in enumerate(lines[1:], start=2):
        values = split_line(line, delimiter)
        if len(values) != len(header):
            raise ValueError(f"line {number} has {len(values)} fields, expected {len(header)}")
        records.append(dict(zip(header, values)))
    return records
'''

FILES = {
    **project_files(
        "csvlite",
        "2.1.0",
        "Read and write delimited text without surprises",
        '>>> from csvlite import read_records\n>>> read_records("a,b\\n1,2\\n")\n'
        "[{'a': '1', 'b': '2'}]\n",
    ),
    "csvlite/__init__.py": '''\
"""csvlite: read and write delimited text."""

from csvlite._version import __version__
from csvlite.legacy import load_csv
from csvlite.reader import read_records, split_line
from csvlite.writer import write_records

__all__ = [
    "__version__",
    "load_csv",
    "read_records",
    "split_line",
    "write_records",
]
''',
    "csvlite/reader.py": f'''\
"""Reading delimited text into records."""


def split_line(line, delimiter=","):
    """Split one line on the delimiter; double quotes protect delimiters ("" is a quote)."""
    fields, current, quoted = [], [], False
    index = 0
    while index < len(line):
        char = line[index]
        if char == '"':
            if quoted and line[index + 1 : index + 2] == '"':
                current.append('"')
                index += 1
            else:
                quoted = not quoted
        elif char == delimiter and not quoted:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    fields.append("".join(current))
    return fields


{_READ_OLD}''',
    "csvlite/writer.py": '''\
"""Writing records as delimited text."""


def write_records(records, fields, delimiter=","):
    """Write records (dicts) under a header line; values are written as they are."""
    lines = [delimiter.join(fields)]
    for record in records:
        lines.append(delimiter.join(str(record.get(name, "")) for name in fields))
    return "\\n".join(lines) + "\\n"
''',
    "csvlite/legacy.py": deprecated_alias(
        "csvlite", "load_csv", "reader.read_records", "text", since="2.0", users="1.x"
    ),
    "tests/test_reader.py": '''\
import pytest

from csvlite import read_records, split_line


def test_split_honours_quotes():
    assert split_line('a,"b,c",d') == ["a", "b,c", "d"]
    assert split_line('"say ""hi"""') == ['say "hi"']


def test_read_records():
    text = "name,color\\npen,blue\\n\\nink,black\\n"
    assert read_records(text) == [
        {"name": "pen", "color": "blue"},
        {"name": "ink", "color": "black"},
    ]
    assert read_records("a;b\\nx;y\\n", ";") == [{"a": "x", "b": "y"}]


def test_row_with_too_many_fields():
    with pytest.raises(ValueError):
        read_records("a,b\\n1,2,3\\n")
''',
    "tests/test_writer.py": """\
from csvlite import read_records, write_records


def test_written_records_read_back():
    records = [{"name": "pen", "color": "blue"}, {"name": "ink", "color": "dark red"}]
    assert read_records(write_records(records, ["name", "color"])) == records
""",
    "tests/test_legacy.py": """\
import pytest

from csvlite import load_csv


def test_load_csv_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert load_csv("a\\nx\\n") == [{"a": "x"}]
""",
}

FEATURES = (
    Feature(
        key="csvlite.short_rows",
        module="csvlite/reader.py",
        call="read_records",
        imports="from csvlite import read_records",
        summary="read_records fails on exports with trailing empty fields cut off",
        problem=(
            "Some exports drop empty trailing fields, so a line has fewer fields than the "
            "header; read_records then raises ValueError and the whole file is lost."
        ),
        aspect="what happens to a line with fewer fields than the header",
        fact_key="short_lines",
        option="short_rows",
        option_names=("missing_fields", "short_line", "incomplete_rows"),
        messages=(
            "unsupported short row handling",
            "unknown policy for short rows",
            "invalid short row option",
        ),  # fmt: skip
        default_message="unknown short row handling",
        old=_READ_OLD,
        new='''\
def read_records(text, delimiter=","@PARAM@):
    """Read delimited text with a header line into a list of dicts (all values are strings)."""
    @CHECK@
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = split_line(lines[0], delimiter)
    records = []
    for number, line in enumerate(lines[1:], start=2):
        values = split_line(line, delimiter)
        if len(values) > len(header):
            raise ValueError(f"line {number} has {len(values)} fields, expected {len(header)}")
        if len(values) < len(header):
            @BRANCHES@
        records.append(dict(zip(header, values)))
    return records
''',
        modes=(
            Mode(
                "pad",
                "the missing fields are filled with empty strings, so the line 1,2 under the "
                "header a,b,c gives a: '1', b: '2', c: ''",
                'values = values + [""] * (len(header) - len(values))',
                (
                    ('"a,b,c\\n1,2\\n"', '[{"a": "1", "b": "2", "c": ""}]'),
                    ('"x;y\\n7\\n8;9\\n", ";"', '[{"x": "7", "y": ""}, {"x": "8", "y": "9"}]'),
                ),
            ),
            Mode(
                "skip",
                "such a line is left out of the result, and the complete lines are kept",
                "continue",
                (
                    ('"a,b,c\\n1,2\\n3,4,5\\n"', '[{"a": "3", "b": "4", "c": "5"}]'),
                    ('"x;y\\n7\\n", ";"', "[]"),
                ),
            ),
            Mode(
                "none",
                "the missing fields are set to None, so the line 1,2 under the header a,b,c "
                "gives a: '1', b: '2', c: None",
                "values = values + [None] * (len(header) - len(values))",
                (
                    ('"a,b,c\\n1,2\\n"', '[{"a": "1", "b": "2", "c": None}]'),
                    ('"x;y\\n7\\n8;9\\n", ";"', '[{"x": "7", "y": None}, {"x": "8", "y": "9"}]'),
                ),
            ),
        ),
    ),
    Feature(
        key="csvlite.quoting",
        module="csvlite/writer.py",
        call="write_records",
        imports="from csvlite import write_records",
        summary="write_records produces broken lines",
        problem=(
            "write_records writes values as they are, so a value containing the delimiter "
            "or a double quote breaks the line for every reader."
        ),
        aspect="which fields write_records puts in double quotes",
        fact_key="field_quoting",
        option="quoting",
        option_names=("quote_style", "quote_fields", "quote_mode"),
        messages=("unsupported quoting", "unknown quote style", "invalid quoting"),
        default_message="unknown quoting",
        old='''\
def write_records(records, fields, delimiter=","):
    """Write records (dicts) under a header line; values are written as they are."""
    lines = [delimiter.join(fields)]
    for record in records:
        lines.append(delimiter.join(str(record.get(name, "")) for name in fields))
    return "\\n".join(lines) + "\\n"
''',
        new='''\
def write_records(records, fields, delimiter=","@PARAM@):
    """Write records (dicts) under a header line; quoted fields double their quotes."""
    @CHECK@

    def cell(value):
        text = "" if value is None else str(value)
        @BRANCHES@
        if needs_quotes:
            return '"' + text.replace('"', '""') + '"'
        return text

    lines = [delimiter.join(cell(name) for name in fields)]
    for record in records:
        lines.append(delimiter.join(cell(record.get(name, "")) for name in fields))
    return "\\n".join(lines) + "\\n"
''',
        modes=(
            Mode(
                "minimal",
                "only fields that contain the delimiter, a double quote or a line break are "
                'quoted, so the name Lee, Ann is written "Lee, Ann"',
                'needs_quotes = any(mark in text for mark in (delimiter, \'"\', "\\n"))',
                (
                    (
                        '[{"name": "Lee, Ann", "qty": 2}], ["name", "qty"]',
                        r"""'name,qty\n"Lee, Ann",2\n'""",
                    ),
                    ('[{"note": "2;5"}], ["note"], ";"', r"""'note\n"2;5"\n'"""),
                ),
            ),
            Mode(
                "all",
                'every field is quoted, the header included, so a row pen, 2 is written "pen","2"',
                "needs_quotes = True",
                (
                    (
                        '[{"name": "Lee", "qty": 2}], ["name", "qty"]',
                        r"""'"name","qty"\n"Lee","2"\n'""",
                    ),
                    ('[{"a": 1.5}], ["a"], ";"', r"""'"a"\n"1.5"\n'"""),
                ),
            ),
            Mode(
                "nonnumeric",
                "every field that is not a number is quoted, the header included, so a row "
                'pen, 2 is written "pen",2',
                'needs_quotes = not text.replace(".", "", 1).lstrip("-").isdigit()',
                (
                    (
                        '[{"name": "Lee", "qty": 2}], ["name", "qty"]',
                        r"""'"name","qty"\n"Lee",2\n'""",
                    ),
                    ('[{"a": -1.5, "b": "x"}], ["a", "b"], ";"', r"""'"a";"b"\n-1.5;"x"\n'"""),
                ),
            ),
        ),
    ),
    Feature(
        key="csvlite.convert",
        module="csvlite/reader.py",
        call="read_records",
        imports="from csvlite import read_records",
        summary="read_records returns every value as a string",
        problem=(
            "read_records returns every value as a string, so every caller converts the "
            "values again, each in its own way."
        ),
        aspect="which values read_records converts from text",
        fact_key="value_conversion",
        option="convert",
        option_names=("coerce", "value_types", "parse_values"),
        messages=("unsupported conversion", "unknown value conversion", "invalid coercion"),
        default_message="unknown conversion",
        old=_READ_OLD,
        new='''\
def read_records(text, delimiter=","@PARAM@):
    """Read delimited text with a header line into a list of dicts."""
    @CHECK@

    def value(raw):
        @BRANCHES@
        return raw

    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = split_line(lines[0], delimiter)
    records = []
    for number, line in enumerate(lines[1:], start=2):
        values = split_line(line, delimiter)
        if len(values) != len(header):
            raise ValueError(f"line {number} has {len(values)} fields, expected {len(header)}")
        records.append({name: value(raw) for name, raw in zip(header, values)})
    return records
''',
        modes=(
            Mode(
                "numbers",
                "values that look like numbers become int or float, so 7 becomes 7 and "
                "2.50 becomes 2.5; other values stay text",
                'if raw.lstrip("-").isdigit():\n    return int(raw)\ntry:\n'
                "    return float(raw)\nexcept ValueError:\n    pass",
                (
                    ('"id,price,name\\n7,2.50,pen\\n"', '[{"id": 7, "price": 2.5, "name": "pen"}]'),
                    ('"a;b\\n-3;x\\n", ";"', '[{"a": -3, "b": "x"}]'),
                ),
            ),
            Mode(
                "booleans",
                "true and false, in any letter case, become the booleans True and False; "
                "other values stay text",
                'if raw.lower() in ("true", "false"):\n    return raw.lower() == "true"',
                (
                    (
                        '"sku,active\\nA1,true\\nB2,FALSE\\n"',
                        '[{"sku": "A1", "active": True}, {"sku": "B2", "active": False}]',
                    ),
                    ('"x;y\\nyes;true\\n", ";"', '[{"x": "yes", "y": True}]'),
                ),
            ),
            Mode(
                "empty_none",
                "empty fields become None; other values stay text",
                'if raw == "":\n    return None',
                (
                    ('"a,b\\n1,\\n"', '[{"a": "1", "b": None}]'),
                    ('"a;b\\n;x\\n", ";"', '[{"a": None, "b": "x"}]'),
                ),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="csvlite",
    description="a small library that reads and writes delimited text",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("csvlite/legacy.py", "load_csv", "tests/test_legacy.py"),
    rename=Rename(
        "csvlite/reader.py",
        "split_line",
        "split_fields",
        """csvlite.split_fields('a,"b,c"') == ["a", "b,c"]""",
    ),
    dependency="chardet>=5.2",
    next_version="2.2.0",
)
