"""Hidden acceptance tests of coding_E_033 (generated; never shown to agents)."""

import pytest
import re
from textkit import title_case


def test_default_behaviour_1():
    assert title_case("the LORD of the rings") == "The lord of the rings"


def test_default_behaviour_2():
    assert title_case("Hello World") == "Hello world"


def test_option_value_1():
    assert title_case("NASA and the ESA", capitalization='keep_acronyms') == "NASA And The ESA"


def test_option_value_2():
    assert title_case("an HTML primer", capitalization='keep_acronyms') == "An HTML Primer"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported title style')):
        title_case("the LORD of the rings", capitalization='no-such-value')
