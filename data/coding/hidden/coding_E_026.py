"""Hidden acceptance tests of coding_E_026 (generated; never shown to agents)."""

import pytest
import re
from tablefmt import render


def test_default_behaviour_1():
    assert render([["pen", None]], ["item", "qty"]) == 'item  qty\npen   n/a\n'


def test_default_behaviour_2():
    assert render([[None, 3]], ["a", "b"]) == 'a    b\nn/a  3\n'


def test_option_value_1():
    assert render([["pen", None]], ["item", "qty"], none_as='dash') == 'item  qty\npen   -\n'


def test_option_value_2():
    assert render([[None, 3]], ["a", "b"], none_as='dash') == 'a  b\n-  3\n'


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid blank')):
        render([["pen", None]], ["item", "qty"], none_as='no-such-value')
