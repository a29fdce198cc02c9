"""Hidden acceptance tests of coding_D_011 (generated; never shown to agents)."""

import pytest
from textkit import truncate


def test_default_behaviour_1():
    assert truncate("Hello world", 8) == "Hello..."


def test_default_behaviour_2():
    assert truncate("abcdef", 4) == "a..."


def test_option_value_1():
    assert truncate("Hello world", 8, marker='ellipsis') == "Hello w…"


def test_option_value_2():
    assert truncate("abcdef", 4, marker='ellipsis') == "abc…"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        truncate("Hello world", 8, marker='no-such-value')
