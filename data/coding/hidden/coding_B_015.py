"""Hidden acceptance tests of coding_B_015 (generated; never shown to agents)."""

import pytest
from textkit import truncate


def test_default_behaviour_1():
    assert truncate("Hello world", 8) == "Hello w…"


def test_default_behaviour_2():
    assert truncate("abcdef", 4) == "abc…"


def test_option_value_1():
    assert truncate("Hello world", 10, marker='bracket') == "Hello[...]"


def test_option_value_2():
    assert truncate("abcdefgh", 7, marker='bracket') == "ab[...]"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        truncate("Hello world", 8, marker='no-such-value')
