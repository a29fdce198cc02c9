import json
import subprocess
import sys
from pathlib import Path

import pytest

from hasbench.cli import main

ROOT = Path(__file__).resolve().parent.parent
VALID = "tests/scenario_corpus/valid"
MODES = f"{VALID}/modes.yaml"
MALFORMED = "tests/scenario_corpus/malformed"


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_validate_valid_directory(capsys):
    assert main(["validate", VALID]) == 0
    assert capsys.readouterr().out == "ok: 5 tasks in 2 files\n"


def test_validate_prints_one_line_per_problem_and_exits_1(capsys):
    files = [f"{MALFORMED}/tree_cycle.yaml", MODES, f"{MALFORMED}/known_and_unknown.yaml"]
    assert main(["validate", *files]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{MALFORMED}/tree_cycle.yaml: mock_A_001: relationships: 'parent' edges form a cycle "
        "(agent_0 -> agent_1 -> agent_2 -> agent_0)",
        f"{MALFORMED}/known_and_unknown.yaml: mock_A_001: users[0].unknown_info[1]: "
        "'email' is also in known_info",
    ]


def test_validate_malformed_directory_has_every_expected_line(capsys):
    prefix = b"# expect: "
    expected = [
        line[len(prefix) :].decode()
        for path in sorted(Path(MALFORMED).glob("*.yaml"))
        for line in path.read_bytes().splitlines()
        if line.startswith(prefix)
    ]
    assert main(["validate", MALFORMED]) == 1
    assert capsys.readouterr().out.splitlines() == expected


def test_validate_directory_without_yaml_is_an_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "hasbench: error: no *.yaml files found\n"


def test_tasks_lists_id_domain_pattern_mode(capsys):
    assert main(["tasks", MODES]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "mock_C_001\tmock\tC\tstar",
        "mock_A_002\tmock\tA\tchain",
        "mock_E_003\tmock\tE\ttree",
        "mock_F_004\tmock\tF\tgraph",
    ]


def test_tasks_json_one_object_per_line(capsys):
    assert main(["tasks", MODES, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[1] == {
        "task_id": "mock_A_002",
        "domain": "mock",
        "pattern": "A",
        "coordination_mode": "chain",
    }
    assert len(rows) == 4


def test_tasks_on_malformed_file_prints_problems_and_exits_1(capsys):
    assert main(["tasks", f"{MALFORMED}/empty_file.yaml"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"{MALFORMED}/empty_file.yaml: expected a YAML list of tasks, got an empty file\n"
    )


def test_unexpected_exception_is_one_line_exit_2(monkeypatch, capsys):
    def explode(path):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("hasbench.scenario.read_tasks", explode)
    assert main(["validate", MODES]) == 2
    assert capsys.readouterr().err == "hasbench: error: RuntimeError: disk on fire\n"


def test_subprocess_entry_point_never_shows_a_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "hasbench.cli", "validate", MALFORMED, VALID],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"{MALFORMED}/not_a_list.yaml: expected a YAML list of tasks, got a mapping" in lines
    assert not any(line.startswith(VALID) for line in lines)
