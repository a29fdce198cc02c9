"""Hidden acceptance tests of coding_B_010 (generated; never shown to agents)."""

import pytest
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", 2]], ["item", "qty"]) == '+------+-----+\n| item | qty |\n+------+-----+\n' '| pen  | 2   |\n+------+-----+\n'


def test_default_behaviour_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"]) == '+----+----+\n| k  | v  |\n+----+----+\n' '| a  | 1  |\n| bb | 22 |\n+----+----+\n'


def test_option_value_1():
    assert render([["pen", 2]], ["item", "qty"], style='markdown') == '| item | qty |\n| ---- | --- |\n| pen  | 2   |\n'


def test_option_value_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"], style='markdown') == '| k  | v  |\n| -- | -- |\n| a  | 1  |\n| bb | 22 |\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        render([["pen", 2]], ["item", "qty"], style='no-such-value')
