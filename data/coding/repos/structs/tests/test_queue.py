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
