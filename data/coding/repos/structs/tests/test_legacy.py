import pytest

from structs import LimitedDict


def test_limited_dict_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        cache = LimitedDict(1)
    cache.put("a", 1)
    assert cache.keys() == ["a"]
