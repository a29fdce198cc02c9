"""Hidden acceptance tests of coding_E_029 (generated; never shown to agents)."""

import pytest
import re
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", 2]], ["item", "qty"]) == '| item | qty |\n| ---- | --- |\n| pen  | 2   |\n'


def test_default_behaviour_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"]) == '| k  | v  |\n| -- | -- |\n| a  | 1  |\n| bb | 22 |\n'


def test_option_value_1():
    assert render([["pen", 2]], ["item", "qty"], layout='grid') == '+------+-----+\n| item | qty |\n+------+-----+\n' '| pen  | 2   |\n+------+-----+\n'


def test_option_value_2():
    assert render([["a", 1], ["bb", 22]], ["k", "v"], layout='grid') == '+----+----+\n| k  | v  |\n+----+----+\n' '| a  | 1  |\n| bb | 22 |\n+----+----+\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported table style')):
        render([["pen", 2]], ["item", "qty"], layout='no-such-value')
