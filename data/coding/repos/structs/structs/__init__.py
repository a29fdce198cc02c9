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
