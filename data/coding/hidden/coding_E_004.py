"""Hidden acceptance tests of coding_E_004 (generated; never shown to agents)."""

import pytest
import re
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", 2], ["notebook", 12]], ["item", "qty"]) == '  item    qty\n  pen      2\nnotebook   12\n'


def test_default_behaviour_2():
    assert render([["a", 100]], ["name", "n"]) == 'name   n\n a    100\n'


def test_option_value_1():
    assert render([["pen", 2], ["notebook", 12]], ["item", "qty"], alignment='right') == '    item  qty\n     pen    2\nnotebook   12\n'


def test_option_value_2():
    assert render([["a", 100]], ["name", "n"], alignment='right') == 'name    n\n   a  100\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unknown justification')):
        render([["pen", 2], ["notebook", 12]], ["item", "qty"], alignment='no-such-value')
