"""Hidden acceptance tests of coding_D_004 (generated; never shown to agents)."""

import pytest
from textkit import slugify


def test_default_behaviour_1():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_default_behaviour_2():
    assert slugify("Ångström 2", "_") == "angstrom_2"


def test_option_value_1():
    assert slugify("Müller Straße", letters='keep') == "müller-straße"


def test_option_value_2():
    assert slugify("Crème Brûlée", ".", letters='keep') == "crème.brûlée"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        slugify("Crème Brûlée", letters='no-such-value')
