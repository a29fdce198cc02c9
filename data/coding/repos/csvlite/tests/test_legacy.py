import pytest

from csvlite import load_csv


def test_load_csv_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert load_csv("a\nx\n") == [{"a": "x"}]
