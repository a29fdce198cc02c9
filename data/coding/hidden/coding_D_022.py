"""Hidden acceptance tests of coding_D_022 (generated; never shown to agents)."""

import pytest
from configlite import parse_config


def value(text, key, **options):
    return parse_config(text).get("s", key, **options)


def test_default_behaviour_1():
    assert value("[s]\nroot = /srv\ndata = %(root)s/data\n", "data") == "/srv/data"


def test_default_behaviour_2():
    assert value("[s]\na = 1\nb = %(a)s%(a)s\n", "b") == "11"


def test_option_value_1():
    assert value("[s]\nroot = /srv\ndata = $root/data\n", "data", interpolation='dollar') == "/srv/data"


def test_option_value_2():
    assert value("[s]\nname = x\nmsg = hi $name and $other\n", "msg", interpolation='dollar') == "hi x and $other"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        value("[s]\nroot = /srv\ndata = %(root)s/data\n", "data", interpolation='no-such-value')
