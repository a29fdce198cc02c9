"""Hidden acceptance tests of coding_E_021 (generated; never shown to agents)."""

import pytest
import re
from cliargs import parse_args


def test_default_behaviour_1():
    assert parse_args(["--color", "--no-color"], {"color": bool}) == {"color": False, "args": []}


def test_default_behaviour_2():
    assert parse_args(["--cache", "--no-cache", "build"], {"cache": bool, "jobs": int}) == {"cache": False, "jobs": None, "args": ["build"]}


def test_option_value_1():
    assert parse_args(["--tests", "--without-tests"], {"tests": bool}, off_prefix='without') == {"tests": False, "args": []}


def test_option_value_2():
    assert parse_args(["--without-docs"], {"docs": bool, "tests": bool}, off_prefix='without') == {"docs": False, "tests": False, "args": []}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported negation')):
        parse_args(["--color", "--no-color"], {"color": bool}, off_prefix='no-such-value')
