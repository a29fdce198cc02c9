"""Hidden acceptance tests of coding_E_016 (generated; never shown to agents)."""

import pytest
import re
from retrykit import delays


def test_default_behaviour_1():
    assert delays(4) == [1.0, 2.0, 3.0, 4.0]


def test_default_behaviour_2():
    assert delays(3, 0.5, 1.0) == [0.5, 1.0, 1.0]


def test_option_value_1():
    assert delays(4, growth='exponential') == [1.0, 2.0, 4.0, 8.0]


def test_option_value_2():
    assert delays(5, 2.0, 10.0, growth='exponential') == [2.0, 4.0, 8.0, 10.0, 10.0]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported strategy')):
        delays(4, growth='no-such-value')
