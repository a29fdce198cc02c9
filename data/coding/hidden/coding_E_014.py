"""Hidden acceptance tests of coding_E_014 (generated; never shown to agents)."""

import pytest
import re
from csvlite import write_records


def test_default_behaviour_1():
    assert write_records([{"name": "Lee, Ann", "qty": 2}], ["name", "qty"]) == 'name,qty\n"Lee, Ann",2\n'


def test_default_behaviour_2():
    assert write_records([{"note": "2;5"}], ["note"], ";") == 'note\n"2;5"\n'


def test_option_value_1():
    assert write_records([{"name": "Lee", "qty": 2}], ["name", "qty"], quote_mode='nonnumeric') == '"name","qty"\n"Lee",2\n'


def test_option_value_2():
    assert write_records([{"a": -1.5, "b": "x"}], ["a", "b"], ";", quote_mode='nonnumeric') == '"a";"b"\n-1.5;"x"\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unknown quote style')):
        write_records([{"name": "Lee, Ann", "qty": 2}], ["name", "qty"], quote_mode='no-such-value')
