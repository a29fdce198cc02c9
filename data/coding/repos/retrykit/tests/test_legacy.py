import pytest

from retrykit import wait_times


def test_wait_times_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert wait_times(1) == [1.0]
