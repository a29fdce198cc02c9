"""Hidden acceptance tests of coding_E_035 (generated; never shown to agents)."""

import pytest
import re
from moneyfmt import format_amount


def test_default_behaviour_1():
    assert format_amount(-12.5) == "-12.50 EUR"


def test_default_behaviour_2():
    assert format_amount(-3, 'USD') == "-3.00 USD"


def test_option_value_1():
    assert format_amount(-40, sign_style='credit') == "40.00 EUR CR"


def test_option_value_2():
    assert format_amount(-1.5, 'GBP', sign_style='credit') == "1.50 GBP CR"


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('invalid negative style')):
        format_amount(-12.5, sign_style='no-such-value')
