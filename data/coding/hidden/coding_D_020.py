"""Hidden acceptance tests of coding_D_020 (generated; never shown to agents)."""

import pytest
from retrykit import delays


def test_default_behaviour_1():
    assert delays(4) == [1.0, 2.0, 3.0, 4.0]


def test_default_behaviour_2():
    assert delays(3, 0.5, 1.0) == [0.5, 1.0, 1.0]


def test_option_value_1():
    assert delays(4, strategy='exponential') == [1.0, 2.0, 4.0, 8.0]


def test_option_value_2():
    assert delays(5, 2.0, 10.0, strategy='exponential') == [2.0, 4.0, 8.0, 10.0, 10.0]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        delays(4, strategy='no-such-value')
