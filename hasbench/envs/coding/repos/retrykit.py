"""retrykit: when and how long to wait before retrying a request."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

FILES = {
    **project_files(
        "retrykit",
        "0.7.0",
        "When and how long to wait before retrying a request",
        ">>> from retrykit import delays, should_retry\n>>> delays(3)\n[1.0, 1.0, 1.0]\n"
        ">>> should_retry(503)\nTrue\n",
    ),
    "retrykit/__init__.py": '''\
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
''',
    "retrykit/delays.py": '''\
"""Waiting times between retries."""


def delays(attempts, base=1.0, cap=None):
    """The seconds to wait before each of ``attempts`` retries: ``base`` every time.

    ``cap`` (an upper bound for a single wait) is accepted but not used yet.
    """
    if attempts < 0:
        raise ValueError("attempts must not be negative")
    return [float(base)] * attempts
''',
    "retrykit/policy.py": '''\
"""Which failures are worth retrying."""


def should_retry(status):
    """Whether a request that ended with this HTTP status should be retried (only 503)."""
    return status == 503
''',
    "retrykit/legacy.py": deprecated_alias(
        "retrykit", "wait_times", "delays.delays", "attempts", since="0.7", users="0.6"
    ),
    "tests/test_delays.py": """\
import pytest

from retrykit import delays


def test_first_delay_is_base():
    assert delays(1, base=0.5) == [0.5]
    assert delays(0) == []


def test_negative_attempts():
    with pytest.raises(ValueError):
        delays(-1)
""",
    "tests/test_policy.py": """\
from retrykit import should_retry


def test_only_service_unavailable_is_retried():
    assert should_retry(503)
    assert not should_retry(404)
""",
    "tests/test_legacy.py": """\
import pytest

from retrykit import wait_times


def test_wait_times_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert wait_times(1) == [1.0]
""",
}

_RETRIED_HELPER = """\
def retried(statuses, **options):
    return [status for status in statuses if should_retry(status, **options)]
"""

FEATURES = (
    Feature(
        key="retrykit.growth",
        module="retrykit/delays.py",
        call="delays",
        imports="from retrykit import delays",
        summary="Retries hammer a struggling service",
        problem=(
            "delays waits the same time before every retry and ignores cap, so clients "
            "retry a struggling service at full speed."
        ),
        aspect="how the waiting time grows from one retry to the next",
        fact_key="delay_growth",
        option="strategy",
        option_names=("growth", "schedule", "progression"),
        messages=("unsupported strategy", "unknown delay growth", "invalid schedule"),
        default_message="unknown strategy",
        old='''\
def delays(attempts, base=1.0, cap=None):
    """The seconds to wait before each of ``attempts`` retries: ``base`` every time.

    ``cap`` (an upper bound for a single wait) is accepted but not used yet.
    """
    if attempts < 0:
        raise ValueError("attempts must not be negative")
    return [float(base)] * attempts
''',
        new='''\
def delays(attempts, base=1.0, cap=None@PARAM@):
    """The seconds to wait before each of ``attempts`` retries, never more than ``cap``."""
    @CHECK@
    if attempts < 0:
        raise ValueError("attempts must not be negative")
    result = []
    for number in range(1, attempts + 1):
        @BRANCHES@
        result.append(float(wait if cap is None else min(wait, cap)))
    return result
''',
        modes=(
            Mode(
                "linear",
                "the wait grows by base each time, so with base 1 the waits are 1, 2, 3, 4 seconds",
                "wait = base * number",
                (("4", "[1.0, 2.0, 3.0, 4.0]"), ("3, 0.5, 1.0", "[0.5, 1.0, 1.0]")),
            ),
            Mode(
                "exponential",
                "the wait doubles each time, so with base 1 the waits are 1, 2, 4, 8 seconds",
                "wait = base * 2 ** (number - 1)",
                (("4", "[1.0, 2.0, 4.0, 8.0]"), ("5, 2.0, 10.0", "[2.0, 4.0, 8.0, 10.0, 10.0]")),
            ),
            Mode(
                "fibonacci",
                "the waits follow the Fibonacci numbers times base, so with base 1 they are "
                "1, 1, 2, 3, 5 seconds",
                "previous, current = 0, 1\nfor _ in range(number - 1):\n"
                "    previous, current = current, previous + current\nwait = base * current",
                (("5", "[1.0, 1.0, 2.0, 3.0, 5.0]"), ("4, 0.5", "[0.5, 0.5, 1.0, 1.5]")),
            ),
            Mode(
                "quadratic",
                "the wait is base times the square of the retry number, so with base 1 the "
                "waits are 1, 4, 9 seconds",
                "wait = base * number**2",
                (("3", "[1.0, 4.0, 9.0]"), ("3, 0.5, 2.0", "[0.5, 2.0, 2.0]")),
            ),
        ),
    ),
    Feature(
        key="retrykit.retryable",
        module="retrykit/policy.py",
        call="retried",
        imports="from retrykit import should_retry",
        helper=_RETRIED_HELPER,
        summary="should_retry gives up on failures that are worth retrying",
        problem=(
            "should_retry only retries 503 Service Unavailable, so requests that fail with "
            "other temporary errors are given up at once."
        ),
        aspect="which HTTP status codes should_retry retries",
        fact_key="retryable_statuses",
        option="retry_on",
        option_names=("retry_statuses", "status_class", "retry_policy"),
        messages=("unsupported retry set", "unknown status class", "invalid retry policy"),
        default_message="unknown retry set",
        old='''\
def should_retry(status):
    """Whether a request that ended with this HTTP status should be retried (only 503)."""
    return status == 503
''',
        new='''\
def should_retry(status@PARAM@):
    """Whether a request that ended with this HTTP status should be retried."""
    @CHECK@
    @BRANCHES@
    return retryable
''',
        modes=(
            Mode(
                "server_errors",
                "every 5xx server error is retried (500 to 599) and nothing else",
                "retryable = 500 <= status <= 599",
                (
                    ("[408, 429, 500, 502, 503, 504, 599]", "[500, 502, 503, 504, 599]"),
                    ("[200, 404, 501]", "[501]"),
                ),
            ),
            Mode(
                "throttling",
                "only the throttling answers 429 Too Many Requests and 503 are retried",
                "retryable = status in (429, 503)",
                (
                    ("[408, 429, 500, 502, 503, 504]", "[429, 503]"),
                    ("[429, 429, 400]", "[429, 429]"),
                ),
            ),  # fmt: skip
            Mode(
                "transient",
                "the transient failures 408, 429, 502, 503 and 504 are retried",
                "retryable = status in (408, 429, 502, 503, 504)",
                (
                    ("[400, 408, 429, 500, 502, 503, 504]", "[408, 429, 502, 503, 504]"),
                    ("[408, 500]", "[408]"),
                ),
            ),
            Mode(
                "gateway",
                "only the gateway failures 502, 503 and 504 are retried",
                "retryable = status in (502, 503, 504)",
                (("[429, 500, 502, 503, 504]", "[502, 503, 504]"), ("[502, 504]", "[502, 504]")),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="retrykit",
    description="a small library that decides when and how long to wait before a retry",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("retrykit/legacy.py", "wait_times", "tests/test_legacy.py"),
    rename=Rename(
        "retrykit/policy.py", "should_retry", "is_retryable", "retrykit.is_retryable(503) is True"
    ),  # fmt: skip
    dependency="httpx>=0.27",
    next_version="0.8.0",
)
