import pytest

from datekit import describe_duration


def test_negative_durations_are_rejected():
    with pytest.raises(ValueError):
        describe_duration(-1)
