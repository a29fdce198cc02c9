import pytest

from retrykit import delays


def test_first_delay_is_base():
    assert delays(1, base=0.5) == [0.5]
    assert delays(0) == []


def test_negative_attempts():
    with pytest.raises(ValueError):
        delays(-1)
