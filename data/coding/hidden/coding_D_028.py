"""Hidden acceptance tests of coding_D_028 (generated; never shown to agents)."""

import pytest
from structs import BoundedCache


def run(operations, **options):
    cache = BoundedCache(2, **options)
    for operation in operations:
        if operation[0] == "put":
            cache.put(operation[1], operation[2])
        else:
            cache.get(operation[1])
    return sorted(cache.keys())


def test_default_behaviour_1():
    assert run([("put", "a", 1), ("put", "b", 2), ("put", "c", 3)]) == ["a", "c"]


def test_default_behaviour_2():
    assert run([("put", "a", 1), ("put", "b", 2), ("get", "a"), ("put", "c", 3)]) == ["b", "c"]


def test_option_value_1():
    assert run([("put", "a", 1), ("put", "b", 2), ("get", "a"), ("put", "c", 3)], evict='lru') == ["a", "c"]


def test_option_value_2():
    assert run([("put", "x", 1), ("put", "y", 2), ("put", "x", 3), ("put", "z", 4)], evict='lru') == ["x", "z"]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        run([("put", "a", 1), ("put", "b", 2), ("put", "c", 3)], evict='no-such-value')
