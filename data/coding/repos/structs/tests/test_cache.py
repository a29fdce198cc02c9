from structs import BoundedCache


def test_get_and_put():
    cache = BoundedCache(2)
    cache.put("a", 1)
    cache.put("a", 2)
    assert cache.get("a") == 2
    assert cache.get("b", "none") == "none"
    assert len(cache) == 1
