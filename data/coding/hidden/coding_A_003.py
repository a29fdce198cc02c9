"""Hidden acceptance tests of coding_A_003 (generated; never shown to agents)."""

from csvlite import read_records


def test_default_behaviour_1():
    assert read_records("a,b,c\n1,2\n") == [{"a": "1", "b": "2", "c": ""}]


def test_default_behaviour_2():
    assert read_records("x;y\n7\n8;9\n", ";") == [{"x": "7", "y": ""}, {"x": "8", "y": "9"}]
