"""Hidden acceptance tests of coding_B_014 (generated; never shown to agents)."""

import pytest
from textkit import title_case


def test_default_behaviour_1():
    assert title_case("NASA and the ESA") == "NASA And The ESA"


def test_default_behaviour_2():
    assert title_case("an HTML primer") == "An HTML Primer"


def test_option_value_1():
    assert title_case("the lord of the rings", style='english') == "The Lord of the Rings"


def test_option_value_2():
    assert title_case("A TALE OF TWO CITIES", style='english') == "A Tale of Two Cities"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        title_case("NASA and the ESA", style='no-such-value')
