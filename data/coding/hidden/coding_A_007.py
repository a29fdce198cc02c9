"""Hidden acceptance tests of coding_A_007 (generated; never shown to agents)."""

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
