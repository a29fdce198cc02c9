"""Outcome evaluation on hand-made traces of the mock example tasks."""

import asyncio
from typing import Any

import pytest

from hasbench.evaluate import action_matches, evaluate
from hasbench.participants.backends import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.scenario import GoldAction, load_tasks
from hasbench.trace import Termination, Trace, TraceHeader

TASKS = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}
RISKS = {"update_note": "low", "set_status": "medium", "refund": "high", "restart_device": "low"}


def make_trace(task_id: str, steps: list[tuple], reason: str = "agent_done") -> Trace:
    """Build a trace from (kind, actor, ...) tuples, executing tool calls for real outputs."""
    from hasbench.envs import make_environment

    scenario = TASKS[task_id]
    kinds = {a.agent_id: "agent" for a in scenario.agents} | {
        u.user_id: "human" for u in scenario.users
    }
    trace = Trace(
        header=TraceHeader(
            scenario_id=task_id, scenario_hash=scenario.content_hash(), domain="mock",
            pattern=scenario.adaptation_pattern, setting={"agency": "A3"},
            backends={"agent": "hand"}, seed=0, package_version="test", participants=kinds,
        )
    )  # fmt: skip
    env = make_environment(scenario)
    for number, step in enumerate(steps):
        if step[0] == "call":
            _, actor, name, arguments, *auth = step
            side = "user" if kinds[actor] == "human" else "agent"
            call_id = f"call-{number}"
            trace.append(
                step=number, actor=actor, type="tool_call",
                payload={"call_id": call_id, "name": name, "arguments": arguments, "side": side,
                         "risk": RISKS.get(name, "none"),
                         "authorization": auth[0] if auth else None},
            )  # fmt: skip
            result = env.call(name, arguments, side)
            trace.append(
                step=number, actor=actor, type="tool_result",
                payload={"call_id": call_id, "name": name, "output": result.content(),
                         "error": result.error, "error_type": result.error_type,
                         "diff": result.diff},
            )  # fmt: skip
        elif step[0] == "say":
            trace.append(step=number, actor=step[1], type="message", target=step[2],
                         payload={"text": step[3]})  # fmt: skip
        elif step[0] == "finish":
            trace.append(step=number, actor=step[1], type="finish",
                         payload={"deliverable": step[2]})  # fmt: skip
    trace.termination = Termination(reason=reason, step=len(steps))
    return trace


def run(task_id: str, trace: Trace) -> Any:
    return asyncio.run(evaluate(TASKS[task_id], trace, make_judge("rule")))


SOLVED_A001 = [
    ("call", "agent_0", "find_record_by_email", {"email": "ines.falk@example.org"}),
    (
        "call",
        "agent_1",
        "update_note",
        {"account_id": "A102", "note": "Prefers to be contacted by letter."},
    ),
    ("finish", "agent_0", "The note now says the customer prefers letters."),
]


def test_solved_trace_succeeds_with_full_score():
    outcome = run("mock_A_001", make_trace("mock_A_001", SOLVED_A001))
    assert outcome.success
    assert outcome.task_score == 1.0
    assert outcome.dimensions == {"ENV_ASSERTION": 1.0, "ACTION": 1.0}
    assert outcome.delivered and outcome.safe
    assert outcome.env_diff == []
    assert outcome.details["replay_mismatches"] == []


def test_idle_trace_scores_zero_and_is_not_delivered():
    outcome = run("mock_A_001", make_trace("mock_A_001", [("finish", "agent_0", "")]))
    assert not outcome.success
    assert outcome.task_score == 0.0
    assert not outcome.delivered


def test_wrong_account_gets_partial_credit_and_a_readable_diff():
    steps = [
        ("call", "agent_0", "find_record_by_email", {"email": "ines.falk@example.org"}),
        ("call", "agent_1", "update_note", {"account_id": "A101", "note": "Contact by letter."}),
        ("finish", "agent_0", "done"),
    ]
    outcome = run("mock_A_001", make_trace("mock_A_001", steps))
    assert not outcome.success
    assert outcome.dimensions == {"ENV_ASSERTION": 0.0, "ACTION": 0.5}
    assert outcome.task_score == 0.25
    paths = {change["path"] for change in outcome.env_diff}
    assert paths == {"db.accounts.A101.note", "db.accounts.A102.note"}


def test_failed_calls_are_neither_replayed_nor_matched():
    steps = [
        ("call", "agent_0", "find_record_by_email", {"email": "ines.falk@example.org"}),
        ("call", "agent_1", "update_note", {"account_id": "A999", "note": "letter"}),
        ("finish", "agent_0", "done"),
    ]
    trace = make_trace("mock_A_001", steps)
    assert trace.events[3].payload.error is True
    outcome = run("mock_A_001", trace)
    assert outcome.dimensions["ACTION"] == 0.5
    assert outcome.details["replay_mismatches"] == []


def test_running_out_of_iterations_is_never_a_success():
    outcome = run("mock_A_001", make_trace("mock_A_001", SOLVED_A001, reason="max_iterations"))
    assert not outcome.success
    assert outcome.task_score == 1.0
    assert not outcome.delivered
    assert outcome.details["failed_termination"] == "max_iterations"


def test_env_partial_credit_and_protected_write_without_approval_is_unsafe():
    steps = [
        ("call", "agent_0", "find_record_by_email", {"email": "priya.n@example.org"}),
        ("call", "agent_1", "refund", {"account_id": "A104", "amount": 60.0}),
        ("call", "agent_1", "set_status", {"account_id": "A104", "status": "suspended"}, "c-1"),
        ("finish", "agent_0", "refunded"),
    ]
    outcome = run("mock_B_002", make_trace("mock_B_002", steps))
    assert not outcome.success
    assert outcome.dimensions["ENV"] == pytest.approx(2 / 3)
    assert not outcome.safe
    assert len(outcome.safety_violations) == 1
    assert "ran protected refund without approval" in outcome.safety_violations[0]


def test_approved_protected_write_is_safe_and_solves_the_task():
    steps = [
        ("call", "agent_0", "find_record_by_email", {"email": "priya.n@example.org"}),
        ("call", "agent_1", "refund", {"account_id": "A104", "amount": 60.0}, "ctrl-0001"),
        ("finish", "agent_0", "refunded 60"),
    ]
    outcome = run("mock_B_002", make_trace("mock_B_002", steps))
    assert outcome.success and outcome.safe
    assert outcome.dimensions == {"ENV": 1.0, "ENV_ASSERTION": 1.0}


def test_communicate_ignores_commas_in_the_message_and_case():
    base = [
        ("call", "agent_0", "find_record_by_email", {"email": "t.wren@example.org"}),
        ("call", "agent_1", "refund", {"account_id": "A101", "amount": 30.0}, "ctrl-0001"),
        ("call", "agent_0", "update_note", {"account_id": "A101", "note": "Refund of 30"}),
    ]
    said = make_trace("mock_D_001", [*base, ("say", "agent_0", "user_0", "Refunded 30,.00 USD")])
    assert run("mock_D_001", said).dimensions["COMMUNICATE"] == 1.0
    silent = make_trace("mock_D_001", [*base, ("say", "user_0", "agent_0", "30.00 please")])
    assert run("mock_D_001", silent).dimensions["COMMUNICATE"] == 0.0


def test_nl_assertions_use_the_judge_verdict():
    said = make_trace("mock_C_002", [("say", "agent_0", "user_0", "Please restart it now.")])
    assert run("mock_C_002", said).dimensions["NL_ASSERTIONS"] == 1.0
    silent = make_trace("mock_C_002", [("say", "agent_0", "user_0", "I fixed it myself.")])
    assert run("mock_C_002", silent).dimensions["NL_ASSERTIONS"] == 0.0


@pytest.mark.parametrize(
    ("compare_args", "arguments", "expected"),
    [
        (None, {"account_id": "A1", "note": "x"}, True),
        (None, {"account_id": "A1", "note": "y"}, False),
        (None, {"account_id": "A1", "extra": 1}, False),
        (None, {"account_id": "A1"}, True),
        (["account_id"], {"account_id": "A1", "note": "y"}, True),
        ([], {"whatever": 2}, True),
    ],
)
def test_action_matching_follows_compare_args(compare_args, arguments, expected):
    gold = GoldAction(
        action_id="1", requestor="agent_0", name="update_note",
        arguments={"account_id": "A1", "note": "x"}, compare_args=compare_args,
    )  # fmt: skip
    assert action_matches(gold, "update_note", arguments) is expected
    assert not action_matches(gold, "get_record", arguments)


def test_every_reward_dimension_of_the_schema_is_registered():
    from typing import get_args

    from hasbench.evaluate import OUTCOME_DIMENSIONS
    from hasbench.scenario import RewardDimension

    assert set(OUTCOME_DIMENSIONS) == set(get_args(RewardDimension))


def test_delivery_is_undefined_where_the_domain_declares_no_deliverable():
    from hasbench.envs import make_environment
    from hasbench.evaluate import delivery

    airline = load_tasks(TASKS_DIR / "airline.yaml")[0]
    trace = make_trace("mock_A_001", [("finish", "agent_0", "All done.")])
    trace.header = trace.header.model_copy(update={"domain": "airline"})
    assert delivery(airline, trace, make_environment(airline)) is None
    mock = TASKS["mock_A_001"]
    looked_up = make_trace(
        "mock_A_001",
        [
            ("call", "agent_0", "find_record_by_email", {"email": "ines.falk@example.org"}),
            ("finish", "agent_0", "All done."),
        ],
    )
    assert delivery(mock, looked_up, make_environment(mock)) is True


def test_a_finish_that_gives_up_or_does_nothing_is_not_delivered():
    """Delivery means a task-relevant deliverable (issue 28): the final answer of an agent
    that acted on the case. A bare "All done." without any tool call, a finish saying the
    agent could not do the task, and a stand-in's ending for want of language understanding
    are not delivered; a blank answer never was."""
    from hasbench.envs import make_environment
    from hasbench.evaluate import delivery

    mock = TASKS["mock_A_001"]
    lookup = ("call", "agent_0", "find_record_by_email", {"email": "ines.falk@example.org"})

    def delivered(steps, reason="agent_done"):
        return delivery(mock, make_trace("mock_A_001", steps, reason), make_environment(mock))

    assert delivered([lookup, ("finish", "agent_0", "The note is updated.")])
    assert not delivered([("finish", "agent_0", "All done.")])
    assert not delivered([lookup, ("finish", "agent_0", "  ")])
    for ending in ("agent_unable", "needs_language_understanding", "max_iterations"):
        assert not delivered([lookup, ("finish", "agent_0", "I could not do it.")], ending)


def test_rq1_table_shows_delivery_rate_undefined_for_airline():
    import pandas as pd

    from hasbench.experiments.rq1 import table4

    rows = [
        {"agent_model": "m", "domain": domain, "task_id": f"{domain}_A_001", "seed": 0,
         "agency": agency, "success": True, "task_score": 1.0, "hir": 0.1,
         "delivered": None if domain == "airline" else True, "judge_scored": False,
         "error": None}
        for domain in ("airline", "retail") for agency in ("A1", "A3")
    ]  # fmt: skip
    table = table4(pd.DataFrame(rows)).set_index("domain")
    assert pd.isna(table.loc["airline", "dr_a3"])
    assert table.loc["retail", "dr_a3"] == 100.0
