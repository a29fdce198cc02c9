"""Hidden acceptance tests of coding_B_018 (generated; never shown to agents)."""

import pytest
from retrykit import should_retry


def retried(statuses, **options):
    return [status for status in statuses if should_retry(status, **options)]


def test_default_behaviour_1():
    assert retried([408, 429, 500, 502, 503, 504, 599]) == [500, 502, 503, 504, 599]


def test_default_behaviour_2():
    assert retried([200, 404, 501]) == [501]


def test_option_value_1():
    assert retried([408, 429, 500, 502, 503, 504], retry_on='throttling') == [429, 503]


def test_option_value_2():
    assert retried([429, 429, 400], retry_on='throttling') == [429, 429]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        retried([408, 429, 500, 502, 503, 504, 599], retry_on='no-such-value')
