"""Hidden acceptance tests of coding_B_030 (generated; never shown to agents)."""

import pytest
from cliargs import parse_yes_no


def test_default_behaviour_1():
    assert parse_yes_no("OUI") == True


def test_default_behaviour_2():
    assert parse_yes_no("non") == False


def test_option_value_1():
    assert parse_yes_no("Si", language='spanish') == True


def test_option_value_2():
    assert parse_yes_no("no", language='spanish') == False


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        parse_yes_no("OUI", language='no-such-value')
