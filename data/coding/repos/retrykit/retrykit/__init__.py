"""retrykit: when and how long to wait before retrying a request."""

from retrykit._version import __version__
from retrykit.delays import delays
from retrykit.legacy import wait_times
from retrykit.policy import should_retry

__all__ = [
    "__version__",
    "delays",
    "should_retry",
    "wait_times",
]
