"""Hidden acceptance tests of coding_E_027 (generated; never shown to agents)."""

import pytest
import re
from textkit import slugify


def test_default_behaviour_1():
    assert slugify("Müller Straße") == "müller-straße"


def test_default_behaviour_2():
    assert slugify("Crème Brûlée", ".") == "crème.brûlée"


def test_option_value_1():
    assert slugify("Crème Brûlée", unicode='strip_accents') == "creme-brulee"


def test_option_value_2():
    assert slugify("Ångström 2", "_", unicode='strip_accents') == "angstrom_2"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid letters option')):
        slugify("Müller Straße", unicode='no-such-value')
