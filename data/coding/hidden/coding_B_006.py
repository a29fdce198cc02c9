"""Hidden acceptance tests of coding_B_006 (generated; never shown to agents)."""

import pytest
from csvlite import read_records


def test_default_behaviour_1():
    assert read_records("sku,active\nA1,true\nB2,FALSE\n") == [{"sku": "A1", "active": True}, {"sku": "B2", "active": False}]


def test_default_behaviour_2():
    assert read_records("x;y\nyes;true\n", ";") == [{"x": "yes", "y": True}]


def test_option_value_1():
    assert read_records("a,b\n1,\n", convert='empty_none') == [{"a": "1", "b": None}]


def test_option_value_2():
    assert read_records("a;b\n;x\n", ";", convert='empty_none') == [{"a": None, "b": "x"}]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        read_records("sku,active\nA1,true\nB2,FALSE\n", convert='no-such-value')
