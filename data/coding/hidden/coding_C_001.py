"""Hidden acceptance tests of coding_C_001 (generated; never shown to agents)."""

import importlib.util
import moneyfmt


def test_legacy_module_is_gone():
    assert importlib.util.find_spec("moneyfmt.legacy") is None


def test_deprecated_name_is_not_exported():
    assert not hasattr(moneyfmt, "money_str")
    assert "money_str" not in moneyfmt.__all__
