import pytest

from moneyfmt import money_str


def test_money_str_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert money_str(3) == "3.00 EUR"
