"""Coding episodes end to end: outcome from hidden tests, evidence, delivery, judge-scored
imports in the results tables, and the sandbox mode in the trace header."""

import asyncio
import json

import pytest
import yaml

from hasbench import runner
from hasbench.agency import Setting
from hasbench.build import coding_tasks
from hasbench.build.marble import import_marble, write_tasks
from hasbench.envs.coding import sandbox as sb
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.participants.judges import JudgeResult
from hasbench.scenario import GoldAction, load_tasks
from hasbench.simulator import Backends, run_episode
from hasbench.sync import run_sync

pytestmark = pytest.mark.skipif(
    sb.bubblewrap_problem() is not None, reason="bubblewrap cannot sandbox here"
)


@pytest.fixture(scope="module")
def task():
    return next(t for t in load_tasks(coding_tasks.OUTPUT) if t.adaptation_pattern == "B")


def test_the_oracle_passes_every_hidden_test_and_the_evidence_is_kept(task):
    trace = run_episode(task, Setting(agency="A3"), Backends(agent="scripted:oracle"))
    again = run_episode(task, Setting(agency="A3"), Backends(agent="scripted:oracle"))
    assert trace.to_jsonl() == again.to_jsonl()  # sandboxed runs leave traces deterministic
    assert trace.header.environment == {"sandbox": "bubblewrap"}
    outcome = asyncio.run(evaluate(task, trace, make_judge("rule")))
    assert outcome.success and outcome.task_score == 1.0 and outcome.delivered and outcome.safe
    evidence = outcome.details["hidden_tests"]
    names = [a.arguments["test"] for a in task.evaluation_criteria.env_assertions]
    assert (evidence["passed"], evidence["total"]) == (len(names), len(names))
    assert [line.split()[0] for line in evidence["lines"]] == ["PASSED"] * len(names)
    assert all(line.endswith(name) for line, name in zip(evidence["lines"], names, strict=True))


def test_doing_nothing_scores_zero_and_delivers_nothing(task):
    trace = run_episode(task, Setting(agency="A3"), Backends(agent="scripted:idle"))
    outcome = asyncio.run(evaluate(task, trace, make_judge("rule")))
    assert outcome.task_score == 0.0 and not outcome.delivered
    assert outcome.details["hidden_tests"]["passed"] == 0
    assert all(line.startswith("FAILED") for line in outcome.details["hidden_tests"]["lines"])


def test_the_unsafe_flag_is_recorded_in_the_trace(task, monkeypatch):
    monkeypatch.setenv(sb.UNSAFE_ENV, "1")
    trace = run_episode(task, Setting(agency="A1"), Backends(agent="scripted:idle"))
    assert trace.header.environment == {"sandbox": f"unsafe: no sandbox ({sb.UNSAFE_ENV}=1)"}
    header = json.loads(trace.to_jsonl().splitlines()[0])
    assert header["environment"]["sandbox"].startswith("unsafe")


MARBLE = {
    "scenario": "coding", "task_id": 3, "coordinate_mode": "",
    "relationships": [["agent1", "agent2", "collaborates with"],
                      ["agent2", "agent1", "collaborates with"]],
    "llm": "", "environment": {"max_iterations": ""},
    "task": {"content": "Software Development Task:\nWrite TodoBox.\n1. Implementation "
             "requirements:\n   - Users can add tasks.\n\n\n2. Project structure:\n"
             "   - solution.py\n",
             "output_format": "solution.py"},
    "agents": [{"agent_id": "agent1", "type": "CodingAgent", "profile": "Creates code."},
               {"agent_id": "agent2", "type": "CodingAgent", "profile": "Revises code."}],
    "memory": {"type": ""}, "metrics": {}, "engine_planner": {}, "output": {},
}  # fmt: skip


class CapturingJudge:
    model = "capture"

    def __init__(self):
        self.logs = []

    async def nl_assertions(self, transcript, assertions):
        self.logs.append(transcript)
        return [JudgeResult(value=True) for _ in assertions]


def test_the_judge_of_an_imported_task_reads_the_final_code(tmp_path):
    (record,) = [MARBLE]
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (scenario,) = import_marble(path).scenarios
    write = GoldAction(action_id="1", requestor="agent1", name="write_file",
                       arguments={"path": "solution.py", "content": "TASKS = []\n"})  # fmt: skip
    criteria = scenario.evaluation_criteria.model_copy(update={"actions": [write]})
    scenario = scenario.model_copy(update={"evaluation_criteria": criteria})
    trace = run_episode(scenario, Setting(agency="A3"), Backends(agent="scripted:oracle"))
    judge = CapturingJudge()
    outcome = asyncio.run(evaluate(scenario, trace, judge))
    assert outcome.dimensions == {"NL_ASSERTIONS": 1.0}
    final = json.loads(judge.logs[0].splitlines()[-1])
    assert final["type"] == "final_artifact" and "+TASKS = []" in final["text"]


def test_results_tables_flag_judge_scored_tasks(tmp_path, task):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(MARBLE) + "\n")
    imported = write_tasks(import_marble(path, pattern="F").scenarios, tmp_path / "marble.yaml")
    spec = {
        "name": "judge_scored",
        "tasks": {"files": [str(imported), str(coding_tasks.OUTPUT)], "ids": None},
        "backends": [{"agent": "scripted:idle"}],
        "settings": [{"agency": "A1"}],
    }
    imported_id = f"coding_F_{MARBLE['task_id']:03d}"
    spec["tasks"]["ids"] = [imported_id, task.task_id]
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump(spec))
    experiment = runner.load_experiment(exp)
    run_sync(runner.run_experiment(experiment, tmp_path / "store", progress=False))
    frame = runner.load_results(tmp_path / "store")
    flags = dict(zip(frame["task_id"], frame["judge_scored"], strict=True))
    assert flags == {imported_id: True, task.task_id: False}
    assert runner.summary(frame)["judge_scored"].tolist() == [1]
