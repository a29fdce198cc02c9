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
