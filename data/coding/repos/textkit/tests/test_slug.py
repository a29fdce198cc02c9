from textkit import slugify


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Release 2.0  ", separator="_") == "release_2_0"
