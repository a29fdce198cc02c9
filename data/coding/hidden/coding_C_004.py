"""Hidden acceptance tests of coding_C_004 (generated; never shown to agents)."""

import cliargs
import tomllib


def test_package_version():
    assert cliargs.__version__ == '0.5.0'


def test_project_version():
    with open("pyproject.toml", "rb") as handle:
        assert tomllib.load(handle)["project"]["version"] == '0.5.0'
