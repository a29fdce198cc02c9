"""Hidden acceptance tests of coding_E_023 (generated; never shown to agents)."""

import pytest
import re
from datekit import describe_duration


def test_default_behaviour_1():
    assert describe_duration(7500) == "2:05:00"


def test_default_behaviour_2():
    assert describe_duration(90061) == "25:01:01"


def test_option_value_1():
    assert describe_duration(9000, wording='rounded') == "3 hours"


def test_option_value_2():
    assert describe_duration(5400, wording='rounded') == "2 hours"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported duration style')):
        describe_duration(7500, wording='no-such-value')
