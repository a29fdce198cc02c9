"""Hidden acceptance tests of coding_B_023 (generated; never shown to agents)."""

import pytest
from configlite import parse_config


def flag(written, **options):
    return parse_config(f"[s]\nk = {written}\n").get_bool("s", "k", **options)


def test_default_behaviour_1():
    assert flag("on") == True


def test_default_behaviour_2():
    assert flag("0") == False


def test_option_value_1():
    assert flag("Yes", accepted='yes_no') == True


def test_option_value_2():
    assert flag("no", accepted='yes_no') == False


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        flag("on", accepted='no-such-value')
