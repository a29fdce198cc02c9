"""Hidden acceptance tests of coding_E_006 (generated; never shown to agents)."""

import pytest
import re
from textkit import title_case


def test_default_behaviour_1():
    assert title_case("NASA and the ESA") == "NASA And The ESA"


def test_default_behaviour_2():
    assert title_case("an HTML primer") == "An HTML Primer"


def test_option_value_1():
    assert title_case("the LORD of the rings", rules='first_only') == "The lord of the rings"


def test_option_value_2():
    assert title_case("Hello World", rules='first_only') == "Hello world"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported title style')):
        title_case("NASA and the ESA", rules='no-such-value')
