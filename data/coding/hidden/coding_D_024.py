"""Hidden acceptance tests of coding_D_024 (generated; never shown to agents)."""

import pytest
from statskit import percentile


def test_default_behaviour_1():
    assert percentile([10, 20, 30, 40, 50], 30) == 25.0


def test_default_behaviour_2():
    assert percentile([1, 2, 3, 4], 50) == 2.5


def test_option_value_1():
    assert percentile([10, 20, 30, 40, 50], 30, method='higher') == 30


def test_option_value_2():
    assert percentile([1, 2, 3, 4], 10, method='higher') == 2


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        percentile([10, 20, 30, 40, 50], 30, method='no-such-value')
