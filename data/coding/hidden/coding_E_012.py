"""Hidden acceptance tests of coding_E_012 (generated; never shown to agents)."""

import pytest
import re
from moneyfmt import format_amount


def test_default_behaviour_1():
    assert format_amount(1234567.5) == "1 234 567.50 EUR"


def test_default_behaviour_2():
    assert format_amount(25000, 'CHF') == "25 000.00 CHF"


def test_option_value_1():
    assert format_amount(1234567.5, thousands='underscore') == "1_234_567.50 EUR"


def test_option_value_2():
    assert format_amount(4500, 'USD', thousands='underscore') == "4_500.00 USD"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported grouping')):
        format_amount(1234567.5, thousands='no-such-value')
