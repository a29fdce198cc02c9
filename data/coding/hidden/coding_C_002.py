"""Hidden acceptance tests of coding_C_002 (generated; never shown to agents)."""

import datekit


def test_new_name_works():
    assert datekit.humanize_duration(3600) == "1 hour"


def test_old_name_is_gone():
    assert not hasattr(datekit, "describe_duration")
