"""Hidden acceptance tests of coding_D_010 (generated; never shown to agents)."""

import pytest
from textkit import title_case


def test_default_behaviour_1():
    assert title_case("the lord of the rings") == "The Lord of the Rings"


def test_default_behaviour_2():
    assert title_case("A TALE OF TWO CITIES") == "A Tale of Two Cities"


def test_option_value_1():
    assert title_case("the LORD of the rings", style='first_only') == "The lord of the rings"


def test_option_value_2():
    assert title_case("Hello World", style='first_only') == "Hello world"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        title_case("the lord of the rings", style='no-such-value')
