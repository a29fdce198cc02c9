"""Hidden acceptance tests of coding_B_024 (generated; never shown to agents)."""

import pytest
from retrykit import delays


def test_default_behaviour_1():
    assert delays(3) == [1.0, 4.0, 9.0]


def test_default_behaviour_2():
    assert delays(3, 0.5, 2.0) == [0.5, 2.0, 2.0]


def test_option_value_1():
    assert delays(4, strategy='linear') == [1.0, 2.0, 3.0, 4.0]


def test_option_value_2():
    assert delays(3, 0.5, 1.0, strategy='linear') == [0.5, 1.0, 1.0]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        delays(3, strategy='no-such-value')
