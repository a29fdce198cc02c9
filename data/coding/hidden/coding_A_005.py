"""Hidden acceptance tests of coding_A_005 (generated; never shown to agents)."""

from configlite import parse_config


def flag(written, **options):
    return parse_config(f"[s]\nk = {written}\n").get_bool("s", "k", **options)


def test_default_behaviour_1():
    assert flag("Yes") == True


def test_default_behaviour_2():
    assert flag("no") == False
