"""Stand-in profiles are agents, not only askers: competence, restraint, drafts for review."""

from __future__ import annotations

import asyncio
from functools import cache

from hasbench.agency import Setting
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends, Episode

STRONG, WEAK, CAREFUL = (f"scripted:standin?{p}" for p in ("strong", "weak", "careful"))


@cache
def tasks(domain: str) -> dict[str, Scenario]:
    return {t.task_id: t for t in load_tasks(TASKS_DIR / f"{domain}.yaml")}


@cache
def run(domain: str, task_id: str, agent: str, agency: str = "A1", channels: str = "full"):
    task = tasks(domain)[task_id]
    setting = Setting(agency=agency, channels=channels)
    trace = asyncio.run(Episode(task, setting, Backends(agent=agent), 0).run())
    return trace, asyncio.run(evaluate(task, trace, make_judge("rule")))


def writes(trace):
    return [(e.payload.name, e.payload.arguments) for e in trace.of_type("tool_call")
            if e.payload.risk != "none"]  # fmt: skip


def test_an_incompetent_stand_in_mixes_up_look_alike_records():
    """With competence 0 the stand-in's write takes another order of the same customer (a
    look-alike it saw in the customer's details), as a model mixing up records would; the
    meant order is the one the competent stand-in uses."""
    trace, _ = run("retail", "retail_C_002", "scripted:standin")
    slipped, _ = run("retail", "retail_C_002", "scripted:standin?competence=0")
    (name, meant), (same, mixed) = writes(trace)[0], writes(slipped)[0]
    assert name == same and meant["order_id"] != mixed["order_id"]
    assert {k: v for k, v in meant.items() if k != "order_id"} == {
        k: v for k, v in mixed.items() if k != "order_id"
    }
    orders = [e.payload.output for e in slipped.of_type("tool_result")
              if e.payload.name == "get_user_details"]  # fmt: skip
    assert mixed["order_id"] in orders[0]


def test_the_weak_stand_in_is_less_competent_than_the_strong_one_without_people():
    """Under A1 (nobody to ask or to approve) the profiles differ in competence, not only in
    how they involve people: the weak one solves fewer tasks in at least three domains."""
    lower = []
    for domain in ("retail", "airline", "telecom", "bargaining"):
        ids = [i for i, t in tasks(domain).items() if t.adaptation_pattern in "CDE"][:15]
        strong = sum(run(domain, i, STRONG)[1].success for i in ids)
        weak = sum(run(domain, i, WEAK)[1].success for i in ids)
        assert weak <= strong
        lower.append(weak < strong)
    assert sum(lower) >= 3


def test_a_careful_stand_in_declines_a_protected_action_nobody_can_approve():
    """Under A1 nobody may approve the cancellation: the careful stand-in does not run it and
    finishes saying so (safe, not delivered); the strong one runs it unapproved. Under A3 the
    careful one asks and is approved."""
    trace, careful = run("retail", "retail_C_001", CAREFUL)
    assert writes(trace) == [] and careful.safe and not careful.delivered
    assert trace.termination.reason == "agent_unable"
    assert "approval" in trace.of_type("finish")[-1].payload.deliverable
    trace, strong = run("retail", "retail_C_001", STRONG)
    assert not strong.safe
    trace, careful = run("retail", "retail_C_001", CAREFUL, "A3")
    assert careful.success and careful.safe


def test_without_anyone_to_ask_a_stand_in_shows_a_draft_with_the_gap():
    """Feedback only: the stand-in cannot ask for the customer's email, so it shows a draft
    that leaves the email open; the reviewer's correction supplies it and the task is
    solved. Under A1 (nobody to review) it is not."""
    trace, fed = run("examples", "mock_A_001", "scripted:standin", "A3", "feed-only")
    drafts = [e.payload.content for e in trace.of_type("channel_request")
              if e.payload.form == "review"]  # fmt: skip
    assert drafts and "<email?>" in drafts[0]
    edits = [e.payload.edits for e in trace.of_type("channel_response") if e.payload.edits]
    assert edits and "email" in edits[0]
    assert fed.success
    assert not run("examples", "mock_A_001", "scripted:standin")[1].success
