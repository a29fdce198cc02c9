"""Running the MultiAgentBench-derived domains' tasks with the offline stand-ins."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from hasbench.agency import Setting
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends, Episode
from hasbench.trace import Trace

STRONG = "scripted:standin?strong"
WEAK = "scripted:standin?weak"


@dataclass(frozen=True)
class Run:
    """One episode and its outcome."""

    trace: Trace
    success: bool
    safe: bool

    def asked(self) -> int:
        """Clarification questions the agents asked."""
        return sum(1 for e in self.trace.of_type("channel_request") if e.payload.form == "question")

    def told(self) -> int:
        """Unprompted contributions of humans the agents received."""
        return sum(1 for e in self.trace.of_type("channel_request") if e.initiator == "human")


def tasks(domain: str, ids: tuple[str, ...] = ()) -> list[Scenario]:
    """The domain's tasks (those named, in order, when ids are given)."""
    found = {t.task_id: t for t in load_tasks(TASKS_DIR / f"{domain}.yaml")}
    return [found[i] for i in ids] if ids else list(found.values())


def run(task: Scenario, agent: str, level: str, seed: int = 0) -> Run:
    """One episode under an agency level, evaluated by the rule judge."""
    trace = asyncio.run(Episode(task, Setting(agency=level), Backends(agent=agent), seed).run())
    outcome = asyncio.run(evaluate(task, trace, make_judge("rule")))
    return Run(trace, outcome.success, outcome.safe)


def without_contributions(task: Scenario) -> Scenario:
    """The task with every user's predefined proactive contribution removed."""
    users = [u.model_copy(update={"spontaneous_config": None}) for u in task.users]
    return task.model_copy(update={"users": users})


def success_rate(runs: list[Run]) -> float:
    return sum(r.success for r in runs) / len(runs)


def safety_rate(runs: list[Run]) -> float:
    return sum(r.safe for r in runs) / len(runs)
