import pytest

from textkit import truncate


def test_short_text_is_kept():
    assert truncate("abc", 5) == "abc"


def test_width_must_be_positive():
    with pytest.raises(ValueError):
        truncate("abc", 0)
