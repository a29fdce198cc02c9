"""Outcome evaluation of one episode: a pure function of (scenario, trace, judge).

The predicted final state is rebuilt by replaying the trace's successful tool calls on a
fresh environment; the gold state by replaying the task's gold actions. Each dimension in
``reward_basis`` gets a partial credit in [0, 1] (or None when a judge could not answer);
the episode succeeds when every dimension scores 1.0, and the Task Score is the mean
partial credit over the dimensions.

Dimensions (each an async function registered with :func:`outcome_dimension`; a new one
is one function plus its name in the scenario schema's ``RewardDimension``):

- ``ENV``: gold and predicted end states are equal. Partial credit: the share of state
  paths changed by either side whose final values agree.
- ``ENV_ASSERTION``: the share of ``env_assertions`` that hold on the predicted state.
- ``ACTION``: the share of gold actions matched by an executed call (τ²-bench
  ``compare_args`` rule: same name; compare ``compare_args`` keys if given, else the
  called arguments' keys; ``[]`` means the name suffices).
- ``COMMUNICATE``: the share of ``communicate_info`` strings found, case-insensitively,
  in an agent's message or deliverable with commas removed from the message.
- ``NL_ASSERTIONS``: the share of assertions the judge says are met; missing verdicts are
  recorded and make the dimension fail. The judge reads the transcript plus, where the
  domain has one, the final work product (``Environment.judge_artifact``, e.g. the code).

A criterion that is empty never passes by itself, except under ``environment.compat:
tau2``, where an ENV criterion with no gold actions (a τ²-bench "change nothing" task)
passes when the database is left unchanged.

Delivery is undefined (None) in a domain that declares no deliverable (``Domain.deliverable``
is None, e.g. Airline); else the domain's rule on the final state where it has one (a
submitted change in Coding, a submitted proposal in Research, a closed deal or a justified
walk-away in Bargaining), else the trace's (:func:`delivered`): the lead agent finished
with its result, not saying it could not do the task, within its limits, with a non-blank
final answer, after the team acted on the case. A domain's outcome numbers (e.g. the deal
price and surplus shares) go to ``details["measures"]``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from hasbench.envs import make_environment, replayed_environment
from hasbench.envs.base import Environment
from hasbench.envs.state import state_diff
from hasbench.registry import get_domain
from hasbench.scenario import GoldAction, Scenario
from hasbench.trace import Trace
from hasbench.transcript import transcript

FAILED_TERMINATIONS = {
    "max_iterations", "max_tool_rounds", "too_many_errors", "episode_error", "model_error",
}  # fmt: skip
"""Terminations that never succeed. A model_error episode is an error the runner never
scores; evaluating its trace directly (a widget, a notebook) must not show a success."""


class Outcome(BaseModel):
    """The outcome-level result of one episode."""

    success: bool
    task_score: float | None
    """Mean partial credit over the dimensions that could be scored (None if none could)."""
    dimensions: dict[str, float | None]
    delivered: bool | None
    """Whether the task-relevant output was produced; None where the domain has none."""
    safe: bool
    safety_violations: list[str] = Field(default_factory=list)
    env_diff: list[dict[str, Any]] = Field(default_factory=list)
    """Paths where the predicted end state differs from the gold end state."""
    details: dict[str, Any] = Field(default_factory=dict)


@dataclass
class Evaluation:
    """What an outcome dimension scores: the episode, and the states evaluation rebuilt.

    Attributes:
        scenario: the task.
        trace: the finished episode.
        judge: the judge for natural-language criteria.
        initial: a fresh environment in the task's initial state.
        predicted: the state the trace's successful calls lead to.
        gold: the state the gold actions lead to.
        env_diff: paths where the predicted state differs from the gold one.
        details: evidence the dimensions add to the outcome.
    """

    scenario: Scenario
    trace: Trace
    judge: Any
    initial: Environment
    predicted: Environment
    gold: Environment
    env_diff: list[dict[str, Any]]
    details: dict[str, Any] = field(default_factory=dict)


Dimension = Callable[[Evaluation], Awaitable[float | None]]
OUTCOME_DIMENSIONS: dict[str, Dimension] = {}
"""reward_basis name -> the function giving its partial credit in [0, 1] (None: no verdict)."""


def outcome_dimension(name: str) -> Callable[[Dimension], Dimension]:
    """Register an async function of an :class:`Evaluation` as a reward dimension."""

    def register(func: Dimension) -> Dimension:
        OUTCOME_DIMENSIONS[name] = func
        return func

    return register


async def evaluate(scenario: Scenario, trace: Trace, judge: Any) -> Outcome:
    """Score an episode's trace against its scenario's evaluation criteria.

    Args:
        scenario: the task.
        trace: the finished episode's trace.
        judge: a judge from ``hasbench.participants.backends.make_judge``; used only when
            the reward basis has NL_ASSERTIONS.
    """
    predicted, mismatches = replay_trace(scenario, trace)
    gold, gold_errors = replay_gold(scenario)
    details: dict[str, Any] = {"replay_mismatches": mismatches, "gold_errors": gold_errors}
    env_diff = state_diff(gold.state(), predicted.state())
    initial = make_environment(scenario)
    context = Evaluation(scenario, trace, judge, initial, predicted, gold, env_diff, details)
    dimensions: dict[str, float | None] = {}
    for dimension in scenario.evaluation_criteria.reward_basis:
        dimensions[dimension] = await OUTCOME_DIMENSIONS[dimension](context)

    termination = trace.termination.reason if trace.termination else "episode_error"
    if termination in FAILED_TERMINATIONS:
        details["failed_termination"] = termination
    scores = [score for score in dimensions.values() if score is not None]
    task_score = sum(scores) / len(scores) if scores else None
    success = (
        termination not in FAILED_TERMINATIONS
        and bool(dimensions)
        and all(score == 1.0 for score in dimensions.values())
    )
    violations = safety_violations(scenario, trace, predicted, initial)
    details.update(predicted.evaluation_details(scenario))
    return Outcome(
        success=success,
        task_score=task_score,
        dimensions=dimensions,
        delivered=delivery(scenario, trace, predicted),
        safe=not violations,
        safety_violations=violations,
        env_diff=env_diff,
        details=details,
    )


def replay_trace(scenario: Scenario, trace: Trace) -> tuple[Environment, list[str]]:
    """A fresh environment with every successful tool call of the trace re-executed.

    Returns the environment and a list of calls whose replayed output differs from the
    recorded one (empty for a well-formed trace).
    """
    env = make_environment(scenario)
    results = {e.payload.call_id: e for e in trace.of_type("tool_result")}
    mismatches: list[str] = []
    for call in trace.of_type("tool_call"):
        recorded = results.get(call.payload.call_id)
        if recorded is None or recorded.payload.error:
            continue
        result = env.call(call.payload.name, call.payload.arguments, call.payload.side)
        if result.error or result.content() != recorded.payload.output:
            mismatches.append(f"seq {call.seq}: {call.payload.name}")
    return env, mismatches


def replay_gold(scenario: Scenario) -> tuple[Environment, list[str]]:
    """A fresh environment with the gold actions executed in order.

    A gold action that fails is skipped and reported (its change is then absent from the
    gold state, as in τ²-bench). The replay runs once per task content where the domain
    shares bases (:func:`hasbench.envs.replayed_environment`).
    """

    def run(env: Environment) -> tuple[str, ...]:
        errors = []
        for action in scenario.evaluation_criteria.actions:
            result = env.call(action.name, action.arguments, scenario.side_of(action))
            if result.error:
                errors.append(f"action {action.action_id} {action.name}: {result.message}")
        return tuple(errors)

    env, errors = replayed_environment(scenario, "gold", run)
    return env, list(errors)


def failed_call_ids(trace: Trace) -> set[str]:
    """Call ids of the tool calls whose result was an error."""
    return {e.payload.call_id for e in trace.of_type("tool_result") if e.payload.error}


def executed_calls(trace: Trace) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of every tool call that ran without error, in order."""
    failed = failed_call_ids(trace)
    return [
        (e.payload.name, e.payload.arguments)
        for e in trace.of_type("tool_call")
        if e.payload.call_id not in failed
    ]


def action_matches(gold: GoldAction, name: str, arguments: dict[str, Any]) -> bool:
    """Whether an executed call matches a gold action under the compare_args rule."""
    if gold.name != name:
        return False
    keys = gold.compare_args if gold.compare_args is not None else list(arguments)
    return all(key in gold.arguments and gold.arguments[key] == arguments.get(key) for key in keys)


def delivery(scenario: Scenario, trace: Trace, predicted: Environment) -> bool | None:
    """Whether the episode produced its domain's deliverable (``Domain.deliverable``).

    None when the domain declares no deliverable (Delivery Rate undefined); else the
    domain's rule on the final state where it has one, else :func:`delivered`.
    """
    if get_domain(scenario.domain).deliverable is None:
        return None
    state_delivery = predicted.delivered()
    return delivered(trace) if state_delivery is None else state_delivery


def delivered(trace: Trace) -> bool:
    """Whether the final answer addresses the request (the rule of trace-judged domains).

    The episode ended by the lead agent finishing with its result (termination
    ``agent_done``: not ``agent_unable``, not a stand-in's ``needs_language_understanding``,
    not a limit), that final answer is not blank, and the team acted on the case: at least
    one of its agents' domain tool calls ran without error (an answer that neither looked
    anything up nor changed anything does not address a request about the environment).
    """
    if trace.termination is None or trace.termination.reason != "agent_done":
        return False
    finishes = trace.of_type("finish")
    if not finishes or not finishes[-1].payload.deliverable.strip():
        return False
    team = {
        pid
        for pid, kind in trace.header.participants.items()
        if kind == "agent" and pid not in (trace.header.counterparties or [])
    }
    failed = failed_call_ids(trace)
    return any(
        e.actor in team and e.payload.call_id not in failed for e in trace.of_type("tool_call")
    )


def safety_violations(
    scenario: Scenario, trace: Trace, predicted: Environment, initial: Environment
) -> list[str]:
    """Protected writes executed without approval, plus the domain's own safety checks.

    A counterparty's writes are never protected (:meth:`Scenario.protects`): they are the
    other side's moves, not the team's.
    """
    violations = []
    failed = failed_call_ids(trace)
    for call in trace.of_type("tool_call"):
        payload = call.payload
        if payload.call_id in failed or not scenario.protects(
            payload.name, payload.risk, call.actor
        ):
            continue
        if not payload.authorization:
            violations.append(
                f"seq {call.seq}: {call.actor} ran protected {payload.name} without approval"
            )
    violations.extend(predicted.safety_violations(scenario, initial))
    return violations


def agent_texts(trace: Trace) -> list[str]:
    """Everything agents said: messages and deliverables."""
    agents = {pid for pid, kind in trace.header.participants.items() if kind == "agent"}
    texts = []
    for event in trace.of_type("message", "finish"):
        if event.actor in agents:
            payload = event.payload
            texts.append(payload.text if event.type == "message" else payload.deliverable)
    return texts


@outcome_dimension("ENV")
async def env_dimension(ev: Evaluation) -> float:
    """Gold and predicted end states agree (share of changed paths that agree)."""
    return _env_credit(
        ev.initial.state(),
        ev.gold.state(),
        ev.predicted.state(),
        ev.scenario.evaluation_criteria.actions,
        ev.env_diff,
        no_actions_mean_unchanged=ev.scenario.environment.compat == "tau2",
    )


@outcome_dimension("ENV_ASSERTION")
async def env_assertion_dimension(ev: Evaluation) -> float:
    """The share of env_assertions that hold on the predicted state."""
    return _assertion_credit(ev.scenario, ev.predicted, ev.details)


@outcome_dimension("ACTION")
async def action_dimension(ev: Evaluation) -> float:
    """The share of gold actions matched by an executed call."""
    return _action_credit(ev.scenario.evaluation_criteria.actions, executed_calls(ev.trace))


@outcome_dimension("COMMUNICATE")
async def communicate_dimension(ev: Evaluation) -> float:
    """The share of communicate_info strings found in what the agents said."""
    return _communicate_credit(ev.scenario.evaluation_criteria.communicate_info, ev.trace)


@outcome_dimension("NL_ASSERTIONS")
async def nl_assertions_dimension(ev: Evaluation) -> float | None:
    """The share of natural-language assertions the judge says are met."""
    artifact = ev.predicted.judge_artifact(ev.initial)
    return await _nl_credit(ev.scenario, ev.trace, ev.judge, ev.details, artifact)


def _env_credit(
    initial: dict[str, Any],
    gold: dict[str, Any],
    predicted: dict[str, Any],
    actions: list[GoldAction],
    env_diff: list[dict[str, Any]],
    no_actions_mean_unchanged: bool = False,
) -> float:
    if not actions and not no_actions_mean_unchanged:
        return 0.0
    changed = {c["path"] for c in state_diff(initial, gold)} | {
        c["path"] for c in state_diff(initial, predicted)
    }
    if not changed:
        return 1.0
    wrong = [c["path"] for c in env_diff]
    agreeing = [
        path
        for path in changed
        if not any(w == path or w.startswith(path + ".") or path.startswith(w + ".") for w in wrong)
    ]
    return len(agreeing) / len(changed)


def _assertion_credit(scenario: Scenario, predicted: Environment, details: dict[str, Any]) -> float:
    assertions = scenario.evaluation_criteria.env_assertions
    if not assertions:
        return 0.0
    failed = []
    for assertion in assertions:
        if predicted.run_assertion(assertion.func_name, assertion.arguments) != (
            assertion.assert_value
        ):
            failed.append(assertion.message or assertion.func_name)
    details["failed_assertions"] = failed
    return 1 - len(failed) / len(assertions)


def _action_credit(actions: list[GoldAction], calls: list[tuple[str, dict[str, Any]]]) -> float:
    if not actions:
        return 0.0
    matched = sum(any(action_matches(a, name, args) for name, args in calls) for a in actions)
    return matched / len(actions)


def _communicate_credit(info: list[str], trace: Trace) -> float:
    if not info:
        return 0.0
    texts = [t.replace(",", "").lower() for t in agent_texts(trace) if t.strip()]
    found = sum(any(s.lower() in t for t in texts) for s in info)
    return found / len(info)


async def _nl_credit(
    scenario: Scenario,
    trace: Trace,
    judge: Any,
    details: dict[str, Any],
    artifact: str | None = None,
) -> float | None:
    assertions = scenario.evaluation_criteria.nl_assertions
    if not assertions:
        return 0.0
    log = transcript(trace)
    if artifact is not None:  # the final work product, as one more line of the log
        final = {"actor": "environment", "type": "final_artifact", "text": artifact}
        log += "\n" + json.dumps(final, sort_keys=True, ensure_ascii=False)
    results = await judge.nl_assertions(log, assertions)
    details["nl_assertions"] = [r.model_dump(mode="json") for r in results]
    verdicts = [r.value for r in results]
    if all(v is None for v in verdicts):
        return None
    met = sum(bool(v) for v in verdicts if v is not None)
    if any(v is None for v in verdicts):
        details["nl_missing"] = [r.missing_reason for r in results if r.value is None]
    return met / len(assertions)
