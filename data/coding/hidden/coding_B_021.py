"""Hidden acceptance tests of coding_B_021 (generated; never shown to agents)."""

import pytest
from csvlite import read_records


def test_default_behaviour_1():
    assert read_records("a,b,c\n1,2\n") == [{"a": "1", "b": "2", "c": None}]


def test_default_behaviour_2():
    assert read_records("x;y\n7\n8;9\n", ";") == [{"x": "7", "y": None}, {"x": "8", "y": "9"}]


def test_option_value_1():
    assert read_records("a,b,c\n1,2\n3,4,5\n", short_rows='skip') == [{"a": "3", "b": "4", "c": "5"}]


def test_option_value_2():
    assert read_records("x;y\n7\n", ";", short_rows='skip') == []


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        read_records("a,b,c\n1,2\n", short_rows='no-such-value')
