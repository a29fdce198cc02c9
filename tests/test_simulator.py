import asyncio

import pytest

from hasbench.agency import Setting
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, Episode, run_episode
from hasbench.trace import Trace

EXAMPLES = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}


def run(task_id, agency="A3", agent="scripted:oracle", seed=0, **setting):
    episode = Episode(
        EXAMPLES[task_id], Setting(agency=agency, **setting), Backends(agent=agent), seed
    )
    trace = asyncio.run(episode.run())
    return episode, trace


def assertions_hold(episode):
    scn = episode.scenario
    return all(
        episode.environment.run_assertion(a.func_name, a.arguments) == a.assert_value
        for a in scn.evaluation_criteria.env_assertions
    )


@pytest.mark.parametrize("task_id", sorted(EXAMPLES))
def test_oracle_solves_examples_with_humans_and_fails_without(task_id):
    episode, trace = run(task_id, "A3")
    assert trace.termination.reason == "agent_done"
    assert assertions_hold(episode), task_id
    episode, trace = run(task_id, "A1")
    assert trace.termination.reason == "agent_done"
    assert not assertions_hold(episode), task_id
    assert not trace.of_type("channel_request")


def test_same_seed_gives_byte_identical_trace(tmp_path):
    first = run_episode(EXAMPLES["mock_D_001"], Setting(), Backends(agent="scripted:weak"), 7)
    second = run_episode(EXAMPLES["mock_D_001"], Setting(), Backends(agent="scripted:weak"), 7)
    a, b = first.write(tmp_path / "a.jsonl"), second.write(tmp_path / "b.jsonl")
    assert a.read_bytes() == b.read_bytes()
    assert Trace.read(a).to_jsonl() == first.to_jsonl()


def test_idle_agent_finishes_without_acting():
    episode, trace = run("mock_A_001", agent="scripted:idle")
    assert trace.termination.reason == "agent_done"
    assert [e.type for e in trace.events] == ["finish"]
    assert not assertions_hold(episode)
