"""Which failures are worth retrying."""


def should_retry(status):
    """Whether a request that ended with this HTTP status should be retried (only 503)."""
    return status == 503
