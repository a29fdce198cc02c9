"""The package's dependency direction (the layers contract in pyproject.toml) holds."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")


def test_imports_follow_the_layers_contract():
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ", 0 broken." in result.stdout


def test_the_contract_reports_a_low_layer_importing_a_high_one(tmp_path):
    """The same layers on a two-module package whose scenario imports its runner."""
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = contract["contracts"][0]["layers"]  # the package-wide one
    optional = [re.sub(r"\(?(\w+)\)?", r"(\1)", layer) for layer in layers]
    package = tmp_path / "hasbench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "runner.py").write_text("")
    (package / "scenario.py").write_text("import hasbench.runner\n")
    config = tmp_path / "contract.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "hasbench"\n[[tool.importlinter.contracts]]\n'
        'name = "layers"\ntype = "layers"\ncontainers = ["hasbench"]\n'
        f"layers = {json.dumps(optional)}\n"
    )
    result = subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--config", str(config)], capture_output=True, text=True,
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "hasbench.scenario is not allowed to import hasbench.runner" in result.stdout
