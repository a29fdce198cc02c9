"""Hidden acceptance tests of coding_A_006 (generated; never shown to agents)."""

from retrykit import delays


def test_default_behaviour_1():
    assert delays(4) == [1.0, 2.0, 3.0, 4.0]


def test_default_behaviour_2():
    assert delays(3, 0.5, 1.0) == [0.5, 1.0, 1.0]
