"""Hidden acceptance tests of coding_D_025 (generated; never shown to agents)."""

import pytest
from cliargs import parse_args


def test_default_behaviour_1():
    assert parse_args(["--tests", "--without-tests"], {"tests": bool}) == {"tests": False, "args": []}


def test_default_behaviour_2():
    assert parse_args(["--without-docs"], {"docs": bool, "tests": bool}) == {"docs": False, "tests": False, "args": []}


def test_option_value_1():
    assert parse_args(["--color", "--disable-color"], {"color": bool}, negation='disable') == {"color": False, "args": []}


def test_option_value_2():
    assert parse_args(["--disable-color", "x"], {"color": bool}, negation='disable') == {"color": False, "args": ["x"]}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        parse_args(["--tests", "--without-tests"], {"tests": bool}, negation='no-such-value')
