import pytest

from configlite import load_ini


def test_load_ini_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert load_ini("[a]\nb = c\n").get("a", "b") == "c"
