"""Hidden acceptance tests of coding_B_029 (generated; never shown to agents)."""

import pytest
from cliargs import parse_args


def test_default_behaviour_1():
    assert parse_args(["--color", "--disable-color"], {"color": bool}) == {"color": False, "args": []}


def test_default_behaviour_2():
    assert parse_args(["--disable-color", "x"], {"color": bool}) == {"color": False, "args": ["x"]}


def test_option_value_1():
    assert parse_args(["--lint", "--skip-lint"], {"lint": bool}, negation='skip') == {"lint": False, "args": []}


def test_option_value_2():
    assert parse_args(["--skip-lint", "src"], {"lint": bool}, negation='skip') == {"lint": False, "args": ["src"]}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        parse_args(["--color", "--disable-color"], {"color": bool}, negation='no-such-value')
