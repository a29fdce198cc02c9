"""Automatic checks every task must pass (HAS paper App. B.4.1, made stricter).

For each task: it validates; its environment initializes; ``scripted:oracle`` solves it
under A3 with a Task Score of 1.0; ``scripted:idle`` scores 0; except for pattern C
(where the human's part is authorization, judged by safety) the oracle fails under A1,
when no human takes part; for patterns A, B and D the user-held facts appear nowhere in
what the agents see under A1 (task, profiles, policy, tool outputs and messages of the
A1 oracle episode); for pattern C the gold path has a protected action.

A dimension only a judge can score (natural-language assertions, which the offline rule
judge leaves without a verdict) makes a check "pending a judge: ..." rather than a failure
when everything else passes: the oracle scores 1.0 on every other dimension, or doing
nothing scores nothing on them. :func:`passes` counts pending checks as not failed.

Judge-scored tasks (``metadata.judge_scored``: MultiAgentBench coding and research, whose
outcome only an LLM judge of the work product decides) have no answer key the oracle could
turn into that product. For them the oracle checks ask what the oracle can show: under A3
it carries out its gold path without an error and every fact a person holds (known_info
and goal revisions) reaches the agents (then the outcome is pending a judge); under A1 none
does (the hidden parts the criteria name stay with the humans); the idle agent does not
succeed.

An imported task whose pattern is only a label (``metadata.pattern_provisional``: a
MultiAgentBench record as it is, without the human part an adaptation adds) has the
pattern's checks (A1, hidden facts, protected path) marked not applicable.

Episodes here run with the ordinary ``default`` persona for every user: the checks ask
whether a task can be solved with human participation, while how personas change the
outcome is what the persona sweep (RQ4) measures.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hasbench.agency import Setting
from hasbench.envs import make_environment
from hasbench.evaluate import FAILED_TERMINATIONS, Outcome, evaluate
from hasbench.participants.backends import make_judge
from hasbench.runner.pool import MIN_POOL_EPISODES, machine_workers, worker_pool
from hasbench.scenario import (
    Scenario,
    held_facts,
    leak_pattern,
    read_tasks,
    scalar_leaves,
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


PENDING = "pending a judge"
"""How a check begins that only a judge (an LLM) can finish: offline it is not a failure."""


def passes(result: str) -> bool:
    """Whether a check result is not a failure: ok, not applicable, or pending a judge."""
    return result in ("ok", "-") or result.startswith(PENDING)


@dataclass
class TaskCheck:
    """The check results of one task: check name -> its result.

    A result is "ok", "-" (not applicable), "pending a judge: ..." (only a judge can finish
    it) or the reason the check failed.
    """

    task_id: str
    pattern: str
    results: dict[str, str] = field(default_factory=dict)
    judge_scored: bool = False
    """Whether the oracle checks were the judge-scored ones (see the module docstring)."""

    @property
    def passed(self) -> bool:
        """True when no check failed (a check pending a judge has not failed)."""
        return all(passes(value) for value in self.results.values())

    @property
    def pending(self) -> bool:
        """True when a check waits for a judge."""
        return any(value.startswith(PENDING) for value in self.results.values())


def check_file(path: str | Path, workers: int | None = None) -> list[TaskCheck]:
    """Run every check on every task of a file (a file that doesn't validate gives one row).

    Args:
        path: the task file.
        workers: worker processes (None: one per CPU when the file has at least
            :data:`~hasbench.runner.pool.MIN_POOL_EPISODES` tasks; 1: in this process).
    """
    scenarios, problems = read_tasks(path)
    if problems:
        by_task: dict[str, list[str]] = {}
        for problem in problems:
            by_task.setdefault(problem.task_id or "(file)", []).append(str(problem))
        return [
            TaskCheck(task_id, "?", {"validates": "; ".join(lines)})
            for task_id, lines in by_task.items()
        ]
    if workers is None:
        workers = machine_workers() if len(scenarios) >= MIN_POOL_EPISODES else 1
    return list(check_many(scenarios, workers))


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
    oracle, why = _outcome(scenario, "scripted:oracle", "A3", judge)
    verdict = _verdict(oracle)
    row.results["oracle_A3"] = (
        "ok" if verdict == "solved" else _pending(oracle, "the oracle scores 1.0 on the rest")
        if verdict == "pending" else f"oracle scored {oracle.task_score} ({why})"
    )  # fmt: skip
    idle, why = _outcome(scenario, "scripted:idle", "A3", judge)
    if not idle.success and idle.task_score == 0.0:
        row.results["idle"] = "ok"  # a dimension only a judge can score cannot add to it
    elif not idle.success and idle.task_score is None:
        row.results["idle"] = _pending(idle, "")
    else:
        row.results["idle"] = f"idle scored {_score_text(idle.task_score)} ({why})"
    if _provisional(scenario, row):
        return row
    alone = run_episode(
        scenario, Setting(agency="A1", persona=CHECK_PERSONA), Backends(agent="scripted:oracle")
    )
    if scenario.adaptation_pattern == "C":
        row.results["oracle_fails_A1"] = "-"  # authorization is judged by safety
    else:
        solo = _verdict(asyncio.run(evaluate(scenario, alone, judge)))
        row.results["oracle_fails_A1"] = {
            "solved": "solved without a human",
            "pending": f"{PENDING}: without a human the oracle scores 1.0 on the rest",
        }.get(solo, "ok")
    if scenario.adaptation_pattern in HIDDEN_FACT_PATTERNS:
        seen = visible_to_agents(scenario, alone, environment.policy)
        leaked = [path for path, value in _user_facts(scenario) if _found(value, seen)]
        row.results["facts_hidden_A1"] = "ok" if not leaked else f"visible under A1: {leaked}"
    else:
        row.results["facts_hidden_A1"] = "-"
    row.results["protected_path"] = _protected_path(scenario, environment)
    return row


def _provisional(scenario: Scenario, row: TaskCheck) -> bool:
    """Whether a task's pattern is only a label; if so its pattern checks are marked "-".

    That is an imported task with ``metadata.pattern_provisional`` (the import adds no
    human part for the pattern's checks to find).
    """
    if not scenario.metadata.get("pattern_provisional"):
        return False
    for name in ("oracle_fails_A1", "facts_hidden_A1", "protected_path"):
        row.results[name] = "-"
    return True


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
        row.results["oracle_A3"] = (
            f"{PENDING}: the work product (the gold steps run and every fact the people "
            "hold reaches the team)"
        )
    idle, why = _outcome(scenario, "scripted:idle", "A3", make_judge("rule"))
    row.results["idle"] = "ok" if not idle.success else f"idle succeeded ({why})"
    if _provisional(scenario, row):
        return row
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
    """:func:`check_task` on each task, in order, in ``workers`` processes (1: this one).

    The workers take runs of neighbouring tasks (which share what a process caches, such
    as a repository's test runs), long runs first and shorter ones as fewer tasks remain,
    so that no worker is left alone with a long run at the end.
    """
    if workers <= 1:
        yield from map(check_task, scenarios)
        return
    with worker_pool(workers) as pool:
        for rows in pool.map(_check_run, _shrinking_runs(scenarios, workers)):
            yield from rows


def _check_run(scenarios: Sequence[Scenario]) -> list[TaskCheck]:
    return [check_task(scenario) for scenario in scenarios]


def _shrinking_runs(scenarios: Sequence[Scenario], workers: int) -> list[Sequence[Scenario]]:
    """Consecutive runs of tasks, each a ``1 / (2 * workers)`` share of those left (at least 1)."""
    runs, start = [], 0
    while start < len(scenarios):
        size = max(1, (len(scenarios) - start) // (2 * workers))
        runs.append(scenarios[start : start + size])
        start += size
    return runs


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
    pending = sum(row.pending for row in rows)
    if pending:
        lines.append(f"{pending} of them pending a judge (offline there is none)")
    judged = sum(row.judge_scored for row in rows)
    if judged:
        lines.append(
            f"{judged} judge-scored tasks: their oracle checks show that what the people hold "
            "reaches the team with them and not without; the outcome itself needs an LLM judge"
        )
    return "\n".join(lines)


def _outcome(scenario: Scenario, agent: str, agency: str, judge) -> tuple[Outcome, str]:
    """One episode's outcome, and its termination and dimensions in words."""
    setting = Setting(agency=agency, persona=CHECK_PERSONA)
    trace = run_episode(scenario, setting, Backends(agent=agent))
    outcome = asyncio.run(evaluate(scenario, trace, judge))
    reason = trace.termination.reason if trace.termination else "no termination"
    return outcome, f"{reason}; {outcome.dimensions}"


def _verdict(outcome: Outcome) -> str:
    """``solved``, ``pending`` or ``failed``.

    Pending: only dimensions without a verdict (a judge's) stand between the episode and
    success.
    """
    if outcome.success:
        return "solved"
    scores = outcome.dimensions.values()
    ended = "failed_termination" not in outcome.details
    if ended and None in scores and all(v == 1.0 for v in scores if v is not None):
        return "pending"
    return "failed"


def _pending(outcome: Outcome, rest: str) -> str:
    """``pending a judge: NL_ASSERTIONS (...)`` for the dimensions without a verdict."""
    waiting = [name for name, value in outcome.dimensions.items() if value is None]
    scored = [name for name, value in outcome.dimensions.items() if value is not None]
    detail = f" ({rest}: {', '.join(scored)})" if scored and rest else ""
    return f"{PENDING}: {', '.join(waiting)}{detail}"


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


# -- the scripted user's replies ----------------------------------------------------------------

FACT_LABEL = re.compile(r"[a-z][a-z0-9]*(?: [a-z0-9]+){0,4}")
"""A fact name as the scripted user says it: a short lower-case noun phrase."""
REPLY_FORMS = (
    re.compile(r"I'd rather not say what my (?P<label>.+?) is\."),
    re.compile(r"I don't know the (?P<label>.+?)\."),
    re.compile(r"Also, in case it helps: my (?P<label>.+?) is (?P<value>.+?)\."),
    re.compile(r"My (?P<label>.+?) is (?P<value>.+?)\."),
    re.compile(r"(?P<label>[^:]+): (?P<value>.+)"),
)
"""How each line of a scripted user's answer about a fact reads (``ScriptedUser.clarify``)."""


def reply_problems(scenario: Scenario) -> list[str]:
    """Malformed answers of the scripted user to a question about each of its facts.

    Every human is asked, one question at a time, about each known_info and unknown_info
    name and about a topic it holds nothing on; each answer must be made of well-formed
    sentences: a fact is named by a short lower-case noun phrase ("email", "order id"),
    never by a sentence ("I don't know the You do not remember your email address.").
    """
    from hasbench.channels import ClarificationRequest
    from hasbench.participants.base import HumanView
    from hasbench.participants.scripted import ScriptedUser
    from hasbench.personas import get_persona

    problems = []
    for user in scenario.users:
        view = HumanView(
            user_id=user.user_id, role=user.role, goal=user.goal,
            task_instructions=user.task_instructions, known_info=dict(user.known_info),
            unknown_info=tuple(user.unknown_info), persona=get_persona(user.persona), asks=1,
        )  # fmt: skip
        for topic in [*user.known_info, *user.unknown_info, "favourite colour"]:
            request = ClarificationRequest(
                request_id="walk", sender=scenario.agents[0].agent_id, target=user.user_id,
                content=f"What is your {topic.replace('_', ' ')}?", topics=[topic],
            )  # fmt: skip
            rng = np.random.default_rng(0)
            answer = asyncio.run(ScriptedUser(rng).clarify(view, request))
            problems += [
                f"{user.user_id} asked about {topic!r}: {line!r}"
                for line in _answer_lines(answer.content, user.goal)
                if not _well_formed(line)
            ]
    return problems


def _answer_lines(content: str, goal: str) -> list[str]:
    """An answer's sentences about facts (the restated goal and fixed phrases left out)."""
    for text in (f"What I want is this: {goal}", f"Note that my goal has changed: {goal}"):
        content = content.replace(text, "\n")
    content = content.replace(
        "I'm not sure what you need from me; please ask about something specific.", "\n"
    )
    lines = re.split(r"(?<=\.)\s+(?=I'd |I don't |Also, |My )|\n", content)
    return [line.strip() for line in lines if line.strip()]


def _well_formed(line: str) -> bool:
    for form in REPLY_FORMS:
        match = form.fullmatch(line)
        if match:
            return FACT_LABEL.fullmatch(match.group("label")) is not None
    return False
