import pytest

from textkit import make_slug


def test_make_slug_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert make_slug("A b") == "a-b"
