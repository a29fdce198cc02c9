"""Hidden acceptance tests of coding_E_037 (generated; never shown to agents)."""

import pytest
import re
from retrykit import should_retry


def retried(statuses, **options):
    return [status for status in statuses if should_retry(status, **options)]


def test_default_behaviour_1():
    assert retried([429, 500, 502, 503, 504]) == [502, 503, 504]


def test_default_behaviour_2():
    assert retried([502, 504]) == [502, 504]


def test_option_value_1():
    assert retried([400, 408, 429, 500, 502, 503, 504], retry_statuses='transient') == [408, 429, 502, 503, 504]


def test_option_value_2():
    assert retried([408, 500], retry_statuses='transient') == [408]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid retry policy')):
        retried([429, 500, 502, 503, 504], retry_statuses='no-such-value')
