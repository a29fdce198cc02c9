"""The scripted user answers in well-formed sentences on every imported task: the three τ²
files of v0.1.3 and telecom's full set, v1.0.1's airline file, the three MultiAgentBench
files, and the project's generated tasks (real files; skips without ../shared/sources).
The built tasks are walked in test_has_bench.py."""

import pytest
from tau2_reference import (
    MARBLE,
    SOURCES,
    TAU2,
    imported,
    imported_full_telecom,
    require_sources,
)

from hasbench.build.checks import reply_problems
from hasbench.build.marble import import_marble
from hasbench.build.tau2_import import import_tau2
from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks

pytestmark = pytest.mark.slow


def _problems(tasks: list[Scenario]) -> list[str]:
    return [f"{t.task_id} ({t.source_task_id}): {p}" for t in tasks for p in reply_problems(t)]


@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_imported_tau2_tasks(domain):
    tasks = list(imported(domain).values())
    assert _problems(tasks) == []
    asked = [k for t in tasks for k in t.users[0].unknown_info]
    assert all(k.replace("_", "").isalpha() for k in asked)  # fact names, not sentences


def test_imported_full_telecom_set():
    assert _problems(list(imported_full_telecom())) == []


def test_imported_v1_airline_tasks():
    require_sources()
    tasks, _ = import_tau2(
        SOURCES / "tau2-bench-v1.0.1/airline/tasks.json", db=TAU2 / "airline/db.json",
        domain="airline",
    )  # fmt: skip
    assert len(tasks) == 50 and _problems(tasks) == []


@pytest.mark.parametrize("domain", ["coding", "research", "bargaining"])
def test_imported_marble_tasks(domain):
    require_sources()
    result = import_marble(MARBLE / domain / f"{domain}_main.jsonl")
    assert result.scenarios and _problems(result.scenarios) == []


def test_generated_tasks():
    tasks = [t for path in sorted(TASKS_DIR.glob("*.yaml")) for t in load_tasks(path)]
    assert len(tasks) > 300 and _problems(tasks) == []


def test_a_sentence_for_a_fact_name_is_caught():
    task = imported("retail")["5"]
    broken = task.model_copy(deep=True)
    broken.users[0].unknown_info = ["You do not remember your email address"]
    assert _problems([task]) == []
    assert "I don't know the You do not remember your email address." in _problems([broken])[0]
