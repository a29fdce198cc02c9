"""Automatic checks every task must pass (HAS paper App. B.4.1, made stricter).

For each task: it validates; its environment initializes; ``scripted:oracle`` solves it
under A3 with a Task Score of 1.0; ``scripted:idle`` scores 0; except for pattern C
(where the human's part is authorization, judged by safety) the oracle fails under A1,
when no human takes part; for patterns A, B and D the user-held facts appear nowhere in
what the agents see under A1 (task, profiles, policy, tool outputs and messages of the
A1 oracle episode); for pattern C the gold path has a protected action.

Judge-scored tasks (``metadata.judge_scored``: MultiAgentBench coding and research, whose
outcome only an LLM judge of the work product decides) have no answer key the oracle could
turn into that product, and the rule judge cannot score it. For them the oracle checks ask
what the oracle can show: under A3 it carries out its gold path without an error and every
fact a person holds (known_info and goal revisions) reaches the agents; under A1 none does
(the hidden parts the criteria name stay with the humans); the idle agent does not succeed.

Episodes here run with the ordinary ``default`` persona for every user: the checks ask
whether a task can be solved with human participation, while how personas change the
outcome is what the persona sweep (RQ4) measures.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from hasbench.agency import Setting
from hasbench.envs import make_environment
from hasbench.evaluate import FAILED_TERMINATIONS, evaluate
from hasbench.participants.backends import make_judge
from hasbench.runner.pool import MIN_POOL_EPISODES, machine_workers, worker_pool
from hasbench.scenario import (
    Scenario,
    held_facts,
    leak_pattern,
    load_tasks,
    scalar_leaves,
    validate_file,
)
from hasbench.simulator import Backends, run_episode
from hasbench.trace import Trace
from hasbench.vocab import PROTECTED_RISK, RISK_ORDER

CHECKS = (
    "validates", "environment", "oracle_A3", "idle", "oracle_fails_A1", "facts_hidden_A1",
    "protected_path",
)  # fmt: skip
HIDDEN_FACT_PATTERNS = {"A", "B", "D"}
CHECK_PERSONA = "default"


@dataclass
class TaskCheck:
    """The check results of one task: check name -> "ok", "-" (not applicable) or a reason."""

    task_id: str
    pattern: str
    results: dict[str, str] = field(default_factory=dict)
    judge_scored: bool = False
    """Whether the oracle checks were the judge-scored ones (see the module docstring)."""

    @property
    def passed(self) -> bool:
        """True when no check failed."""
        return all(value in ("ok", "-") for value in self.results.values())


def check_file(path: str | Path, workers: int | None = None) -> list[TaskCheck]:
    """Run every check on every task of a file (a file that doesn't validate gives one row).

    Args:
        path: the task file.
        workers: worker processes (None: one per CPU when the file has at least
            :data:`~hasbench.runner.pool.MIN_POOL_EPISODES` tasks; 1: in this process).
    """
    problems = validate_file(path)
    if problems:
        by_task: dict[str, list[str]] = {}
        for problem in problems:
            by_task.setdefault(problem.task_id or "(file)", []).append(str(problem))
        return [
            TaskCheck(task_id, "?", {"validates": "; ".join(lines)})
            for task_id, lines in by_task.items()
        ]
    scenarios = load_tasks(path)
    if workers is None:
        workers = machine_workers() if len(scenarios) >= MIN_POOL_EPISODES else 1
    if workers <= 1:
        return [check_task(scenario) for scenario in scenarios]
    chunk = max(1, len(scenarios) // (4 * workers))  # neighbouring tasks share bases
    with worker_pool(workers) as pool:
        return list(pool.map(check_task, scenarios, chunksize=chunk))


def check_task(scenario: Scenario) -> TaskCheck:
    """Run the checks on one validated task."""
    row = TaskCheck(scenario.task_id, scenario.adaptation_pattern, {"validates": "ok"})
    try:
        environment = make_environment(scenario)
    except Exception as exc:  # noqa: BLE001 - any failure to build is the finding
        row.results["environment"] = f"cannot initialize: {exc}"
        return row
    row.results["environment"] = "ok"
    if scenario.metadata.get("judge_scored"):
        return _judge_scored_checks(scenario, environment, row)
    judge = make_judge("rule")
    oracle = _score(scenario, "scripted:oracle", "A3", judge)
    row.results["oracle_A3"] = (
        "ok" if oracle[0] and oracle[1] == 1.0 else f"oracle scored {oracle[1]} ({oracle[2]})"
    )
    idle = _score(scenario, "scripted:idle", "A3", judge)
    row.results["idle"] = (
        "ok"
        if not idle[0] and idle[1] == 0.0
        else f"idle scored {_score_text(idle[1])} ({idle[2]})"
    )
    alone = run_episode(
        scenario, Setting(agency="A1", persona=CHECK_PERSONA), Backends(agent="scripted:oracle")
    )
    if scenario.adaptation_pattern != "C":
        solved = asyncio.run(evaluate(scenario, alone, judge)).success
        row.results["oracle_fails_A1"] = "solved without a human" if solved else "ok"
    else:
        row.results["oracle_fails_A1"] = "-"
    if scenario.adaptation_pattern in HIDDEN_FACT_PATTERNS:
        seen = visible_to_agents(scenario, alone, environment.policy)
        leaked = [path for path, value in _user_facts(scenario) if _found(value, seen)]
        row.results["facts_hidden_A1"] = "ok" if not leaked else f"visible under A1: {leaked}"
    else:
        row.results["facts_hidden_A1"] = "-"
    row.results["protected_path"] = _protected_path(scenario, environment)
    return row


def _protected_path(scenario: Scenario, environment) -> str:
    if scenario.adaptation_pattern != "C":
        return "-"
    protected = [
        a.action_id
        for a in scenario.evaluation_criteria.actions
        if a.protected and _risk(environment, a.name) >= RISK_ORDER[PROTECTED_RISK]
    ]
    return "ok" if protected else "no protected gold action"


def _judge_scored_checks(scenario: Scenario, environment, row: TaskCheck) -> TaskCheck:
    """The oracle checks of a judge-scored task (see the module docstring)."""
    row.judge_scored = True
    facts = [
        (f"users[{i}].{key}", value)
        for i, user in enumerate(scenario.users)
        for key, value in held_facts(user).items()
    ]
    setting = Setting(agency="A3", persona=CHECK_PERSONA)
    with_humans = run_episode(scenario, setting, Backends(agent="scripted:oracle"))
    seen = visible_to_agents(scenario, with_humans, environment.policy)
    unreached = [path for path, value in facts if not _found(value, seen)]
    failed = _failed_gold(scenario, with_humans)
    if with_humans.termination is None or with_humans.termination.reason in FAILED_TERMINATIONS:
        ended = with_humans.termination.reason if with_humans.termination else "no termination"
        row.results["oracle_A3"] = f"judge-scored: the oracle episode ended with {ended}"
    elif failed or unreached:
        row.results["oracle_A3"] = (
            f"judge-scored: gold steps failed {failed}; facts not reached {unreached}"
        )
    else:
        row.results["oracle_A3"] = "ok"
    idle = _score(scenario, "scripted:idle", "A3", make_judge("rule"))
    row.results["idle"] = "ok" if not idle[0] else f"idle succeeded ({idle[2]})"
    alone = run_episode(
        scenario, Setting(agency="A1", persona=CHECK_PERSONA), Backends(agent="scripted:oracle")
    )
    seen_alone = visible_to_agents(scenario, alone, environment.policy)
    reached = [path for path, value in facts if _found(value, seen_alone)]
    if scenario.adaptation_pattern == "C":
        row.results["oracle_fails_A1"] = "-"
    elif not facts:
        row.results["oracle_fails_A1"] = "nothing held by a person: solvable without a human"
    else:
        row.results["oracle_fails_A1"] = f"reached without a human: {reached}" if reached else "ok"
    row.results["facts_hidden_A1"] = (
        "-" if scenario.adaptation_pattern not in HIDDEN_FACT_PATTERNS
        else f"visible under A1: {reached}" if reached else "ok"
    )  # fmt: skip
    row.results["protected_path"] = _protected_path(scenario, environment)
    return row


def _failed_gold(scenario: Scenario, trace: Trace) -> list[str]:
    """Agent-side gold steps with no successful call of their tool in the episode."""
    agents = {a.agent_id for a in scenario.agents}
    done = {e.payload.name for e in trace.of_type("tool_result") if not e.payload.error}
    return [
        a.action_id
        for a in scenario.evaluation_criteria.actions
        if a.requestor in agents and a.name not in done
    ]


def check_many(scenarios: Sequence[Scenario], workers: int = 2) -> Iterator[TaskCheck]:
    """:func:`check_task` on each task, in order, in ``workers`` processes (1: this one)."""
    if workers <= 1:
        yield from map(check_task, scenarios)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(check_task, scenarios, chunksize=2)


def visible_to_agents(scenario: Scenario, trace: Trace, policy: str) -> str:
    """All text the agents could read in an episode: task, profiles, policy, inputs."""
    agents = {a.agent_id for a in scenario.agents}
    callers = {e.payload.call_id: e.actor for e in trace.of_type("tool_call")}
    parts = [scenario.task, policy, *(a.profile for a in scenario.agents)]
    for event in trace.events:
        if event.type == "tool_result" and callers.get(event.payload.call_id) in agents:
            parts.append(str(event.payload.output))
        elif event.target in agents and event.type == "message":
            parts.append(event.payload.text)
        elif event.target in agents and event.type == "channel_response":
            parts.append(event.payload.content)
            for name in ("info", "edits"):  # the structured part of an answer or review
                parts += [str(v) for v in (getattr(event.payload, name, None) or {}).values()]
    return "\n".join(parts)


def format_table(rows: list[TaskCheck]) -> str:
    """A per-task table and a summary line."""
    header = ["task_id", "pattern", *CHECKS]
    lines = ["  ".join(header)]
    for row in rows:
        cells = [row.task_id, row.pattern, *(row.results.get(c, "") for c in CHECKS)]
        lines.append("  ".join(cells))
    failed = sum(not row.passed for row in rows)
    lines.append(f"{len(rows) - failed}/{len(rows)} tasks passed every check")
    judged = sum(row.judge_scored for row in rows)
    if judged:
        lines.append(
            f"{judged} judge-scored tasks: their oracle checks show that what the people hold "
            "reaches the team with them and not without; the outcome itself needs an LLM judge"
        )
    return "\n".join(lines)


def _score(scenario: Scenario, agent: str, agency: str, judge) -> tuple[bool, float | None, str]:
    setting = Setting(agency=agency, persona=CHECK_PERSONA)
    trace = run_episode(scenario, setting, Backends(agent=agent))
    outcome = asyncio.run(evaluate(scenario, trace, judge))
    reason = trace.termination.reason if trace.termination else "no termination"
    return outcome.success, outcome.task_score, f"{reason}; {outcome.dimensions}"


def _score_text(score: float | None) -> str:
    return "no score" if score is None else f"{score:.3f}"


def _user_facts(scenario: Scenario) -> list[tuple[str, object]]:
    facts = []
    for i, user in enumerate(scenario.users):
        facts += scalar_leaves(user.known_info, f"users[{i}].known_info")
    return facts


def _found(value: object, text: str) -> bool:
    pattern = leak_pattern(value)
    return pattern is not None and pattern.search(text) is not None


def _risk(environment, name: str) -> int:
    spec = environment.tool_spec(name)
    return RISK_ORDER[spec.risk] if spec else 0
