"""Hidden acceptance tests of coding_C_006 (generated; never shown to agents)."""

import importlib.util
import structs


def test_legacy_module_is_gone():
    assert importlib.util.find_spec("structs.legacy") is None


def test_deprecated_name_is_not_exported():
    assert not hasattr(structs, "LimitedDict")
    assert "LimitedDict" not in structs.__all__
