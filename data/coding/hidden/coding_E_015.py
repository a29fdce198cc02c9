"""Hidden acceptance tests of coding_E_015 (generated; never shown to agents)."""

import pytest
import re
from configlite import parse_config


def flag(written, **options):
    return parse_config(f"[s]\nk = {written}\n").get_bool("s", "k", **options)


def test_default_behaviour_1():
    assert flag("ON") == True


def test_default_behaviour_2():
    assert flag("off") == False


def test_option_value_1():
    assert flag("Yes", vocabulary='yes_no') == True


def test_option_value_2():
    assert flag("no", vocabulary='yes_no') == False


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported boolean spelling')):
        flag("ON", vocabulary='no-such-value')
