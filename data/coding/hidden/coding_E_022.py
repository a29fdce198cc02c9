"""Hidden acceptance tests of coding_E_022 (generated; never shown to agents)."""

import pytest
import re
from cliargs import parse_yes_no


def test_default_behaviour_1():
    assert parse_yes_no("OUI") == True


def test_default_behaviour_2():
    assert parse_yes_no("non") == False


def test_option_value_1():
    assert parse_yes_no("Si", vocabulary='spanish') == True


def test_option_value_2():
    assert parse_yes_no("no", vocabulary='spanish') == False


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid locale')):
        parse_yes_no("OUI", vocabulary='no-such-value')
