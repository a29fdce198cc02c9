"""Fixtures for the widget tests: a hand-made trace and a small offline results store."""

import sys
from pathlib import Path

import pytest
from ipykernel.kernelspec import install
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.trace import Termination, Trace, TraceHeader
from hasbench.widgets import small_run

TASKS = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}


@pytest.fixture
def scenario() -> Scenario:
    return TASKS["mock_C_001"]


@pytest.fixture
def tasks() -> dict[str, Scenario]:
    return TASKS


def hand_trace() -> Trace:
    """mock_C_001 (tree: agent_0 parent of agent_1/agent_2; user_0 supervises agent_0;
    user_1 authorizes agent_2) with an answered question, a failed tool call, a denied
    control request, an expired feedback request, a refused question and two writes."""
    scn = TASKS["mock_C_001"]
    trace = Trace(
        header=TraceHeader(
            scenario_id=scn.task_id, scenario_hash=scn.content_hash(), domain="mock",
            pattern=scn.adaptation_pattern, setting={"agency": "A3", "channels": "full"},
            backends={"agent": "hand"}, seed=0, package_version="test",
            participants={"agent_0": "agent", "agent_1": "agent", "agent_2": "agent",
                          "user_0": "human", "user_1": "human"},
        )
    )  # fmt: skip
    add = trace.append
    clar = {"channel": "clarification", "initiator": "agent"}
    add(
        step=1,
        actor="agent_0",
        type="channel_request",
        target="user_0",
        **clar,
        payload={"request_id": "clar-0001", "form": "question", "content": "What is your email?"},
    )
    add(
        step=1,
        actor="agent_0",
        type="channel_status",
        target="user_0",
        **clar,
        payload={"request_id": "clar-0001", "status": "dispatched", "reason": None},
    )
    add(
        step=1,
        actor="user_0",
        type="channel_response",
        target="agent_0",
        **clar,
        payload={
            "request_id": "clar-0001",
            "form": "question",
            "content": "It is t.wren@example.org.",
        },
    )
    add(
        step=2,
        actor="agent_0",
        type="message",
        target="agent_2",
        payload={"text": "Refund A101 please."},
    )
    add(
        step=3,
        actor="agent_2",
        type="tool_call",
        payload={
            "call_id": "call-0001",
            "name": "refund",
            "arguments": {"account_id": "A999", "amount": 5},
            "side": "agent",
            "risk": "high",
            "authorization": None,
        },
    )
    add(
        step=3,
        actor="agent_2",
        type="tool_result",
        payload={
            "call_id": "call-0001",
            "name": "refund",
            "output": "no account A999",
            "error": True,
            "error_type": "not_found",
            "diff": [],
        },
    )
    ctrl = {"channel": "control", "initiator": "agent"}
    add(
        step=4,
        actor="agent_2",
        type="channel_request",
        **ctrl,
        payload={
            "request_id": "ctrl-0001",
            "form": "approval",
            "content": "May I refund 45.5?",
            "action": {"name": "refund", "arguments": {"account_id": "A101", "amount": 45.5}},
        },
    )
    add(
        step=4,
        actor="agent_2",
        type="channel_status",
        target="user_1",
        **ctrl,
        payload={"request_id": "ctrl-0001", "status": "dispatched", "reason": None},
    )
    add(
        step=4,
        actor="user_1",
        type="channel_response",
        target="agent_2",
        **ctrl,
        payload={
            "request_id": "ctrl-0001",
            "form": "approval",
            "content": "No.",
            "decision": "deny",
        },
    )
    feed = {"channel": "feedback", "initiator": "agent"}
    add(
        step=4,
        actor="agent_0",
        type="channel_request",
        target="user_0",
        **feed,
        payload={"request_id": "feed-0001", "form": "review", "content": "Is the plan right?"},
    )
    add(
        step=5,
        actor="agent_0",
        type="channel_status",
        target="user_0",
        **feed,
        payload={"request_id": "feed-0001", "status": "expired", "reason": "no answer in time"},
    )
    add(
        step=5,
        actor="agent_2",
        type="tool_call",
        payload={
            "call_id": "call-0002",
            "name": "update_note",
            "arguments": {"account_id": "A101", "note": "x"},
            "side": "agent",
            "risk": "low",
            "authorization": None,
        },
    )
    add(
        step=5,
        actor="agent_2",
        type="tool_result",
        payload={
            "call_id": "call-0002",
            "name": "update_note",
            "output": "{}",
            "error": False,
            "error_type": None,
            "diff": [{"path": "db.accounts.A101.note", "before": "", "after": "x"}],
        },
    )
    add(
        step=6,
        actor="agent_2",
        type="tool_call",
        payload={
            "call_id": "call-0003",
            "name": "update_note",
            "arguments": {"account_id": "A101", "note": "y"},
            "side": "agent",
            "risk": "low",
            "authorization": None,
        },
    )
    add(
        step=6,
        actor="agent_2",
        type="tool_result",
        payload={
            "call_id": "call-0003",
            "name": "update_note",
            "output": "{}",
            "error": False,
            "error_type": None,
            "diff": [{"path": "db.accounts.A101.note", "before": "x", "after": "y"}],
        },
    )
    add(
        step=7,
        actor="agent_0",
        type="channel_request",
        target="user_0",
        **clar,
        payload={"request_id": "clar-0002", "form": "question", "content": "Anything else?"},
    )
    add(
        step=7,
        actor="agent_0",
        type="channel_status",
        target="user_0",
        **clar,
        payload={
            "request_id": "clar-0002",
            "status": "refused",
            "reason": "interaction budget exhausted",
        },
    )
    add(step=8, actor="agent_0", type="finish", payload={"deliverable": "Left a note."})
    trace.termination = Termination(reason="agent_done", step=8)
    return trace  # fmt: skip


@pytest.fixture
def trace() -> Trace:
    return hand_trace()


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> tuple[Path, dict[str, Scenario]]:
    """A results store: mock_C_001 and mock_A_001 × strong/weak × A1/A3, seed 0."""
    directory = tmp_path_factory.mktemp("runs") / "explore"
    # the planner presets: their known behaviour on these tasks is what the tests pin
    agents = ("scripted:strong", "scripted:weak")
    return small_run(["mock_C_001", "mock_A_001"], agents, results_dir=directory)


@pytest.fixture(scope="session")
def hasbench_kernel() -> str:
    """Register the ``hasbench`` Jupyter kernel in this environment if it is missing."""
    try:
        KernelSpecManager().get_kernel_spec("hasbench")
    except NoSuchKernel:
        install(kernel_name="hasbench", prefix=sys.prefix)
    return "hasbench"
