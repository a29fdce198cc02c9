"""Hidden acceptance tests of coding_D_031 (generated; never shown to agents)."""

import pytest
from textkit import slugify


def test_default_behaviour_1():
    assert slugify("Müller Straße") == "mueller-strasse"


def test_default_behaviour_2():
    assert slugify("Öl & Gas", "_") == "oel_gas"


def test_option_value_1():
    assert slugify("Müller Straße", letters='keep') == "müller-straße"


def test_option_value_2():
    assert slugify("Crème Brûlée", ".", letters='keep') == "crème.brûlée"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError):
        slugify("Müller Straße", letters='no-such-value')
