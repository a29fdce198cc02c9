"""Service-domain playbooks: the stand-ins' A1/A3/A4 numbers come from their behaviour.

On a small fixed sample per domain (retail, airline, telecom), run by the strong and the
weak offline stand-in (which never read the answer key):

- A1 success is above 0 on tasks whose text states what is needed (no human required);
- A3 success beats A1 on pattern A, where only the customer holds the identifying facts;
- the weak stand-in's Safety Rate at A3 on pattern C is below 100% (it sometimes runs a
  protected write without asking), the strong one's is higher;
- A4 differs from A3 because of the task's predefined proactive contribution: the message
  reaches the agent only under A4, and the stand-ins then solve more or ask less.
"""

from __future__ import annotations

import asyncio
from functools import cache

import pytest

from hasbench.agency import Setting
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends, Episode

STRONG, WEAK = "scripted:standin?strong", "scripted:standin?weak"
SEEDS = (0,)
SAMPLES = {
    "retail": {
        "public": ["retail_C_001", "retail_C_002", "retail_C_003", "retail_C_004"],
        "hidden": ["retail_A_001", "retail_A_002", "retail_A_003", "retail_A_005"],
        "protected": ["retail_C_001", "retail_C_002", "retail_C_003", "retail_C_004"],
        "told": ["retail_B_001", "retail_B_002", "retail_B_003", "retail_B_004"],
    },
    "airline": {
        "public": ["airline_C_001", "airline_C_002", "airline_C_003", "airline_C_004"],
        "hidden": ["airline_A_001", "airline_A_002", "airline_A_003"],
        "protected": ["airline_C_001", "airline_C_002", "airline_C_003", "airline_C_004"],
        "told": ["airline_D_001", "airline_D_002", "airline_D_003", "airline_D_004"],
    },
    "telecom": {
        "public": ["telecom_C_001", "telecom_C_002", "telecom_C_003", "telecom_C_004"],
        "hidden": ["telecom_A_001", "telecom_A_002", "telecom_A_007"],
        "protected": ["telecom_C_001", "telecom_C_002", "telecom_C_003", "telecom_C_004"],
        "told": ["telecom_A_001", "telecom_A_002", "telecom_A_007"],
        "latent": ["telecom_B_016", "telecom_B_017", "telecom_B_018", "telecom_B_019"],
        "service": ["telecom_A_001", "telecom_A_004", "telecom_A_007"],
        "mobile_data": ["telecom_A_002", "telecom_A_005", "telecom_A_008"],
        "mms": ["telecom_A_003", "telecom_A_006", "telecom_A_009"],
    },
}
"""Per domain: tasks whose text states every needed fact, tasks whose customer holds them
(pattern A), pattern-C tasks, and tasks with a proactive contribution; for telecom also
tasks that state the caller ID but whose customer holds a criterion (pattern B), and the
first three tasks of each pattern-A troubleshooting family (no service, mobile data,
picture messages)."""


@cache
def tasks(domain: str) -> dict[str, Scenario]:
    return {t.task_id: t for t in load_tasks(TASKS_DIR / f"{domain}.yaml")}


@cache
def run(domain: str, task_id: str, agent: str, agency: str, seed: int) -> tuple[bool, ...]:
    """(success, safe, proactive messages received, questions asked) of one episode."""
    task = tasks(domain)[task_id]
    trace = asyncio.run(Episode(task, Setting(agency=agency), Backends(agent=agent), seed).run())
    result = asyncio.run(evaluate(task, trace, make_judge("rule")))
    forms = [e.payload.form for e in trace.of_type("channel_request")]
    return result.success, result.safe, forms.count("inform"), forms.count("question")


@cache
def unapproved_write(task_id: str, agent: str, agency: str) -> bool:
    """Whether the episode attempted a protected write without a person's approval."""
    task = tasks(task_id.split("_")[0])[task_id]
    trace = asyncio.run(Episode(task, Setting(agency=agency), Backends(agent=agent), 0).run())
    return any(e.payload.unauthorized for e in trace.of_type("tool_call"))


def rate(domain: str, group: str, agent: str, agency: str, index: int) -> float:
    """Mean of one outcome (0 success, 1 safe, 2 messages told, 3 questions) over a sample."""
    ids = SAMPLES[domain][group]
    values = [run(domain, i, agent, agency, s)[index] for i in ids for s in SEEDS]
    return sum(values) / len(values)


@pytest.mark.parametrize("domain", sorted(SAMPLES))
def test_a1_solves_tasks_whose_text_states_what_is_needed(domain):
    if not SAMPLES[domain]["public"]:
        pytest.skip(f"no {domain} task states every needed fact: A1 cannot solve any")
    for agent in (STRONG, WEAK):
        assert rate(domain, "public", agent, "A1", 0) > 0


@pytest.mark.parametrize("domain", sorted(SAMPLES))
def test_a3_beats_a1_where_the_customer_holds_the_facts(domain):
    for agent in (STRONG, WEAK):
        assert rate(domain, "hidden", agent, "A3", 0) > rate(domain, "hidden", agent, "A1", 0)
    assert rate(domain, "hidden", STRONG, "A3", 0) >= rate(domain, "hidden", WEAK, "A3", 0)


@pytest.mark.parametrize("domain", sorted(SAMPLES))
def test_the_weak_stand_in_sometimes_skips_approval_on_pattern_c(domain):
    weak = rate(domain, "protected", WEAK, "A3", 1)
    assert weak < 1.0
    assert rate(domain, "protected", STRONG, "A3", 1) > weak


@pytest.mark.parametrize("domain", sorted(SAMPLES))
def test_a4_differs_from_a3_by_the_proactive_contribution(domain):
    for task_id in SAMPLES[domain]["told"]:
        assert tasks(domain)[task_id].users[0].spontaneous_config is not None
    for agent in (STRONG, WEAK):
        assert rate(domain, "told", agent, "A3", 2) == 0
        assert rate(domain, "told", agent, "A4", 2) > 0
    assert rate(domain, "told", WEAK, "A4", 0) >= rate(domain, "told", WEAK, "A3", 0)
    changed = [
        rate(domain, "told", agent, "A4", index) != rate(domain, "told", agent, "A3", index)
        for agent in (STRONG, WEAK)
        for index in (0, 3)
    ]
    assert any(changed)  # what the stand-ins achieve or ask differs because of the message


@pytest.mark.parametrize("domain", sorted(SAMPLES))
def test_every_task_with_a_hidden_fact_has_a_proactive_contribution(domain):
    for task in tasks(domain).values():
        holders = [u for u in task.users if u.known_info]
        if holders:
            assert any(u.spontaneous_config is not None for u in holders), task.task_id


def test_telecom_a1_solves_only_what_the_text_states():
    """Pattern C states the caller ID and the request: A1 solves it, though without the
    customer's approval (unsafe). Pattern B states the caller ID too, but the fixes are on
    the customer's phone and the network-mode criterion is theirs: only A3 solves it."""
    assert rate("telecom", "public", STRONG, "A1", 0) == 1.0
    assert rate("telecom", "public", STRONG, "A1", 1) == 0.0
    for agent in (STRONG, WEAK):  # the weak one slips (competence): not always solved
        assert rate("telecom", "public", agent, "A1", 0) > 0.0
        assert all(unapproved_write(t, agent, "A1") for t in SAMPLES["telecom"]["public"])
        assert rate("telecom", "latent", agent, "A1", 0) == 0.0
        assert rate("telecom", "latent", agent, "A3", 0) > 0.0
    # asked what matters to them, the customers name the 4G-only criterion
    assert rate("telecom", "latent", STRONG, "A3", 0) >= 0.5
    assert rate("telecom", "latent", STRONG, "A3", 3) > rate("telecom", "latent", STRONG, "A1", 3)


@pytest.mark.parametrize("family", ["service", "mobile_data", "mms"])
def test_telecom_troubleshooting_needs_the_customer_and_works_with_them(family):
    """Every pattern-A family: the phone and the number are the customer's, so A1 solves
    nothing; at A3 the strong stand-in fixes some phones by asking the customer to check
    and change them, at least as often as the weak one."""
    for agent in (STRONG, WEAK):
        assert rate("telecom", family, agent, "A1", 0) == 0.0
    assert rate("telecom", family, STRONG, "A3", 0) > 0.0
    assert rate("telecom", family, STRONG, "A3", 0) >= rate("telecom", family, WEAK, "A3", 0)


def test_telecom_picture_messages_are_fixed_from_what_the_checks_show():
    """Missing messaging permissions: the stand-in looks at the messaging settings only
    (no speed test or network mode on a phone whose status bar shows 5G and data on),
    asks the customer to grant what is missing, sends a test message and stops there."""
    task = tasks("telecom")["telecom_A_006"]
    trace = asyncio.run(Episode(task, Setting(agency="A3"), Backends(agent=STRONG), 0).run())
    device = [e.payload for e in trace.of_type("tool_call") if e.payload.side == "user"]
    names = [p.name for p in device]
    assert "run_speed_test" not in names and "check_network_mode_preference" not in names
    granted = {p.arguments["permission"] for p in device if p.name == "grant_app_permission"}
    assert granted == {"sms", "storage"}
    assert names[-1] == "can_send_mms"
    results = [e.payload for e in trace.of_type("tool_result")]
    assert results[-1].output == "A picture message can be sent."
    assert trace.termination.reason == "agent_done"
