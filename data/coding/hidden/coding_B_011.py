"""Hidden acceptance tests of coding_B_011 (generated; never shown to agents)."""

import pytest
from configlite import parse_config


def sections(text, **options):
    return parse_config(text, **options).sections


def test_default_behaviour_1():
    assert sections("[db]\nhost = a\nhost = b\n") == {"db": {"host": "b"}}


def test_default_behaviour_2():
    assert sections("[x]\nk = 1\nk = 2\nk = 3\n") == {"x": {"k": "3"}}


def test_option_value_1():
    assert sections("[db]\nhost = a\nhost = b\n", duplicates='first') == {"db": {"host": "a"}}


def test_option_value_2():
    assert sections("[x]\nk = 1\nk = 2\nk = 3\n", duplicates='first') == {"x": {"k": "1"}}


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        sections("[db]\nhost = a\nhost = b\n", duplicates='no-such-value')
