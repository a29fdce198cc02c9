"""Hidden acceptance tests of coding_E_017 (generated; never shown to agents)."""

import pytest
import re
from structs import PriorityQueue


def run(pushes, **options):
    queue = PriorityQueue(**options)
    for item, priority in pushes:
        queue.push(item, priority)
    return [queue.pop() for _ in range(len(queue))]


def test_default_behaviour_1():
    assert run([(10, 1), (9, 1)]) == [10, 9]


def test_default_behaviour_2():
    assert run([("b", 2), (2, 1), (10, 1)]) == [10, 2, "b"]


def test_option_value_1():
    assert run([("alpha", 1), ("write", 1), ("zeta", 0)], tie_break='lifo') == ["zeta", "write", "alpha"]


def test_option_value_2():
    assert run([({"id": 1}, 5), ({"id": 2}, 5)], tie_break='lifo') == [{"id": 2}, {"id": 1}]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid tie order')):
        run([(10, 1), (9, 1)], tie_break='no-such-value')
