"""Hidden acceptance tests of coding_E_002 (generated; never shown to agents)."""

import pytest
import re
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", 2]], ["item", "qty"]) == 'item\tqty\npen\t2\n'


def test_default_behaviour_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"]) == 'k\tv\na\t1\nbb\t22\n'


def test_option_value_1():
    assert render([["pen", 2]], ["item", "qty"], layout='markdown') == '| item | qty |\n| ---- | --- |\n| pen  | 2   |\n'


def test_option_value_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"], layout='markdown') == '| k  | v  |\n| -- | -- |\n| a  | 1  |\n| bb | 22 |\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported table style')):
        render([["pen", 2]], ["item", "qty"], layout='no-such-value')
