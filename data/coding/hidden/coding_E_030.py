"""Hidden acceptance tests of coding_E_030 (generated; never shown to agents)."""

import pytest
import re
from configlite import parse_config


def sections(text, **options):
    return parse_config(text, **options).sections


def test_default_behaviour_1():
    assert sections("[db]\nhost = a\nhost = b\n") == {"db": {"host": "a,b"}}


def test_default_behaviour_2():
    assert sections("[x]\nk = 1\nk = 2\nk = 3\n") == {"x": {"k": "1,2,3"}}


def test_option_value_1():
    assert sections("[db]\nhost = a\nhost = b\n", repeated_key='last') == {"db": {"host": "b"}}


def test_option_value_2():
    assert sections("[x]\nk = 1\nk = 2\nk = 3\n", repeated_key='last') == {"x": {"k": "3"}}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid duplicates option')):
        sections("[db]\nhost = a\nhost = b\n", repeated_key='no-such-value')
