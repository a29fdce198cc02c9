"""A priority queue on top of heapq."""

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
