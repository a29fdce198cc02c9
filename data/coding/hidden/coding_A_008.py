"""Hidden acceptance tests of coding_A_008 (generated; never shown to agents)."""

from configlite import parse_config


def value(text, key, **options):
    return parse_config(text).get("s", key, **options)


def test_default_behaviour_1():
    assert value("[s]\nroot = /srv\ndata = @root@/data\n", "data") == "/srv/data"


def test_default_behaviour_2():
    assert value("[s]\nv = 2\nw = @v@.@v@.@x@\n", "w") == "2.2.@x@"
