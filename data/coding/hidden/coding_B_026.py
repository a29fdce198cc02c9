"""Hidden acceptance tests of coding_B_026 (generated; never shown to agents)."""

import pytest
from configlite import parse_config


def value(text, key, **options):
    return parse_config(text).get("s", key, **options)


def test_default_behaviour_1():
    assert value("[s]\nroot = /srv\ndata = @root@/data\n", "data") == "/srv/data"


def test_default_behaviour_2():
    assert value("[s]\nv = 2\nw = @v@.@v@.@x@\n", "w") == "2.2.@x@"


def test_option_value_1():
    assert value("[s]\nroot = /srv\ndata = %(root)s/data\n", "data", interpolation='percent') == "/srv/data"


def test_option_value_2():
    assert value("[s]\na = 1\nb = %(a)s%(a)s\n", "b", interpolation='percent') == "11"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        value("[s]\nroot = /srv\ndata = @root@/data\n", "data", interpolation='no-such-value')
