"""Hidden acceptance tests of coding_E_007 (generated; never shown to agents)."""

import pytest
import re
from textkit import truncate


def test_default_behaviour_1():
    assert truncate("Hello world", 8) == "Hello w…"


def test_default_behaviour_2():
    assert truncate("abcdef", 4) == "abc…"


def test_option_value_1():
    assert truncate("Hello world", 8, ending='dots') == "Hello..."


def test_option_value_2():
    assert truncate("abcdef", 4, ending='dots') == "a..."


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported marker')):
        truncate("Hello world", 8, ending='no-such-value')
