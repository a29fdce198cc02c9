"""Waiting times between retries."""


def delays(attempts, base=1.0, cap=None):
    """The seconds to wait before each of ``attempts`` retries: ``base`` every time.

    ``cap`` (an upper bound for a single wait) is accepted but not used yet.
    """
    if attempts < 0:
        raise ValueError("attempts must not be negative")
    return [float(base)] * attempts
