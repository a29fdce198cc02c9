"""Hidden acceptance tests of coding_E_034 (generated; never shown to agents)."""

import pytest
import re
from textkit import truncate


def test_default_behaviour_1():
    assert truncate("Hello big world", 12) == "Hello..."


def test_default_behaviour_2():
    assert truncate("the quick brown fox", 14) == "the quick..."


def test_option_value_1():
    assert truncate("Hello world", 8, cut_style='dots') == "Hello..."


def test_option_value_2():
    assert truncate("abcdef", 4, cut_style='dots') == "a..."


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid truncation marker')):
        truncate("Hello big world", 12, cut_style='no-such-value')
