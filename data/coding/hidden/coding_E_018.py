"""Hidden acceptance tests of coding_E_018 (generated; never shown to agents)."""

import pytest
import re
from configlite import parse_config


def value(text, key, **options):
    return parse_config(text).get("s", key, **options)


def test_default_behaviour_1():
    assert value("[s]\nroot = /srv\ndata = ${root}/data\n", "data") == "/srv/data"


def test_default_behaviour_2():
    assert value("[s]\nu = ann\nurl = http://${u}@${host}\n", "url") == "http://ann@${host}"


def test_option_value_1():
    assert value("[s]\nroot = /srv\ndata = %(root)s/data\n", "data", expand='percent') == "/srv/data"


def test_option_value_2():
    assert value("[s]\na = 1\nb = %(a)s%(a)s\n", "b", expand='percent') == "11"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported interpolation')):
        value("[s]\nroot = /srv\ndata = ${root}/data\n", "data", expand='no-such-value')
