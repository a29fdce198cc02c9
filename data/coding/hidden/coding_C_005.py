"""Hidden acceptance tests of coding_C_005 (generated; never shown to agents)."""

import yaml


def test_ci_matrix_has_python_3_13():
    with open(".github/workflows/ci.yml") as handle:
        workflow = yaml.safe_load(handle)
    versions = workflow["jobs"]["test"]["strategy"]["matrix"]["python-version"]
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
