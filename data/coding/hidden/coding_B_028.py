"""Hidden acceptance tests of coding_B_028 (generated; never shown to agents)."""

import pytest
from statskit import percentile


def test_default_behaviour_1():
    assert percentile([10, 20, 30, 40, 50], 30) == pytest.approx(22.0)


def test_default_behaviour_2():
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)


def test_option_value_1():
    assert percentile([10, 20, 30, 40, 50], 70, method='lower') == 30


def test_option_value_2():
    assert percentile([5, 1, 3], 99, method='lower') == 3


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        percentile([10, 20, 30, 40, 50], 30, method='no-such-value')
