"""Hidden acceptance tests of coding_D_006 (generated; never shown to agents)."""

import pytest
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", 2]], ["item", "qty"]) == '| item | qty |\n| ---- | --- |\n| pen  | 2   |\n'


def test_default_behaviour_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"]) == '| k  | v  |\n| -- | -- |\n| a  | 1  |\n| bb | 22 |\n'


def test_option_value_1():
    assert render([["pen", 2]], ["item", "qty"], style='tsv') == 'item\tqty\npen\t2\n'


def test_option_value_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"], style='tsv') == 'k\tv\na\t1\nbb\t22\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        render([["pen", 2]], ["item", "qty"], style='no-such-value')
