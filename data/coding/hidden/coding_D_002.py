"""Hidden acceptance tests of coding_D_002 (generated; never shown to agents)."""

import pytest
from csvlite import read_records


def test_default_behaviour_1():
    assert read_records("a,b\n1,\n") == [{"a": "1", "b": None}]


def test_default_behaviour_2():
    assert read_records("a;b\n;x\n", ";") == [{"a": None, "b": "x"}]


def test_option_value_1():
    assert read_records("sku,active\nA1,true\nB2,FALSE\n", convert='booleans') == [{"sku": "A1", "active": True}, {"sku": "B2", "active": False}]


def test_option_value_2():
    assert read_records("x;y\nyes;true\n", ";", convert='booleans') == [{"x": "yes", "y": True}]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        read_records("a,b\n1,\n", convert='no-such-value')
