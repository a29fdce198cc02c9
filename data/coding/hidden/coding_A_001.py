"""Hidden acceptance tests of coding_A_001 (generated; never shown to agents)."""

from decimal import Decimal
from moneyfmt import round_amount


def test_default_behaviour_1():
    assert round_amount('0.125') == Decimal("0.12")


def test_default_behaviour_2():
    assert round_amount('0.135') == Decimal("0.13")
