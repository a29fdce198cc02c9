"""Hidden acceptance tests of coding_B_022 (generated; never shown to agents)."""

import pytest
from csvlite import write_records


def test_default_behaviour_1():
    assert write_records([{"name": "Lee", "qty": 2}], ["name", "qty"]) == '"name","qty"\n"Lee",2\n'


def test_default_behaviour_2():
    assert write_records([{"a": -1.5, "b": "x"}], ["a", "b"], ";") == '"a";"b"\n-1.5;"x"\n'


def test_option_value_1():
    assert write_records([{"name": "Lee", "qty": 2}], ["name", "qty"], quoting='all') == '"name","qty"\n"Lee","2"\n'


def test_option_value_2():
    assert write_records([{"a": 1.5}], ["a"], ";", quoting='all') == '"a"\n"1.5"\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        write_records([{"name": "Lee", "qty": 2}], ["name", "qty"], quoting='no-such-value')
