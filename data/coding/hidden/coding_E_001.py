"""Hidden acceptance tests of coding_E_001 (generated; never shown to agents)."""

import pytest
import re
from cliargs import parse_args


def test_default_behaviour_1():
    assert parse_args(["--tag", "a", "--tag=b", "x"], {"tag": str}) == {"tag": "a", "args": ["x"]}


def test_default_behaviour_2():
    assert parse_args(["--n", "1", "--n", "2"], {"n": int, "v": bool}) == {"n": 1, "v": False, "args": []}


def test_option_value_1():
    assert parse_args(["--tag", "a", "--tag=b", "x"], {"tag": str}, on_repeat='list') == {"tag": ["a", "b"], "args": ["x"]}


def test_option_value_2():
    assert parse_args(["--n", "1", "--n", "2"], {"n": int, "v": bool}, on_repeat='list') == {"n": [1, 2], "v": False, "args": []}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported repeat mode')):
        parse_args(["--tag", "a", "--tag=b", "x"], {"tag": str}, on_repeat='no-such-value')
