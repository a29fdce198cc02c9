import pytest

from cliargs import getopts


def test_getopts_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert getopts(["a"], {}) == {"args": ["a"]}
