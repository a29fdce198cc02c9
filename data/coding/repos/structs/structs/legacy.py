"""Deprecated names kept for structs 1.0 users."""

import warnings

from structs.cache import BoundedCache


class LimitedDict(BoundedCache):
    """Deprecated since 1.1: use BoundedCache."""

    def __init__(self, capacity):
        message = "LimitedDict is deprecated; use BoundedCache"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        super().__init__(capacity)
