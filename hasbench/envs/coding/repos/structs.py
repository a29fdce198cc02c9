"""structs: a bounded cache and a priority queue."""

from hasbench.envs.coding.repos import Feature, Legacy, Mode, Rename, Repository, project_files

_CACHE_OLD = '''\
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
'''

_QUEUE_OLD = '''\
import heapq


class PriorityQueue:
    """Items with numeric priorities; ``pop`` returns the item with the lowest priority.

    Items of equal priority are compared with each other, so they must be comparable.
    """

    def __init__(self):
        self._heap = []

    def push(self, item, priority):
        """Add an item with a priority."""
        heapq.heappush(self._heap, (priority, item))

    def pop(self):
        """Remove and return the item with the lowest priority."""
        if not self._heap:
            raise IndexError("pop from an empty queue")
        return heapq.heappop(self._heap)[-1]

    def __len__(self):
        return len(self._heap)
'''

FILES = {
    **project_files(
        "structs",
        "1.1.0",
        "A bounded cache and a priority queue",
        ">>> from structs import PriorityQueue\n>>> queue = PriorityQueue()\n"
        '>>> queue.push("write", 2)\n>>> queue.push("read", 1)\n>>> queue.pop()\n"read"\n',
    ),
    "structs/__init__.py": '''\
"""structs: a bounded cache and a priority queue."""

from structs._version import __version__
from structs.cache import BoundedCache, CacheFull
from structs.legacy import LimitedDict
from structs.queue import PriorityQueue

__all__ = [
    "BoundedCache",
    "CacheFull",
    "LimitedDict",
    "PriorityQueue",
    "__version__",
]
''',
    "structs/cache.py": f'''\
"""A dictionary with a fixed capacity."""


class CacheFull(Exception):
    """Raised when a full cache is asked to store a new key."""


{_CACHE_OLD}''',
    "structs/queue.py": f'''\
"""A priority queue on top of heapq."""

{_QUEUE_OLD}''',
    "structs/legacy.py": '''\
"""Deprecated names kept for structs 1.0 users."""

import warnings

from structs.cache import BoundedCache


class LimitedDict(BoundedCache):
    """Deprecated since 1.1: use BoundedCache."""

    def __init__(self, capacity):
        message = "LimitedDict is deprecated; use BoundedCache"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        super().__init__(capacity)
''',
    "tests/test_cache.py": """\
from structs import BoundedCache


def test_get_and_put():
    cache = BoundedCache(2)
    cache.put("a", 1)
    cache.put("a", 2)
    assert cache.get("a") == 2
    assert cache.get("b", "none") == "none"
    assert len(cache) == 1
""",
    "tests/test_queue.py": """\
import pytest

from structs import PriorityQueue


def test_lowest_priority_first():
    queue = PriorityQueue()
    for item, priority in (("c", 3), ("a", 1), ("b", 2)):
        queue.push(item, priority)
    assert [queue.pop() for _ in range(3)] == ["a", "b", "c"]


def test_pop_from_empty_queue():
    with pytest.raises(IndexError):
        PriorityQueue().pop()
""",
    "tests/test_legacy.py": """\
import pytest

from structs import LimitedDict


def test_limited_dict_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        cache = LimitedDict(1)
    cache.put("a", 1)
    assert cache.keys() == ["a"]
""",
}

_CACHE_HELPER = """\
def run(operations, **options):
    cache = BoundedCache(2, **options)
    for operation in operations:
        if operation[0] == "put":
            cache.put(operation[1], operation[2])
        else:
            cache.get(operation[1])
    return sorted(cache.keys())
"""

_QUEUE_HELPER = """\
def run(pushes, **options):
    queue = PriorityQueue(**options)
    for item, priority in pushes:
        queue.push(item, priority)
    return [queue.pop() for _ in range(len(queue))]
"""

FEATURES = (
    Feature(
        key="structs.eviction",
        module="structs/cache.py",
        call="run",
        imports="from structs import BoundedCache",
        helper=_CACHE_HELPER,
        summary="A full BoundedCache should make room instead of failing",
        problem=(
            "A full BoundedCache raises CacheFull for every new key, so the services using it "
            "fail once it fills up; it should evict a key to make room instead."
        ),
        aspect="which key a full cache evicts",
        fact_key="eviction_policy",
        option="evict",
        option_names=("eviction", "replacement", "victim_rule"),
        messages=(
            "unsupported eviction policy",
            "unknown replacement policy",
            "invalid eviction",
        ),  # fmt: skip
        default_message="unknown eviction policy",
        old=_CACHE_OLD,
        new='''\
class BoundedCache:
    """A mapping that holds at most ``capacity`` keys and evicts one when a new key comes."""

    def __init__(self, capacity@PARAM@):
        @CHECK@
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._data = {}
        self._uses = {}
        self._recent = []
        @BRANCHES@
        self._victim = victim

    def _touch(self, key):
        self._uses[key] = self._uses.get(key, 0) + 1
        if key in self._recent:
            self._recent.remove(key)
        self._recent.append(key)

    def get(self, key, default=None):
        """The value stored for ``key``, or ``default``."""
        if key not in self._data:
            return default
        self._touch(key)
        return self._data[key]

    def put(self, key, value):
        """Store a value, evicting a key when the cache is full."""
        if key not in self._data and len(self._data) >= self.capacity:
            old = self._victim(self)
            del self._data[old]
            del self._uses[old]
            self._recent.remove(old)
        self._data[key] = value
        self._touch(key)

    def keys(self):
        """The keys, in the order they were first stored."""
        return list(self._data)

    def __len__(self):
        return len(self._data)
''',
        modes=(
            Mode(
                "lru",
                "the least recently used key goes (reading and storing both count as use), "
                "so with room for two keys, put a, put b, get a, put c leaves a and c",
                "def victim(cache):\n    return cache._recent[0]",
                (
                    (
                        '[("put", "a", 1), ("put", "b", 2), ("get", "a"), ("put", "c", 3)]',
                        '["a", "c"]',
                    ),
                    (
                        '[("put", "x", 1), ("put", "y", 2), ("put", "x", 3), ("put", "z", 4)]',
                        '["x", "z"]',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "lfu",
                "the least frequently used key goes, the older one on a tie, so with room for "
                "two keys, put a, get a, get a, put b, get b, put c leaves a and c",
                "def victim(cache):\n    return min(cache._data, key=lambda key: cache._uses[key])",
                (
                    (
                        '[("put", "a", 1), ("get", "a"), ("get", "a"), ("put", "b", 2), '
                        '("get", "b"), ("put", "c", 3)]',
                        '["a", "c"]',
                    ),
                    (
                        '[("put", "x", 1), ("put", "y", 2), ("get", "y"), ("put", "z", 3)]',
                        '["y", "z"]',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "fifo",
                "the key stored first goes, whatever happened since, so with room for two "
                "keys, put a, put b, get a, put c leaves b and c",
                "def victim(cache):\n    return next(iter(cache._data))",
                (
                    (
                        '[("put", "a", 1), ("put", "b", 2), ("get", "a"), ("put", "c", 3)]',
                        '["b", "c"]',
                    ),
                    (
                        '[("put", "x", 1), ("put", "y", 2), ("put", "x", 3), ("put", "z", 4)]',
                        '["y", "z"]',
                    ),
                ),
            ),  # fmt: skip
            Mode(
                "mru",
                "the most recently used key goes, so with room for two keys, put a, put b, "
                "get a, put c leaves b and c, and put a, put b, put c leaves a and c",
                "def victim(cache):\n    return cache._recent[-1]",
                (
                    ('[("put", "a", 1), ("put", "b", 2), ("put", "c", 3)]', '["a", "c"]'),
                    (
                        '[("put", "a", 1), ("put", "b", 2), ("get", "a"), ("put", "c", 3)]',
                        '["b", "c"]',
                    ),
                ),
            ),  # fmt: skip
        ),
    ),
    Feature(
        key="structs.ties",
        module="structs/queue.py",
        call="run",
        imports="from structs import PriorityQueue",
        helper=_QUEUE_HELPER,
        summary="PriorityQueue orders equal priorities by accident",
        problem=(
            "PriorityQueue compares the items themselves when priorities are equal: the "
            "order of such items is an accident of their values, and items that cannot be "
            "compared, such as dicts, make push fail."
        ),
        aspect="in which order items of equal priority come out",
        fact_key="equal_priority_order",
        option="ties",
        option_names=("tie_break", "tiebreak", "equal_priority"),
        messages=("unsupported tie rule", "unknown tie break", "invalid tie order"),
        default_message="unknown tie rule",
        old=_QUEUE_OLD,
        new='''\
import heapq
import itertools


class PriorityQueue:
    """Items with numeric priorities; ``pop`` returns the item with the lowest priority."""

    def __init__(self@PARAM@):
        @CHECK@
        self._heap = []
        self._counter = itertools.count()
        @BRANCHES@
        self._order = order

    def push(self, item, priority):
        """Add an item with a priority."""
        number = next(self._counter)
        heapq.heappush(self._heap, (priority, self._order(number, item), number, item))

    def pop(self):
        """Remove and return the item with the lowest priority."""
        if not self._heap:
            raise IndexError("pop from an empty queue")
        return heapq.heappop(self._heap)[-1]

    def __len__(self):
        return len(self._heap)
''',
        modes=(
            Mode(
                "fifo",
                "first in, first out: the item pushed first comes out first",
                "def order(number, item):\n    return number",
                (
                    ('[("write", 1), ("alpha", 1), ("zeta", 0)]', '["zeta", "write", "alpha"]'),
                    ('[({"id": 2}, 5), ({"id": 1}, 5)]', '[{"id": 2}, {"id": 1}]'),
                ),
            ),
            Mode(
                "lifo",
                "last in, first out: the item pushed last comes out first",
                "def order(number, item):\n    return -number",
                (
                    ('[("alpha", 1), ("write", 1), ("zeta", 0)]', '["zeta", "write", "alpha"]'),
                    ('[({"id": 1}, 5), ({"id": 2}, 5)]', '[{"id": 2}, {"id": 1}]'),
                ),
            ),
            Mode(
                "by_text",
                "alphabetical order of the items written as text (10 before 9), pushing order "
                "on equal text",
                "def order(number, item):\n    return str(item)",
                (("[(10, 1), (9, 1)]", "[10, 9]"), ('[("b", 2), (2, 1), (10, 1)]', '[10, 2, "b"]')),
            ),  # fmt: skip
        ),
    ),
)

REPOSITORY = Repository(
    name="structs",
    description="a small library with a bounded cache and a priority queue",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("structs/legacy.py", "LimitedDict", "tests/test_legacy.py"),
    rename=Rename("structs/queue.py", "PriorityQueue", "MinQueue", "len(structs.MinQueue()) == 0"),
    dependency="sortedcontainers>=2.4",
    next_version="1.2.0",
)
