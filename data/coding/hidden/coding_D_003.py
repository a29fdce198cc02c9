"""Hidden acceptance tests of coding_D_003 (generated; never shown to agents)."""

import pytest
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", None]], ["item", "qty"]) == 'item  qty\npen   ?\n'


def test_default_behaviour_2():
    assert render([[None, 3]], ["a", "b"]) == 'a  b\n?  3\n'


def test_option_value_1():
    assert render([["pen", None]], ["item", "qty"], missing='empty') == 'item  qty\npen\n'


def test_option_value_2():
    assert render([[None, 3]], ["a", "b"], missing='empty') == 'a  b\n   3\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        render([["pen", None]], ["item", "qty"], missing='no-such-value')
