"""Hidden acceptance tests of coding_B_025 (generated; never shown to agents)."""

import pytest
from structs import PriorityQueue


def run(pushes, **options):
    queue = PriorityQueue(**options)
    for item, priority in pushes:
        queue.push(item, priority)
    return [queue.pop() for _ in range(len(queue))]


def test_default_behaviour_1():
    assert run([("write", 1), ("alpha", 1), ("zeta", 0)]) == ["zeta", "write", "alpha"]


def test_default_behaviour_2():
    assert run([({"id": 2}, 5), ({"id": 1}, 5)]) == [{"id": 2}, {"id": 1}]


def test_option_value_1():
    assert run([("alpha", 1), ("write", 1), ("zeta", 0)], ties='lifo') == ["zeta", "write", "alpha"]


def test_option_value_2():
    assert run([({"id": 1}, 5), ({"id": 2}, 5)], ties='lifo') == [{"id": 2}, {"id": 1}]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        run([("write", 1), ("alpha", 1), ("zeta", 0)], ties='no-such-value')
