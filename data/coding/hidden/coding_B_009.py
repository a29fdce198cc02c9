"""Hidden acceptance tests of coding_B_009 (generated; never shown to agents)."""

import pytest
from cliargs import parse_args


def test_default_behaviour_1():
    assert parse_args(["--tag", "a", "--tag=b", "x"], {"tag": str}) == {"tag": "a", "args": ["x"]}


def test_default_behaviour_2():
    assert parse_args(["--n", "1", "--n", "2"], {"n": int, "v": bool}) == {"n": 1, "v": False, "args": []}


def test_option_value_1():
    assert parse_args(["--tag", "a", "--tag=b", "x"], {"tag": str}, repeat='list') == {"tag": ["a", "b"], "args": ["x"]}


def test_option_value_2():
    assert parse_args(["--n", "1", "--n", "2"], {"n": int, "v": bool}, repeat='list') == {"n": [1, 2], "v": False, "args": []}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        parse_args(["--tag", "a", "--tag=b", "x"], {"tag": str}, repeat='no-such-value')
