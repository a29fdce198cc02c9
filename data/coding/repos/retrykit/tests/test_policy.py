from retrykit import should_retry


def test_only_service_unavailable_is_retried():
    assert should_retry(503)
    assert not should_retry(404)
