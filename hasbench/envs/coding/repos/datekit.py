"""datekit: parsing dates, counting working days, describing durations."""

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
        "datekit",
        "0.9.4",
        "Parse dates, count working days and describe durations",
        ">>> from datetime import date\n>>> from datekit import add_business_days, parse_date\n"
        ">>> add_business_days(date(2024, 3, 1), 1)\ndatetime.date(2024, 3, 4)\n"
        '>>> parse_date("2024-12-31")\ndatetime.date(2024, 12, 31)\n',
    ),
    "datekit/__init__.py": '''\
"""datekit: parse dates, count working days and describe durations."""

from datekit._version import __version__
from datekit.business import add_business_days, is_business_day
from datekit.humanize import describe_duration
from datekit.legacy import to_date
from datekit.parse import parse_date

__all__ = [
    "__version__",
    "add_business_days",
    "describe_duration",
    "is_business_day",
    "parse_date",
    "to_date",
]
''',
    "datekit/parse.py": '''\
"""Parsing dates from text."""

import re
from datetime import date

_ISO = re.compile(r"^(\\d{4})-(\\d{2})-(\\d{2})$")


def parse_date(text):
    """Parse an ISO 8601 calendar date such as ``2024-12-31``; other formats are rejected."""
    match = _ISO.match(text.strip())
    if match is None:
        raise ValueError(f"unsupported date format: {text!r}")
    year, month, day = (int(part) for part in match.groups())
    return date(year, month, day)
''',
    "datekit/business.py": '''\
"""Working days."""

from datetime import timedelta


def is_business_day(day, holidays=()):
    """Whether a date is a working day: Monday to Friday and not a holiday."""
    return day.weekday() < 5 and day not in holidays


def add_business_days(start, days, holidays=()):
    """The date ``days`` working days after ``start`` (Saturday and Sunday are off)."""
    if days < 0:
        raise ValueError("days must not be negative")
    current = start
    while days:
        current += timedelta(days=1)
        if is_business_day(current, holidays):
            days -= 1
    return current
''',
    "datekit/humanize.py": '''\
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
''',
    "datekit/legacy.py": deprecated_alias(
        "datekit", "to_date", "parse.parse_date", "text", since="0.8", users="0.x"
    ),
    "tests/test_parse.py": """\
from datetime import date

import pytest

from datekit import parse_date


def test_iso_dates():
    assert parse_date("2024-02-29") == date(2024, 2, 29)
    assert parse_date(" 1999-12-31 ") == date(1999, 12, 31)


def test_rejects_other_text():
    with pytest.raises(ValueError):
        parse_date("yesterday")
""",
    "tests/test_business.py": """\
from datetime import date

from datekit import add_business_days, is_business_day


def test_midweek_days():
    monday = date(2024, 3, 4)
    assert add_business_days(monday, 2) == date(2024, 3, 6)
    assert add_business_days(monday, 0) == monday


def test_holidays_are_skipped():
    assert not is_business_day(date(2024, 3, 4), holidays={date(2024, 3, 4)})
    tuesday = date(2024, 3, 5)
    assert add_business_days(tuesday, 1, holidays={date(2024, 3, 6)}) == date(2024, 3, 7)
""",
    "tests/test_humanize.py": """\
import pytest

from datekit import describe_duration


def test_negative_durations_are_rejected():
    with pytest.raises(ValueError):
        describe_duration(-1)
""",
    "tests/test_legacy.py": """\
from datetime import date

import pytest

from datekit import to_date


def test_to_date_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert to_date("2020-01-02") == date(2020, 1, 2)
""",
}

FEATURES = (
    Feature(
        key="datekit.date_order",
        module="datekit/parse.py",
        call="parse_date",
        imports="from datetime import date\n\nfrom datekit import parse_date",
        summary="parse_date rejects the dates in our partner files",
        problem=(
            "parse_date accepts only ISO dates, but the files from a partner write dates "
            "with dots or slashes, such as 05/03/2023, which parse_date rejects."
        ),
        aspect="in which order day, month and year appear in such dates",
        fact_key="date_order",
        option="order",
        option_names=("field_order", "date_layout", "sequence"),
        messages=("unsupported date order", "unknown field order", "invalid date layout"),
        default_message="unknown date order",
        old='''\
def parse_date(text):
    """Parse an ISO 8601 calendar date such as ``2024-12-31``; other formats are rejected."""
    match = _ISO.match(text.strip())
    if match is None:
        raise ValueError(f"unsupported date format: {text!r}")
    year, month, day = (int(part) for part in match.groups())
    return date(year, month, day)
''',
        new='''\
def parse_date(text@PARAM@):
    """Parse a date: ISO 8601 (``2024-12-31``) or numbers separated by dots or slashes."""
    @CHECK@
    text = text.strip()
    match = _ISO.match(text)
    if match is not None:
        year, month, day = (int(part) for part in match.groups())
        return date(year, month, day)
    parts = re.split(r"[./]", text)
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"unsupported date format: {text!r}")
    @BRANCHES@
    return date(int(year), int(month), int(day))
''',
        modes=(
            Mode(
                "dmy",
                "day first, then month and year, so 05/03/2023 is 5 March 2023 and "
                "31.12.2024 is New Year's Eve",
                "day, month, year = parts",
                (("'31.12.2024'", "date(2024, 12, 31)"), ("'05/03/2023'", "date(2023, 3, 5)")),
            ),
            Mode(
                "mdy",
                "month first, then day and year, so 05/03/2023 is 3 May 2023 and "
                "12/31/2024 is New Year's Eve",
                "month, day, year = parts",
                (("'12/31/2024'", "date(2024, 12, 31)"), ("'05/03/2023'", "date(2023, 5, 3)")),
            ),
            Mode(
                "ymd",
                "year first, then month and day, so 2023.03.05 is 5 March 2023 and "
                "2024/12/31 is New Year's Eve",
                "year, month, day = parts",
                (("'2024/12/31'", "date(2024, 12, 31)"), ("'2023.03.05'", "date(2023, 3, 5)")),
            ),
        ),
    ),
    Feature(
        key="datekit.weekend",
        module="datekit/business.py",
        call="add_business_days",
        imports="from datetime import date\n\nfrom datekit import add_business_days",
        summary="add_business_days assumes a Saturday-Sunday weekend",
        problem=(
            "add_business_days always treats Saturday and Sunday as the days off, which is "
            "wrong for our offices abroad."
        ),
        aspect="which days of the week are days off",
        fact_key="days_off",
        option="weekend",
        option_names=("weekend_days", "rest_days", "week_shape"),
        messages=("unsupported weekend", "unknown days off", "invalid weekend"),
        default_message="unknown weekend",
        old='''\
def add_business_days(start, days, holidays=()):
    """The date ``days`` working days after ``start`` (Saturday and Sunday are off)."""
    if days < 0:
        raise ValueError("days must not be negative")
    current = start
    while days:
        current += timedelta(days=1)
        if is_business_day(current, holidays):
            days -= 1
    return current
''',
        new='''\
def add_business_days(start, days, holidays=()@PARAM@):
    """The date ``days`` working days after ``start``."""
    @CHECK@
    if days < 0:
        raise ValueError("days must not be negative")
    @BRANCHES@
    current = start
    while days:
        current += timedelta(days=1)
        if current.weekday() not in off_days and current not in holidays:
            days -= 1
    return current
''',
        modes=(
            Mode(
                "fri_sat",
                "Friday and Saturday are off, so one working day after Thursday 4 January "
                "2024 is Sunday 7 January",
                "off_days = (4, 5)",
                (
                    ("date(2024, 1, 4), 1", "date(2024, 1, 7)"),
                    ("date(2024, 1, 3), 2", "date(2024, 1, 7)"),
                ),
            ),
            Mode(
                "sun_only",
                "only Sunday is off, so one working day after Friday 5 January 2024 is "
                "Saturday 6 January",
                "off_days = (6,)",
                (
                    ("date(2024, 1, 5), 1", "date(2024, 1, 6)"),
                    ("date(2024, 1, 4), 3", "date(2024, 1, 8)"),
                ),
            ),
            Mode(
                "sat_only",
                "only Saturday is off, so one working day after Friday 5 January 2024 is "
                "Sunday 7 January",
                "off_days = (5,)",
                (
                    ("date(2024, 1, 5), 1", "date(2024, 1, 7)"),
                    ("date(2024, 1, 5), 2", "date(2024, 1, 8)"),
                ),
            ),
        ),
    ),
    Feature(
        key="datekit.duration_style",
        module="datekit/humanize.py",
        call="describe_duration",
        imports="from datekit import describe_duration",
        summary="describe_duration is too coarse",
        problem=(
            "describe_duration only names the largest whole unit (7500 seconds are "
            "2 hours), which the dashboard team finds too coarse or too wordy."
        ),
        aspect="how durations are described",
        fact_key="duration_wording",
        option="style",
        option_names=("wording", "precision", "presentation"),
        messages=("unsupported duration style", "unknown wording", "invalid presentation"),
        default_message="unknown style",
        old='''\
def describe_duration(seconds):
    """Describe a duration by its largest whole unit: 7500 seconds are ``"2 hours"``."""
    if seconds < 0:
        raise ValueError("durations are not negative")
    for name, size in _UNITS:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {name}" + ("s" if count != 1 else "")
    return "0 seconds"
''',
        new='''\
def describe_duration(seconds@PARAM@):
    """Describe a duration in words."""
    @CHECK@
    if seconds < 0:
        raise ValueError("durations are not negative")
    parts = []
    rest = int(seconds)
    for name, size in _UNITS:
        count, rest = divmod(rest, size)
        parts.append((name, count))
    nonzero = [(name, count) for name, count in parts if count] or [("second", 0)]
    @BRANCHES@
    return text
''',
        modes=(
            Mode(
                "short",
                "only the largest unit, abbreviated to its first letter, so 7500 seconds read 2h",
                'name, count = nonzero[0]\ntext = f"{count}{name[0]}"',
                (("7500", '"2h"'), ("90061", '"1d"')),
            ),
            Mode(
                "two_units",
                "the two largest units that are not zero, in words, so 7500 seconds read "
                "2 hours 5 minutes",
                'text = " ".join(\n    f"{count} {name}" + ("s" if count != 1 else "") '
                "for name, count in nonzero[:2]\n)",
                (("7500", '"2 hours 5 minutes"'), ("90061", '"1 day 1 hour"')),
            ),
            Mode(
                "clock",
                "hours, minutes and seconds like a clock, so 7500 seconds read 2:05:00",
                "hours, remainder = divmod(int(seconds), 3600)\n"
                "minutes, secs = divmod(remainder, 60)\n"
                'text = f"{hours}:{minutes:02d}:{secs:02d}"',
                (("7500", '"2:05:00"'), ("90061", '"25:01:01"')),
            ),
            Mode(
                "rounded",
                "the largest unit rounded to the nearest whole number, so 9000 seconds read "
                "3 hours",
                'name, size = next(((n, s) for n, s in _UNITS if seconds >= s), ("second", 1))\n'
                "count = int(seconds / size + 0.5)\n"
                'text = f"{count} {name}" + ("s" if count != 1 else "")',
                (("9000", '"3 hours"'), ("5400", '"2 hours"')),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="datekit",
    description="a small library that parses dates, counts working days and describes durations",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("datekit/legacy.py", "to_date", "tests/test_legacy.py"),
    rename=Rename(
        "datekit/humanize.py",
        "describe_duration",
        "humanize_duration",
        'datekit.humanize_duration(3600) == "1 hour"',
    ),
    dependency="python-dateutil>=2.9",
    next_version="1.0.0",
)
