import pytest

from statskit import average


def test_average_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert average([2, 4]) == 3.0
