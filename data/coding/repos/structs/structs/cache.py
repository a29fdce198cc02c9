"""A dictionary with a fixed capacity."""


class CacheFull(Exception):
    """Raised when a full cache is asked to store a new key."""


class BoundedCache:
    """A mapping that holds at most ``capacity`` keys; a full cache refuses new keys."""

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._data = {}

    def get(self, key, default=None):
        """The value stored for ``key``, or ``default``."""
        return self._data.get(key, default)

    def put(self, key, value):
        """Store a value; a new key in a full cache raises CacheFull."""
        if key not in self._data and len(self._data) >= self.capacity:
            raise CacheFull(f"the cache is full ({self.capacity} keys)")
        self._data[key] = value

    def keys(self):
        """The keys, in the order they were first stored."""
        return list(self._data)

    def __len__(self):
        return len(self._data)
