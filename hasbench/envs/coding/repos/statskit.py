"""statskit: descriptive statistics for lists of numbers."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

_PERCENTILE_OLD = '''\
def percentile(values, q):
    """The q-th percentile (0 to 100) of the values, by the nearest-rank method."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be between 0 and 100")
    ordered = sorted(values)
    rank = max(math.ceil(q / 100 * len(ordered)), 1)
    return ordered[rank - 1]
'''

_MOVING_OLD = '''\
def moving_average(values, window):
    """The averages of every complete run of ``window`` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
'''

FILES = {
    **project_files(
        "statskit",
        "0.3.0",
        "Descriptive statistics for lists of numbers",
        ">>> from statskit import mean, percentile\n>>> mean([1, 2, 3])\n2.0\n"
        ">>> percentile([1, 2, 3, 4], 50)\n2\n",
    ),
    "statskit/__init__.py": '''\
"""statskit: descriptive statistics for lists of numbers."""

from statskit._version import __version__
from statskit.describe import mean, median, percentile
from statskit.legacy import average
from statskit.smooth import moving_average

__all__ = [
    "__version__",
    "average",
    "mean",
    "median",
    "moving_average",
    "percentile",
]
''',
    "statskit/describe.py": f'''\
"""Location statistics."""

import math


def mean(values):
    """The arithmetic mean."""
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)


def median(values):
    """The middle value (the mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


{_PERCENTILE_OLD}''',
    "statskit/smooth.py": f'''\
"""Smoothing of series."""


{_MOVING_OLD}''',
    "statskit/legacy.py": deprecated_alias(
        "statskit", "average", "describe.mean", "values", since="0.3", users="0.2"
    ),
    "tests/test_describe.py": """\
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
""",
    "tests/test_smooth.py": """\
from statskit import moving_average


def test_complete_windows():
    assert moving_average([1, 2, 3, 4], 2)[-3:] == [1.5, 2.5, 3.5]
    assert moving_average([1, 2], 1) == [1.0, 2.0]
""",
    "tests/test_legacy.py": """\
import pytest

from statskit import average


def test_average_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert average([2, 4]) == 3.0
""",
}

FEATURES = (
    Feature(
        key="statskit.percentile_method",
        module="statskit/describe.py",
        call="percentile",
        imports="import pytest\n\nfrom statskit import percentile",
        summary="percentile disagrees with the analysts' spreadsheets",
        problem=(
            "percentile uses the nearest-rank method, so its results disagree with the "
            "spreadsheets the analysts check them against."
        ),
        aspect="how percentile computes a percentile that falls between two values",
        fact_key="percentile_method",
        option="method",
        option_names=("interpolation", "estimator", "definition"),
        messages=(
            "unsupported percentile method",
            "unknown estimator",
            "invalid interpolation",
        ),  # fmt: skip
        default_message="unknown method",
        old=_PERCENTILE_OLD,
        new='''\
def percentile(values, q@PARAM@):
    """The q-th percentile (0 to 100) of the values."""
    @CHECK@
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be between 0 and 100")
    ordered = sorted(values)
    position = q / 100 * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    @BRANCHES@
    return result
''',
        modes=(
            Mode(
                "linear",
                "interpolate linearly between the two neighbouring values, as spreadsheets "
                "do, so the 30th percentile of 10, 20, 30, 40, 50 is 22",
                "result = ordered[low] + (ordered[high] - ordered[low]) * (position - low)",
                (
                    ("[10, 20, 30, 40, 50], 30", "pytest.approx(22.0)"),
                    ("[1, 2, 3, 4], 50", "pytest.approx(2.5)"),
                ),
            ),
            Mode(
                "lower",
                "take the lower of the two neighbouring values, so the 70th percentile of "
                "10, 20, 30, 40, 50 is 30",
                "result = ordered[low]",
                (("[10, 20, 30, 40, 50], 70", "30"), ("[5, 1, 3], 99", "3")),
            ),
            Mode(
                "higher",
                "take the higher of the two neighbouring values, so the 30th percentile of "
                "10, 20, 30, 40, 50 is 30",
                "result = ordered[high]",
                (("[10, 20, 30, 40, 50], 30", "30"), ("[1, 2, 3, 4], 10", "2")),
            ),
            Mode(
                "midpoint",
                "take the mean of the two neighbouring values, so the 30th percentile of "
                "10, 20, 30, 40, 50 is 25",
                "result = (ordered[low] + ordered[high]) / 2",
                (("[10, 20, 30, 40, 50], 30", "25.0"), ("[1, 2, 3, 4], 50", "2.5")),
            ),
        ),
    ),
    Feature(
        key="statskit.window_edges",
        module="statskit/smooth.py",
        call="moving_average",
        imports="from statskit import moving_average",
        summary="moving_average returns a shorter series",
        problem=(
            "moving_average returns fewer values than it gets (one per complete window), "
            "so its result cannot be plotted against the original series."
        ),
        aspect="what moving_average gives for the first values, before a window is complete",
        fact_key="incomplete_windows",
        option="edges",
        option_names=("partial", "incomplete", "start_values"),
        messages=(
            "unsupported edge handling",
            "unknown partial window rule",
            "invalid edges",
        ),  # fmt: skip
        default_message="unknown edge handling",
        old=_MOVING_OLD,
        new='''\
def moving_average(values, window@PARAM@):
    """Averages of ``window`` consecutive values, one for each value of the series."""
    @CHECK@
    if window < 1:
        raise ValueError("window must be at least 1")
    result = []
    for end in range(1, len(values) + 1):
        chunk = values[max(0, end - window) : end]
        @BRANCHES@
    return result
''',
        modes=(
            Mode(
                "shrink",
                "the average of the values seen so far, so for 3, 6, 9 with a window of 3 the "
                "result is 3.0, 4.5, 6.0",
                "result.append(sum(chunk) / len(chunk))",
                (("[2, 4, 6, 8], 2", "[2.0, 3.0, 5.0, 7.0]"), ("[3, 6, 9], 3", "[3.0, 4.5, 6.0]")),
            ),
            Mode(
                "none",
                "None until the window is complete, so for 3, 6, 9 with a window of 3 the "
                "result is None, None, 6.0",
                "result.append(sum(chunk) / window if len(chunk) == window else None)",
                (
                    ("[2, 4, 6, 8], 2", "[None, 3.0, 5.0, 7.0]"),
                    ("[3, 6, 9], 3", "[None, None, 6.0]"),
                ),
            ),
            Mode(
                "pad_first",
                "the missing values are taken to be the first value, so for 3, 6, 9 with a "
                "window of 3 the result is 3.0, 4.0, 6.0",
                "padded = [values[0]] * (window - len(chunk)) + chunk\n"
                "result.append(sum(padded) / window)",
                (("[3, 6, 9], 3", "[3.0, 4.0, 6.0]"), ("[0, 6, 3, 3], 3", "[0.0, 2.0, 3.0, 4.0]")),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="statskit",
    description="a small library of descriptive statistics",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("statskit/legacy.py", "average", "tests/test_legacy.py"),
    rename=Rename(
        "statskit/smooth.py",
        "moving_average",
        "rolling_mean",
        "statskit.rolling_mean([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]",
    ),  # fmt: skip
    dependency="numpy>=1.26",
    next_version="0.4.0",
)
