import pytest

from moneyfmt import currency


def test_lookup_is_case_insensitive():
    assert currency("usd").decimals == 2


def test_unknown_currency():
    with pytest.raises(ValueError):
        currency("XYZ")
