from datetime import date

import pytest

from datekit import parse_date


def test_iso_dates():
    assert parse_date("2024-02-29") == date(2024, 2, 29)
    assert parse_date(" 1999-12-31 ") == date(1999, 12, 31)


def test_rejects_other_text():
    with pytest.raises(ValueError):
        parse_date("yesterday")
