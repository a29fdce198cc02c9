"""Hidden acceptance tests of coding_A_002 (generated; never shown to agents)."""

from moneyfmt import format_amount


def test_default_behaviour_1():
    assert format_amount(1234567.5) == "1,234,567.50 EUR"


def test_default_behaviour_2():
    assert format_amount(1000, 'JPY') == "1,000 JPY"
