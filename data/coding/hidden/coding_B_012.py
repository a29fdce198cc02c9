"""Hidden acceptance tests of coding_B_012 (generated; never shown to agents)."""

import pytest
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", 2], ["notebook", 12]], ["item", "qty"]) == '    item  qty\n     pen    2\nnotebook   12\n'


def test_default_behaviour_2():
    assert render([["a", 100]], ["name", "n"]) == 'name    n\n   a  100\n'


def test_option_value_1():
    assert render([["pen", 2], ["notebook", 12]], ["item", "qty"], align='numbers_right') == 'item      qty\npen         2\nnotebook   12\n'


def test_option_value_2():
    assert render([["a", 5]], ["name", "total"], align='numbers_right') == 'name  total\na         5\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        render([["pen", 2], ["notebook", 12]], ["item", "qty"], align='no-such-value')
