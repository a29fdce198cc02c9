import pytest

from cliargs import parse_yes_no


def test_n_and_nonsense():
    assert parse_yes_no(" N ") is False
    with pytest.raises(ValueError):
        parse_yes_no("maybe")
