"""Hidden acceptance tests of coding_C_003 (generated; never shown to agents)."""

import tomllib


def test_dependency_is_declared():
    with open("pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    assert project["dependencies"] == ['chardet>=5.2']
