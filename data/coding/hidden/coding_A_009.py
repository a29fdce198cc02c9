"""Hidden acceptance tests of coding_A_009 (generated; never shown to agents)."""

from statskit import moving_average


def test_default_behaviour_1():
    assert moving_average([2, 4, 6, 8], 2) == [None, 3.0, 5.0, 7.0]


def test_default_behaviour_2():
    assert moving_average([3, 6, 9], 3) == [None, None, 6.0]
