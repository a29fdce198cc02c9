"""Hidden acceptance tests of coding_B_004 (generated; never shown to agents)."""

import pytest
from datekit import describe_duration


def test_default_behaviour_1():
    assert describe_duration(9000) == "3 hours"


def test_default_behaviour_2():
    assert describe_duration(5400) == "2 hours"


def test_option_value_1():
    assert describe_duration(7500, style='two_units') == "2 hours 5 minutes"


def test_option_value_2():
    assert describe_duration(90061, style='two_units') == "1 day 1 hour"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        describe_duration(9000, style='no-such-value')
