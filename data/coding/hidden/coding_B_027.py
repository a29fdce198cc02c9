"""Hidden acceptance tests of coding_B_027 (generated; never shown to agents)."""

import pytest
from statskit import moving_average


def test_default_behaviour_1():
    assert moving_average([2, 4, 6, 8], 2) == [None, 3.0, 5.0, 7.0]


def test_default_behaviour_2():
    assert moving_average([3, 6, 9], 3) == [None, None, 6.0]


def test_option_value_1():
    assert moving_average([3, 6, 9], 3, edges='pad_first') == [3.0, 4.0, 6.0]


def test_option_value_2():
    assert moving_average([0, 6, 3, 3], 3, edges='pad_first') == [0.0, 2.0, 3.0, 4.0]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        moving_average([2, 4, 6, 8], 2, edges='no-such-value')
