"""Hidden acceptance tests of coding_A_004 (generated; never shown to agents)."""

from csvlite import write_records


def test_default_behaviour_1():
    assert write_records([{"name": "Lee, Ann", "qty": 2}], ["name", "qty"]) == 'name,qty\n"Lee, Ann",2\n'


def test_default_behaviour_2():
    assert write_records([{"note": "2;5"}], ["note"], ";") == 'note\n"2;5"\n'
