"""Hidden acceptance tests of coding_E_013 (generated; never shown to agents)."""

import pytest
import re
from csvlite import read_records


def test_default_behaviour_1():
    assert read_records("a,b,c\n1,2\n3,4,5\n") == [{"a": "3", "b": "4", "c": "5"}]


def test_default_behaviour_2():
    assert read_records("x;y\n7\n", ";") == []


def test_option_value_1():
    assert read_records("a,b,c\n1,2\n", missing_fields='none') == [{"a": "1", "b": "2", "c": None}]


def test_option_value_2():
    assert read_records("x;y\n7\n8;9\n", ";", missing_fields='none') == [{"x": "7", "y": None}, {"x": "8", "y": "9"}]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid short row option')):
        read_records("a,b,c\n1,2\n3,4,5\n", missing_fields='no-such-value')
