"""Hidden acceptance tests of coding_E_025 (generated; never shown to agents)."""

import pytest
import re
from csvlite import read_records


def test_default_behaviour_1():
    assert read_records("id,price,name\n7,2.50,pen\n") == [{"id": 7, "price": 2.5, "name": "pen"}]


def test_default_behaviour_2():
    assert read_records("a;b\n-3;x\n", ";") == [{"a": -3, "b": "x"}]


def test_option_value_1():
    assert read_records("a,b\n1,\n", parse_values='empty_none') == [{"a": "1", "b": None}]


def test_option_value_2():
    assert read_records("a;b\n;x\n", ";", parse_values='empty_none') == [{"a": None, "b": "x"}]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unknown value conversion')):
        read_records("id,price,name\n7,2.50,pen\n", parse_values='no-such-value')
