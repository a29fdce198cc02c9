"""Importing MultiAgentBench coding tasks: judge-scored coding scenarios."""

import json
from pathlib import Path

import pytest

from hasbench.build.marble import import_marble
from hasbench.build.marble_coding import requirements
from hasbench.cli import main
from hasbench.envs import make_environment
from hasbench.scenario import load_tasks

SOURCE = Path(__file__).resolve().parents[3] / "shared/sources/marble/coding/coding_main.jsonl"
needs_source = pytest.mark.skipif(not SOURCE.is_file(), reason=f"{SOURCE} is not available")

CONTENT = (
    "Software Development Task:\n\nPlease write a system called TodoBox.\n"
    "1. Implementation requirements:\n   - Users can add tasks.\n   - Tasks can be marked done.\n"
    "\n\n2. Project structure:\n   - solution.py (main implementation)\n"
)


def record(**changes):
    base = {
        "scenario": "coding",
        "task_id": 7,
        "coordinate_mode": "",
        "relationships": [["agent1", "agent2", "collaborates with"],
                          ["agent2", "agent1", "collaborates with"]],  # fmt: skip
        "llm": "",
        "environment": {"type": "", "name": "", "workspace_dir": "workspace", "max_iterations": ""},
        "task": {"content": CONTENT, "output_format": "The final deliverable:\nsolution.py\n"},
        "agents": [
            {"agent_id": "agent1", "type": "CodingAgent", "profile": 'I call "create_code".'},
            {"agent_id": "agent2", "type": "CodingAgent",
             "profile": 'I call "give_advice_and_revise_code".'},
        ],
        "memory": {"type": ""},
        "metrics": {"evaluate_llm": ""},
        "engine_planner": {"initial_progress": "Starting."},
        "output": {"format": "jsonl", "file_path": ""},
    }  # fmt: skip
    base.update(changes)
    return base


def write_jsonl(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_record_becomes_a_judge_scored_coding_task(tmp_path):
    result = import_marble(write_jsonl(tmp_path / "c.jsonl", record()), pattern="E")
    (scenario,) = result.scenarios
    assert scenario.task_id == "coding_E_007" and scenario.source_task_id == "marble/coding/7"
    assert scenario.coordination_mode == "graph"
    assert scenario.metadata["judge_scored"] is True
    assert scenario.evaluation_criteria.reward_basis == ["NL_ASSERTIONS"]
    assert scenario.evaluation_criteria.nl_assertions == [
        "The final code implements this requirement: Users can add tasks.",
        "The final code implements this requirement: Tasks can be marked done.",
    ]
    assert [a.profile for a in scenario.agents] == ['I call "write_file".', 'I call "apply_patch".']
    assert [r.label for r in scenario.relationships] == [
        "collaborates",
        "collaborates",
        "supervises",
    ]
    assert scenario.task.endswith("solution.py")
    env = make_environment(scenario)
    assert env.call("list_files", {}).output == "(the repository has no files yet)"
    assert env.hidden_tests is None


@pytest.mark.parametrize(
    "changes, reason",
    [
        ({"task": {"content": "no sections"}}, "no '1. Implementation requirements:' bullets"),
        ({"coordinate_mode": "centralized"}, "coordinate_mode: unsupported value 'centralized'"),
        ({"agents": "three"}, "agents"),
        ({"relationships": [["agent1", "nobody", "x"]]}, "relationships"),
    ],
)
def test_records_that_cannot_convert_are_reported_with_line_and_reason(tmp_path, changes, reason):
    path = write_jsonl(tmp_path / "bad.jsonl", record(), record(task_id=8, **changes))
    result = import_marble(path)
    assert [s.source_task_id for s in result.scenarios] == ["marble/coding/7"]
    (skipped,) = result.skipped
    assert f"{path}:2 (coding task 8)" in skipped and reason in skipped


@needs_source
def test_the_real_marble_file_imports_through_the_cli(tmp_path, capsys):
    out = tmp_path / "marble.yaml"
    assert main(["import", "marble", str(SOURCE), "--pattern", "E", "--out", str(out)]) == 0
    assert "converted 100 (100 coding)" in capsys.readouterr().out
    tasks = load_tasks(out)
    assert len(tasks) == 100
    assert all(t.metadata["judge_scored"] for t in tasks)
    counts = [len(t.evaluation_criteria.nl_assertions) for t in tasks]
    assert min(counts) >= 3 and max(counts) <= 12
    first = json.loads(SOURCE.read_text(encoding="utf-8").splitlines()[0])
    assert len(requirements(first["task"]["content"])) == counts[0]
