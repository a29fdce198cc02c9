"""Hidden acceptance tests of coding_D_018 (generated; never shown to agents)."""

import pytest
from csvlite import write_records


def test_default_behaviour_1():
    assert write_records([{"name": "Lee, Ann", "qty": 2}], ["name", "qty"]) == 'name,qty\n"Lee, Ann",2\n'


def test_default_behaviour_2():
    assert write_records([{"note": "2;5"}], ["note"], ";") == 'note\n"2;5"\n'


def test_option_value_1():
    assert write_records([{"name": "Lee", "qty": 2}], ["name", "qty"], quoting='all') == '"name","qty"\n"Lee","2"\n'


def test_option_value_2():
    assert write_records([{"a": 1.5}], ["a"], ";", quoting='all') == '"a"\n"1.5"\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        write_records([{"name": "Lee, Ann", "qty": 2}], ["name", "qty"], quoting='no-such-value')
