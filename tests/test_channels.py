import re

import pytest

from hasbench.channels import (
    CHANNEL_TOOLS,
    ActionRef,
    Budget,
    ChannelController,
    ChannelRefused,
    ClarificationResponse,
    ControlDecision,
    Effect,
    FeedbackResponse,
    classify,
    effect_of,
    parse_channel_call,
)
from hasbench.graph import HASGraph, Participant
from hasbench.tools import ToolSpec


def make_graph():
    people = [
        Participant(id="agent_0", kind="agent"),
        Participant(id="agent_1", kind="agent"),
        Participant(id="owner", kind="human"),
        Participant(id="expert", kind="human"),
    ]
    edges = [
        ("owner", "agent_0", "supervises"),
        ("expert", "agent_1", "informs"),
        ("agent_0", "agent_1", "delegates"),
    ]
    return HASGraph(people, edges, "star", "t")


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, **event):
        self.events.append(event)

    def statuses(self, request_id):
        return [
            e["payload"].status
            for e in self.events
            if e["type"] == "channel_status" and e["payload"].request_id == request_id
        ]


def controller(channel="clarification", enabled=True, limit=10, graph=None, record=None):
    record = record if record is not None else Recorder()
    budget = Budget(limit)
    return ChannelController(channel, enabled, graph or make_graph(), budget, record), record


def test_lifecycle_is_recorded_and_ids_are_unique_and_deterministic():
    ctl, rec = controller()
    first = ctl.open(sender="agent_0", content="Which email?", form="question", topics=["email"])
    assert first.request_id == "clar-0001"
    assert first.target == "owner"  # routed along the supervises edge
    ctl.dispatch(first)
    ctl.answer(first, "owner", ClarificationResponse(content="a@b.c", info={"email": "a@b.c"}))
    assert rec.statuses("clar-0001") == ["validated", "pending", "dispatched"]
    types = [e["type"] for e in rec.events]
    assert types[0] == "channel_request" and types[-1] == "channel_response"
    response = rec.events[-1]
    assert response["actor"] == "owner" and response["target"] == "agent_0"
    assert response["payload"].model_dump(mode="json") == {
        "request_id": "clar-0001", "form": "question", "content": "a@b.c",
        "info": {"email": "a@b.c"},
    }  # fmt: skip
    assert first.status == "answered"
    second = ctl.open(sender="agent_1", content="Who paid?", form="question")
    assert second.request_id == "clar-0002" and second.target == "expert"


def test_budget_is_shared_and_over_budget_requests_expire_with_reason():
    rec = Recorder()
    graph = make_graph()
    budget = Budget(1)
    clar = ChannelController("clarification", True, graph, budget, rec)
    feed = ChannelController("feedback", True, graph, budget, rec)
    assert clar.open(sender="agent_0", content="q", form="question").status == "pending"
    late = feed.open(sender="agent_0", content="draft", form="review")
    assert late.request_id == "feed-0001"
    assert late.status == "expired" and "budget" in late.reason
    assert rec.statuses("feed-0001") == ["validated", "expired"]


def test_disabled_channel_is_refused_with_a_typed_error():
    ctl, rec = controller("feedback", enabled=False)
    with pytest.raises(ChannelRefused) as info:
        ctl.open(sender="agent_0", content="draft", form="review")
    assert info.value.error_type == "channel_refused"
    assert rec.statuses("feed-0001") == ["refused"]


def test_edge_that_does_not_carry_the_channel_is_refused():
    # expert only "informs" agent_1: clarification, never control
    ctl, rec = controller("control")
    with pytest.raises(ChannelRefused) as info:
        ctl.open(
            sender="agent_1", content="approve?", form="approval", target="expert",
            action=ActionRef(name="refund", arguments={"amount": 1}),
        )  # fmt: skip
    assert info.value.error_type == "routing_error"
    assert rec.statuses("ctrl-0001") == ["refused"]
    # with no target, no human is reachable over control from agent_1 at all
    with pytest.raises(ChannelRefused):
        ctl.open(sender="agent_1", content="approve?", form="approval")


def test_human_initiated_request_checks_the_edge_and_needs_no_answer():
    ctl, rec = controller("feedback")
    request = ctl.open(
        sender="owner", target="agent_0", content="Too long.", form="comment", initiator="human"
    )
    ctl.dispatch(request)
    assert ctl.open_requests() == []
    assert rec.events[0]["initiator"] == "human"
    with pytest.raises(ChannelRefused):
        ctl.open(sender="expert", target="agent_1", content="x", form="comment", initiator="human")


def test_terminate_closes_open_requests():
    ctl, rec = controller()
    request = ctl.open(sender="agent_0", content="q", form="question")
    ctl.dispatch(request)
    assert ctl.open_requests() == [request]
    ctl.terminate(request, "episode ended")
    assert request.status == "terminated" and ctl.open_requests() == []


def test_response_objects_validate_their_fields():
    with pytest.raises(ValueError):
        FeedbackResponse(content="meh", rating=9)
    with pytest.raises(ValueError):
        ControlDecision(decision="maybe")
    decision = ControlDecision(decision="modify", arguments={"amount": 30.0})
    assert decision.arguments == {"amount": 30.0}


# HAS paper App. A.1 examples, paraphrased: classification by effect, not wording.
A1_EXAMPLES = [
    # "Don't send that message" while a send is pending: blocks an action -> control.
    (Effect(on_action=True, on_output=True), "control"),
    # "The draft reads too casually, rewrite it": critique of an artifact -> feedback.
    (Effect(on_output=True), "feedback"),
    # Asking the human to sign in / run a tool on their side: who executes -> control.
    (Effect(on_action=True, on_information=True), "control"),
    # "Which of your two accounts should I use?": missing information -> clarification.
    (Effect(on_information=True), "clarification"),
    # A corrected fact that updates what the agent knows -> clarification.
    (Effect(on_information=True), "clarification"),
    # A critique of a summary built from that fact -> feedback, even though it mentions facts.
    (Effect(on_output=True, on_information=True), "feedback"),
]


@pytest.mark.parametrize(("effect", "expected"), A1_EXAMPLES)
def test_classify_follows_control_then_feedback_then_clarification(effect, expected):
    assert classify(effect) == expected


def test_classify_event_forms():
    assert classify(effect_of("stop")) == "control"
    assert classify(effect_of("execute")) == "control"
    assert classify(effect_of("comment")) == "feedback"
    assert classify(effect_of("question")) == "clarification"
    assert classify(effect_of("comment", has_action=True)) == "control"
    assert classify(Effect()) is None


def test_channel_tools_are_declared_for_each_channel():
    assert {spec.name for spec in CHANNEL_TOOLS.values()} == {
        "ask_clarification", "request_feedback", "request_control",
    }  # fmt: skip
    control = CHANNEL_TOOLS["control"].to_openai()["function"]["parameters"]
    assert control["properties"]["mode"]["enum"] == ["approval", "execute"]
    for spec in CHANNEL_TOOLS.values():  # every argument says what it is
        for name, schema in spec.parameters["properties"].items():
            assert schema.get("description"), (spec.name, name)


def test_request_control_is_typed_for_the_actions_an_agent_may_ask_about():
    from hasbench.agency import Setting
    from hasbench.paths import TASKS_DIR
    from hasbench.scenario import load_tasks
    from hasbench.simulator import Episode

    tasks = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}
    episode = Episode(tasks["mock_C_002"], Setting(agency="A3"))
    tools = {spec.name: spec for spec in episode.agent_view("agent_0").tools}
    control = tools["request_control"].parameters["properties"]
    specs = episode.tool_specs
    names = control["tool_name"]["enum"]
    assert "restart_device" in names  # the customer can carry it out (execute)
    assert all(specs[n].kind == "write" or specs[n].side == "user" for n in names)
    assert control["arguments"]["anyOf"] == [
        {**specs[n].parameters, "description": f"Arguments of {n}."} for n in names
    ]
    assert control["mode"]["enum"] == ["approval", "execute"]


WRITE = ToolSpec("refund", "Refund.", {}, kind="write", side="agent", risk="high")


def test_a_channel_call_is_read_into_the_request_it_opens():
    ask = parse_channel_call(
        "ask_clarification", {"question": "Email?", "topics": ["email"], "target": "owner"}, {}
    )
    assert (ask.channel, ask.form, ask.content, ask.target, ask.topics) == (
        "clarification", "question", "Email?", "owner", ["email"],
    )  # fmt: skip
    review = parse_channel_call("request_feedback", {"artifact": "Plan", "question": "OK?"}, {})
    assert (review.channel, review.form, review.content) == ("feedback", "review", "Plan\n\nOK?")
    arguments = {"amount": 5}
    approval = parse_channel_call(
        "request_control",
        {"tool_name": "refund", "arguments": arguments, "mode": "approval", "reason": "policy"},
        {"refund": WRITE},
    )
    assert (approval.form, approval.content, approval.tool) == (
        "approval", "Please approve refund: policy", WRITE,
    )  # fmt: skip
    assert approval.action == ActionRef(name="refund", arguments=arguments)
    execute = parse_channel_call(
        "request_control", {"tool_name": "refund", "mode": "execute"}, {"refund": WRITE}
    )
    assert (execute.form, execute.content, execute.action.arguments) == (
        "execute", "Please carry out refund.", {},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("ask_clarification", {"question": "Q", "target": 3}, "target must be a participant id"),
        ("ask_clarification", {"question": " "}, "question must be a non-empty string"),
        ("ask_clarification", {"question": "Q", "topics": "email"}, "topics must be a list"),
        ("request_feedback", {}, "artifact must be a non-empty string"),
        ("request_control", {"tool_name": "refund"}, "mode must be 'approval' or 'execute'"),
        (
            "request_control",
            {"tool_name": "refund", "mode": "approval", "arguments": []},
            "arguments must be an object",
        ),
        ("request_control", {"tool_name": "wire", "mode": "execute"}, "no tool named 'wire'"),
        ("request_control", {"tool_name": 7, "mode": "execute"}, "no tool named 7"),
    ],
)
def test_a_channel_call_with_bad_arguments_says_which_argument(name, arguments, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        parse_channel_call(name, arguments, {"refund": WRITE})


def test_tool_parameters_are_described_from_the_docstrings_args_section():
    from hasbench.registry import all_domains
    from hasbench.tools import split_docstring

    doc = """Cancel an order.

    Refunds go to the original method.

    Args:
        order_id: The order id,
            starting with "#".
        reason (str): Why.

    Returns:
        Nothing.
    """
    description, arguments = split_docstring(doc)
    assert (
        description
        == "Cancel an order.\n\nRefunds go to the original method.\n\nReturns:\n    Nothing."
    )
    assert arguments == {"order_id": 'The order id, starting with "#".', "reason": "Why."}
    for domain in all_domains():
        for spec in domain.environment._specs.values():
            assert "Args:" not in spec.description, (domain.name, spec.name)
            for name, schema in spec.parameters["properties"].items():
                assert schema.get("description"), (domain.name, spec.name, name)
