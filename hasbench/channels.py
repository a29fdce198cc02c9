"""Clarification, feedback and control: protocol objects, controllers, classification.

Three layers (HAS paper App. A.1). The *protocol* layer is the typed request, response
and decision objects below. The *behaviour* layer (how a simulated human answers) lives
in :mod:`hasbench.participants.users`. The *orchestration* layer is
:class:`ChannelController`: one per channel, it takes a request through its lifecycle
``created → validated → pending → dispatched → answered | expired | terminated`` (or
``refused`` at the policy gate), gives it a unique deterministic id such as ``clar-0003``,
charges the per-episode interaction budget, and records every transition as a trace event
following the payload conventions of :mod:`hasbench.trace`.

Agents reach the channels through virtual tools (:data:`CHANNEL_TOOLS`);
:func:`parse_channel_call` checks a call of one against its schema and reads from it the
request the simulator opens here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field

from hasbench.tools import ToolSpec, virtual_tool
from hasbench.trace import ChannelRequestPayload, ChannelResponsePayload, ChannelStatusPayload
from hasbench.vocab import (
    CONTROL_FORMS,
    FEEDBACK_FORMS,
    FINAL_STATUSES,
    Channel,
    ControlMode,
    Decision,
    Initiator,
    RequestStatus,
)

ID_PREFIX: dict[str, str] = {"clarification": "clar", "feedback": "feed", "control": "ctrl"}


# -- protocol layer --------------------------------------------------------------------


class ActionRef(BaseModel):
    """A domain action a control request is about."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ChannelRequest(BaseModel):
    """A C/F/C interaction event as created by its sender.

    ``sender``, ``channel`` and ``target`` are what :meth:`HASGraph.route` reads.
    """

    model_config = ConfigDict(extra="forbid")

    channel: Channel
    request_id: str
    sender: str
    target: str | None = None
    initiator: Initiator = "agent"
    form: str
    content: str
    topics: list[str] = Field(default_factory=list)
    """Structured hint of what is asked about (e.g. known_info keys); may be empty."""
    action: ActionRef | None = None
    status: RequestStatus = "created"
    reason: str | None = None


class ClarificationRequest(ChannelRequest):
    """The agent asks for missing, ambiguous or privately held information."""

    channel: Literal["clarification"] = "clarification"
    form: str = "question"


class FeedbackRequest(ChannelRequest):
    """The agent asks a human to review an intermediate output (``content``)."""

    channel: Literal["feedback"] = "feedback"
    form: str = "review"


class ControlRequest(ChannelRequest):
    """The agent asks a human to approve an action, or to execute it (user-side)."""

    channel: Literal["control"] = "control"
    form: str = "approval"
    action: ActionRef | None = None


class ClarificationResponse(BaseModel):
    """A human's answer to a question.

    Attributes:
        content: the answer as the agent reads it.
        info: the facts revealed, as known_info key -> value (empty if none).
        refused: True when the human declined to answer.
    """

    model_config = ConfigDict(extra="forbid")

    content: str
    info: dict[str, Any] = Field(default_factory=dict)
    refused: bool = False


class FeedbackResponse(BaseModel):
    """A human's review: a comment plus optional rating, labels, edits, demonstration."""

    model_config = ConfigDict(extra="forbid")

    content: str
    rating: int | None = Field(default=None, ge=1, le=5)
    labels: list[str] = Field(default_factory=list)
    edits: dict[str, Any] | None = None
    """Corrected values (e.g. revised known_info) the agent should use."""
    demonstration: list[ActionRef] | None = None


class ControlDecision(BaseModel):
    """A human's decision on an action (approve, deny, stop, modify, ..., execute)."""

    model_config = ConfigDict(extra="forbid")

    decision: Decision
    content: str = ""
    arguments: dict[str, Any] | None = None
    """For modify: the changed arguments; for override and take_over: the human's own."""
    tool: str | None = None
    """For take_over: the human-side tool the human runs (default: the requested one)."""


ChannelResponse = ClarificationResponse | FeedbackResponse | ControlDecision


def answer_text(responder: str, request_id: str, response: ChannelResponse) -> str:
    """A human's answer as the asking agent reads it: every part of it, in one text.

    The first line is ``<responder> (<request id>): `` and the answer's words (for a
    decision, the decision first: ``approve. Yes, go ahead.``); the structured parts follow
    as lines of their own, values as JSON: ``Rating: 2 of 5``, ``Labels: revise``,
    ``Edits: {...}``, ``Demonstration: [...]`` of a review, ``Tool: <name>`` and
    ``Arguments: {...}`` of a decision. A model and an offline stand-in in the agent's
    seat get this same text and nothing else of the answer (the fields a channel records
    beyond it, such as the facts a clarification revealed, are for the judges).
    """
    lines: list[str] = []
    if isinstance(response, ControlDecision):
        first = f"{response.decision}. {response.content}".strip()
        if response.tool is not None:
            lines.append(f"Tool: {response.tool}")
        if response.arguments is not None:
            lines.append(f"Arguments: {json.dumps(response.arguments, sort_keys=True)}")
    else:
        first = response.content
    if isinstance(response, FeedbackResponse):
        if response.rating is not None:
            lines.append(f"Rating: {response.rating} of 5")
        if response.labels:
            lines.append(f"Labels: {', '.join(response.labels)}")
        if response.edits:
            lines.append(f"Edits: {json.dumps(response.edits, sort_keys=True)}")
        if response.demonstration:
            steps = [step.model_dump(mode="json") for step in response.demonstration]
            lines.append(f"Demonstration: {json.dumps(steps, sort_keys=True)}")
    return "\n".join([f"{responder} ({request_id}): {first}", *lines])


REQUEST_TYPES: dict[str, type[ChannelRequest]] = {
    "clarification": ClarificationRequest,
    "feedback": FeedbackRequest,
    "control": ControlRequest,
}


# -- orchestration layer ---------------------------------------------------------------


class ChannelRefused(Exception):
    """A request the policy gate or the router refused; ``error_type`` is a trace error type."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class Router(Protocol):
    """What a controller needs of the HAS Graph."""

    def route(self, request: Any) -> list[str]: ...  # noqa: D102

    def channels_between(self, a: str, b: str) -> set[str]: ...  # noqa: D102


Recorder = Callable[..., Any]
"""``record(type=, actor=, target=, channel=, initiator=, payload=)`` appends a trace event
(``payload`` one of the payload models of :mod:`hasbench.trace`)."""


@dataclass
class Budget:
    """The per-episode interaction budget shared by the three channels."""

    limit: int
    used: int = 0

    @property
    def exhausted(self) -> bool:
        """True once every allowed interaction has been used."""
        return self.used >= self.limit


class ChannelController:
    """Takes the requests of one channel through their lifecycle and records it.

    Args:
        channel: the channel this controller serves.
        enabled: whether the setting registers the channel.
        graph: the HAS Graph (routing and edge permissions).
        budget: the episode's interaction budget, shared by all controllers.
        record: appends a trace event.
    """

    def __init__(
        self,
        channel: Channel,
        enabled: bool,
        graph: Router,
        budget: Budget,
        record: Recorder,
    ) -> None:
        self.channel = channel
        self.enabled = enabled
        self.graph = graph
        self.budget = budget
        self._record = record
        self._count = 0
        self.requests: list[ChannelRequest] = []

    def open(
        self,
        *,
        sender: str,
        content: str,
        form: str,
        target: str | None = None,
        initiator: Initiator = "agent",
        topics: list[str] | None = None,
        action: ActionRef | None = None,
    ) -> ChannelRequest:
        """Create, validate and queue a request; return it pending or expired.

        Raises:
            ChannelRefused: the channel is disabled, no human is reachable, or the edge
                between sender and target does not carry this channel. The request is
                recorded with status ``refused``.
        """
        self._count += 1
        request = REQUEST_TYPES[self.channel](
            request_id=f"{ID_PREFIX[self.channel]}-{self._count:04d}",
            sender=sender,
            target=target,
            initiator=initiator,
            form=form,
            content=content,
            topics=topics or [],
            action=action,
        )
        self.requests.append(request)
        refusal = self._gate(request)
        payload = ChannelRequestPayload(
            request_id=request.request_id,
            form=form,
            content=content,
            topics=list(topics) if topics else None,
            action=action.model_dump(mode="json") if action is not None else None,
        )
        self._record(
            type="channel_request",
            actor=sender,
            target=request.target,
            channel=self.channel,
            initiator=initiator,
            payload=payload,
        )
        if refusal is not None:
            self._set(request, "refused", refusal[1])
            raise ChannelRefused(refusal[0], f"{request.request_id}: {refusal[1]}")
        self._set(request, "validated")
        if self.budget.exhausted:
            self._set(request, "expired", f"interaction budget of {self.budget.limit} used up")
            return request
        self.budget.used += 1
        self._set(request, "pending")
        return request

    def _gate(self, request: ChannelRequest) -> tuple[str, str] | None:
        """Route an agent's request to its human; return (error_type, reason) to refuse it."""
        if not self.enabled:
            return "channel_refused", f"the {self.channel} channel is disabled"
        if request.initiator == "agent":
            from hasbench.graph import RoutingError

            try:
                targets = self.graph.route(request)
            except RoutingError as exc:
                return "routing_error", str(exc)
            if request.target is None:
                request.target = targets[0]
        if request.target is None:
            return "routing_error", "no recipient given"
        if self.channel not in self.graph.channels_between(request.sender, request.target):
            reason = f"no edge between {request.sender} and {request.target} carries {self.channel}"
            return "channel_refused", reason
        return None

    def dispatch(self, request: ChannelRequest) -> None:
        """Hand a pending request to its recipient."""
        self._set(request, "dispatched")

    def answer(self, request: ChannelRequest, responder: str, response: ChannelResponse) -> None:
        """Record the recipient's answer or decision; the request is answered."""
        fields = response.model_dump(mode="json", exclude_none=True)
        if isinstance(response, ClarificationResponse) and not response.refused:
            fields.pop("refused")
        if isinstance(response, FeedbackResponse) and not response.labels:
            fields.pop("labels")
        payload = ChannelResponsePayload(request_id=request.request_id, form=request.form, **fields)
        request.status = "answered"
        self._record(
            type="channel_response",
            actor=responder,
            target=request.sender,
            channel=self.channel,
            initiator=request.initiator,
            payload=payload,
        )

    def terminate(self, request: ChannelRequest, reason: str) -> None:
        """End a request that will get no answer (e.g. the episode ended)."""
        self._set(request, "terminated", reason)

    def open_requests(self) -> list[ChannelRequest]:
        """Agent-requested requests still awaiting an answer.

        A human-initiated event is complete once dispatched (delivered to the agent); it
        expects no answer.
        """
        return [
            r for r in self.requests if r.initiator == "agent" and r.status not in FINAL_STATUSES
        ]

    def _set(
        self, request: ChannelRequest, status: RequestStatus, reason: str | None = None
    ) -> None:
        request.status = status
        request.reason = reason
        self._record(
            type="channel_status",
            actor=request.sender,
            target=request.target,
            channel=self.channel,
            initiator=request.initiator,
            payload=ChannelStatusPayload(
                request_id=request.request_id, status=status, reason=reason
            ),
        )


# -- classification --------------------------------------------------------------------


@dataclass(frozen=True)
class Effect:
    """What an interaction event does to the task trajectory (not how it is worded).

    Attributes:
        on_action: it decides whether, how or by whom a proposed, pending or ongoing
            action is executed (authorize, block, modify, redirect, halt, take over,
            perform it).
        on_output: it evaluates, corrects or refines an existing plan, response,
            decision or artifact.
        on_information: it asks for or supplies information needed to interpret the
            task or decide what to do next.
    """

    on_action: bool = False
    on_output: bool = False
    on_information: bool = False


def effect_of(form: str, *, has_action: bool = False) -> Effect:
    """The effect of a channel event, from its form and whether it names an action."""
    if form in CONTROL_FORMS or has_action:
        return Effect(on_action=True)
    if form in FEEDBACK_FORMS:
        return Effect(on_output=True)
    return Effect(on_information=True)


def classify(effect: Effect) -> Channel | None:
    """The channel of an event by its primary effect (HAS paper App. A.1).

    Control comes first, then feedback, then clarification; None when the event has
    none of the three effects.
    """
    if effect.on_action:
        return "control"
    if effect.on_output:
        return "feedback"
    if effect.on_information:
        return "clarification"
    return None


# -- virtual channel tools -------------------------------------------------------------

_TARGET = {"type": "string", "description": "Id of the person to ask (optional)."}
CONTROL_MODES: tuple[str, ...] = get_args(ControlMode)
CHANNEL_TOOLS: dict[str, ToolSpec] = {
    "clarification": virtual_tool(
        "ask_clarification",
        (
            "Ask a person for information you are missing or that is ambiguous. "
            "You wait until they answer."
        ),
        {
            "question": {"type": "string", "description": "What you need to know."},
            "topics": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Short names of the facts you ask about (optional).",
            },
            "target": _TARGET,
        },
        ["question"],
    ),
    "feedback": virtual_tool(
        "request_feedback",
        "Show a person your plan or draft result and ask them to review it.",
        {
            "artifact": {"type": "string", "description": "The plan or result to review."},
            "question": {"type": "string", "description": "What to check (optional)."},
            "target": _TARGET,
        },
        ["artifact"],
    ),
    "control": virtual_tool(
        "request_control",
        (
            "Ask a person to approve an action before it runs (mode 'approval'; it runs "
            "as soon as it is approved), or to carry out an action only they can perform "
            "(mode 'execute')."
        ),
        {
            "tool_name": {"type": "string", "description": "The action's tool name."},
            "arguments": {"type": "object", "description": "The action's arguments."},
            "mode": {
                "type": "string",
                "enum": list(CONTROL_MODES),
                "description": (
                    "approval: the person approves and the action runs; execute: the "
                    "person carries it out."
                ),
            },
            "reason": {"type": "string", "description": "Why (optional)."},
            "target": _TARGET,
        },
        ["tool_name", "arguments", "mode"],
    ),
}
"""Channel -> the virtual tool an agent calls to use it."""


def control_tool(actions: Sequence[ToolSpec]) -> ToolSpec:
    """``request_control`` typed for the actions an agent may ask about.

    ``tool_name`` is one of the actions' names and ``arguments`` follows the schema of one
    of them; with no actions it is the untyped tool of ``CHANNEL_TOOLS``.

    Args:
        actions: The tools the agent may ask approval for (its own writes) or ask a person
            to carry out (their tools), without repeats.
    """
    spec = CHANNEL_TOOLS["control"]
    if not actions:
        return spec
    parameters = dict(spec.parameters)
    properties = dict(parameters["properties"])
    properties["tool_name"] = {**properties["tool_name"], "enum": [a.name for a in actions]}
    properties["arguments"] = {
        "description": "The action's arguments, as its tool takes them.",
        "anyOf": [
            {**action.parameters, "description": f"Arguments of {action.name}."}
            for action in actions
        ],
    }
    parameters["properties"] = properties
    return replace(spec, parameters=parameters)


TOOL_CHANNEL: dict[str, str] = {spec.name: channel for channel, spec in CHANNEL_TOOLS.items()}


# -- reading a channel tool's call -----------------------------------------------------


@dataclass(frozen=True)
class ChannelCall:
    """A channel tool's call with its arguments checked: the request it opens.

    Attributes:
        channel: the channel the tool reaches.
        form: the request's form (``question``, ``review``, ``approval`` or ``execute``).
        content: the request's text as the person reads it.
        target: the person the agent named, if any.
        topics: what a question is about (clarification only).
        action: the action a control request is about.
        tool: the tool of that action.
    """

    channel: Channel
    form: str
    content: str
    target: str | None = None
    topics: list[str] = field(default_factory=list)
    action: ActionRef | None = None
    tool: ToolSpec | None = None


def parse_channel_call(
    name: str, arguments: Mapping[str, Any], tools: Mapping[str, ToolSpec]
) -> ChannelCall:
    """Check a channel tool's arguments against its schema and read its request from them.

    Args:
        name: the channel tool called (a key of :data:`TOOL_CHANNEL`).
        arguments: the arguments the agent gave.
        tools: the episode's tools by name (what ``request_control`` may name).

    Raises:
        ValueError: an argument is missing or has the wrong type, or names no tool.
    """
    channel = TOOL_CHANNEL[name]
    target = arguments.get("target")
    if target is not None and not isinstance(target, str):
        raise ValueError("target must be a participant id")
    if channel == "clarification":
        question = arguments.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        topics = arguments.get("topics") or []
        if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
            raise ValueError("topics must be a list of strings")
        return ChannelCall(channel, "question", question, target, topics)
    if channel == "feedback":
        artifact = arguments.get("artifact")
        if not isinstance(artifact, str) or not artifact.strip():
            raise ValueError("artifact must be a non-empty string")
        question = arguments.get("question")
        content = artifact if not question else f"{artifact}\n\n{question}"
        return ChannelCall(channel, "review", content, target)
    return _control_call(arguments, target, tools)


def _control_call(
    arguments: Mapping[str, Any], target: str | None, tools: Mapping[str, ToolSpec]
) -> ChannelCall:
    """Read a ``request_control`` call (see :func:`parse_channel_call`)."""
    name, action_arguments = arguments.get("tool_name"), arguments.get("arguments", {})
    mode = arguments.get("mode")
    if mode not in CONTROL_MODES:
        raise ValueError(f"mode must be {' or '.join(repr(m) for m in CONTROL_MODES)}")
    if not isinstance(action_arguments, dict):
        raise ValueError("arguments must be an object")
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        raise ValueError(f"no tool named {name!r}")
    reason = arguments.get("reason") or ""
    content = _control_head(mode, tool.name) + (f": {reason}" if reason else ".")
    action = ActionRef(name=tool.name, arguments=action_arguments)
    return ChannelCall("control", mode, content, target, action=action, tool=tool)


def _control_head(mode: str, name: str) -> str:
    """How a control request's content begins: ``Please approve refund``."""
    return f"Please {'approve' if mode == 'approval' else 'carry out'} {name}"


def control_reason(form: str, action: str, content: str) -> str | None:
    """The agent's own reason in an agent's control request (None when it gave none).

    A request's content is its standard head (``Please approve refund``) and the reason;
    people are shown the action and the reason apart.

    Args:
        form: the request's form (``approval`` or ``execute``).
        action: the name of the action's tool.
        content: the request's content.
    """
    head = _control_head(form, action)
    if content.startswith(head + ": "):
        return content[len(head) + 2 :].strip() or None
    return None if content == head + "." else content
