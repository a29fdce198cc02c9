import pytest

from statskit import mean, median, percentile


def test_mean_and_median():
    assert mean([1, 2, 3, 4]) == 2.5
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_percentile_extremes():
    assert percentile([5, 1, 3], 0) == 1
    assert percentile([5, 1, 3], 100) == 5


def test_percentile_needs_values():
    with pytest.raises(ValueError):
        percentile([], 50)
