"""Hidden acceptance tests of coding_C_007 (generated; never shown to agents)."""

import retrykit


def test_new_name_works():
    assert retrykit.is_retryable(503) is True


def test_old_name_is_gone():
    assert not hasattr(retrykit, "should_retry")
