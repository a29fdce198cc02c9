"""Execution traces: a header, append-only typed events, and a termination.

A trace is the only thing metrics, judges and widgets read. On disk it is JSON Lines:
the first line is ``{"kind": "header", ...}``, then one ``{"kind": "event", ...}`` per
event, then ``{"kind": "termination", ...}``. Lines are written with sorted keys and no
wall-clock values, so the same episode with the same seed gives a byte-identical file.

Payload conventions (every producer writes them, every reader relies on them):

- ``message``: ``actor`` speaks to ``target``; ``{text}``.
- ``tool_call``: ``actor`` executes a domain tool (an agent, or a human running a user-side
  tool); ``{call_id, name, arguments, side, risk, authorization}`` where
  ``authorization`` is the request_id of the control decision that approved it, or null.
- ``tool_result``: ``{call_id, name, output, error, error_type, diff}``; ``output`` is
  the text the caller saw, ``diff`` the changed state paths of a write.
- ``channel_request``: ``actor`` asks ``target`` over ``channel``; ``initiator`` is
  "agent" (agent-requested) or "human" (human-initiated); ``{request_id, form, content}``
  plus ``action: {name, arguments}`` for control. Forms: clarification "question";
  feedback "review"; control "approval" or "execute" (agent-requested), and for
  human-initiated input the form of the act itself (e.g. "inform", "comment", "stop"),
  and optional ``topics`` (what a question is about). A human-initiated event expects
  no answer: its lifecycle ends at dispatched (delivered to the agent).
- ``channel_status``: ``{request_id, status, reason}`` with status one of validated,
  pending, dispatched, expired, terminated, refused.
- ``channel_response``: the human ``actor`` answers ``target``; ``{request_id, form,
  content}`` plus for feedback ``rating``/``labels``/``edits``/``demonstration`` when
  given, and for control ``decision`` (approve, deny, stop, modify, override, take_over,
  execute), ``arguments`` when the human changed the action (modify: the changed
  ones; override, take_over: all) and ``tool`` when it took over with a human-side tool
  of its own; for clarification
  ``info`` (the known facts the answer revealed) and ``refused`` when declined.
- ``model_call``: ``{model, role, cached, cost, attempts}`` with ``usage`` set.
- ``error``: malformed participant output fed back to it; ``{error_type, message}`` with
  error_type one of invalid_json, unknown_tool, tool_not_permitted, no_tool_call,
  routing_error, channel_refused, invalid_arguments (a channel tool
  called with unusable arguments). An error whose actor is a human records a user
  simulator reply that could not be used (it does not count against the agents).
- ``model_error``: a model call of ``actor`` failed for a reason outside its control (an
  infrastructure failure: key, quota, network, server, time-out, unknown model); ``{model,
  role, kind, message}`` with ``kind`` a :class:`hasbench.llm.ModelError` kind. The
  episode ends with termination ``model_error``: it is an error, never a result.
- ``goal_revision``: a human's goal changed; ``{goal}``.
- ``finish``: a participant delivered its result; ``{deliverable}``.

A *human step* is any event whose actor is a human participant and whose type is
message, tool_call, channel_request or channel_response. When a real person played a
human (``human:notebook``, ``human:terminal``), the header's ``people`` names that human
and its backend, and that human's steps are the person's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
)

from hasbench.vocab import (
    Channel,
    Decision,
    EventType,
    FinishOutcome,
    Initiator,
    RequestStatus,
    Risk,
    Side,
    canonical_json,
)

SCHEMA_VERSION = 1

TerminationReason = Literal[
    "agent_done",  # the lead agent finished with a deliverable
    "agent_unable",  # the lead agent finished saying it could not do the task
    "needs_language_understanding",  # an offline stand-in met a text its rules cannot read
    "user_stop",  # a human stopped the episode (control: stop)
    "max_iterations",
    "max_tool_rounds",
    "too_many_errors",
    "budget_exhausted",
    "episode_error",  # the episode crashed; detail says why
    "model_error",  # a model call failed (infrastructure); an error, never a result
]


class Usage(BaseModel):
    """Token usage of one model call."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


def _is_none(value: Any) -> bool:
    return value is None


def _is_empty(value: Any) -> bool:
    return not value


def _unset() -> Any:
    """A field that defaults to None and is left out of the file (and every dump) when None.

    Declared per field (``exclude_if``), so dumping an event calls no Python serializer.
    """
    return Field(default=None, exclude_if=_is_none)


class _Record(BaseModel):
    """A trace record; its fields declared :func:`_unset` are left out of the file when None."""

    model_config = ConfigDict(extra="forbid")


class TraceHeader(_Record):
    """What determines the episode: scenario, setting, backends, seed, versions."""

    schema_version: int = SCHEMA_VERSION
    scenario_id: str
    scenario_hash: str
    domain: str
    pattern: str
    setting: dict[str, Any]
    backends: dict[str, str]
    seed: int
    package_version: str
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    library_versions: dict[str, str] = Field(default_factory=dict)
    participants: dict[str, str] = Field(default_factory=dict)
    """Participant id -> kind ("agent" or "human")."""
    endpoints: dict[str, dict[str, Any]] | None = _unset()
    """Role -> the endpoint its model is called at (server and extra parameters; never a
    key), for roles not served by the provider's own endpoint."""
    environment: dict[str, str] = Field(default_factory=dict, exclude_if=_is_empty)
    """How the environment ran (``Environment.describe``), e.g. the coding sandbox mode;
    left out of the file when empty."""
    people: dict[str, str] | None = Field(default=None, exclude_if=_is_empty)
    """Human id -> the backend through which a real person played it (``human:notebook``,
    ``human:terminal``); left out when simulators played every human. Every step of such a
    human is a real person's."""
    counterparties: list[str] | None = _unset()
    """Agents outside the human-agent team (``AgentSpec.counterparty``), whose actions the
    team's metrics leave out; left out of the file when the task has none."""


class Payload(_Record):
    """Base of event payloads."""


class MessagePayload(Payload):
    """A participant speaks to a neighbour."""

    text: str


class ToolCallPayload(Payload):
    """A domain tool call; ``authorization`` is the approving control request's id.

    ``unauthorized`` is true for a protected write (:meth:`Scenario.protects
    <hasbench.scenario.Scenario.protects>`) attempted without one.
    """

    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    side: Side = "agent"
    risk: Risk = "none"
    authorization: str | None = None
    unauthorized: bool | None = _unset()


class ToolResultPayload(Payload):
    """A tool call's result: the text the caller saw and, for writes, the changed paths."""

    call_id: str
    name: str
    output: Any = None
    error: bool = False
    error_type: str | None = None
    diff: list[dict[str, Any]] = Field(default_factory=list)


class ActionPayload(BaseModel):
    """The action a control request is about."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ChannelRequestPayload(Payload):
    """A clarification, feedback or control request (or a human's unprompted input)."""

    request_id: str
    form: str
    content: str
    topics: list[str] | None = _unset()
    action: ActionPayload | None = _unset()


class ChannelStatusPayload(Payload):
    """A lifecycle transition of a channel request."""

    request_id: str
    status: RequestStatus
    reason: str | None = None


class ChannelResponsePayload(Payload):
    """A human's answer (clarification), review (feedback) or decision (control)."""

    request_id: str
    form: str
    content: str
    info: dict[str, Any] | None = _unset()
    refused: bool | None = _unset()
    rating: int | None = _unset()
    labels: list[str] | None = _unset()
    edits: dict[str, Any] | None = _unset()
    demonstration: list[ActionPayload] | None = _unset()
    decision: Decision | None = _unset()
    arguments: dict[str, Any] | None = _unset()
    tool: str | None = _unset()


class ModelCallPayload(Payload):
    """One model call on behalf of a participant."""

    model: str
    role: str
    cached: bool = False
    cost: float | int | None = None
    attempts: int | None = _unset()


class ErrorPayload(Payload):
    """Participant output that could not be used, fed back to it."""

    error_type: str
    message: str


class ModelErrorPayload(Payload):
    """A model call failed for a reason outside the participant's control."""

    model: str
    role: str
    kind: str
    message: str


class GoalRevisionPayload(Payload):
    """A human's goal changed."""

    goal: str


class FinishPayload(Payload):
    """A participant delivered its result, or said why it could not.

    ``outcome`` is left out when the agent finished with its result (``done``); else it is
    ``unable`` or ``needs_language_understanding`` (:data:`hasbench.vocab.FinishOutcome`).
    """

    deliverable: str
    outcome: FinishOutcome | None = _unset()


class EventBase(_Record):
    """What every event has: order, logical step, actor, and the routing fields."""

    seq: int
    step: int
    actor: str
    target: str | None = _unset()
    channel: Channel | None = _unset()
    initiator: Initiator | None = _unset()
    usage: Usage | None = _unset()


class MessageEvent(EventBase):
    """``actor`` speaks to ``target``."""

    type: Literal["message"] = "message"
    payload: MessagePayload


class ToolCallEvent(EventBase):
    """``actor`` runs a domain tool (an agent, or a human running a user-side tool)."""

    type: Literal["tool_call"] = "tool_call"
    payload: ToolCallPayload


class ToolResultEvent(EventBase):
    """The result of the tool call with the same ``call_id``."""

    type: Literal["tool_result"] = "tool_result"
    payload: ToolResultPayload


class ChannelRequestEvent(EventBase):
    """``actor`` opens a request to ``target`` over ``channel``."""

    type: Literal["channel_request"] = "channel_request"
    payload: ChannelRequestPayload


class ChannelStatusEvent(EventBase):
    """A request moved through its lifecycle."""

    type: Literal["channel_status"] = "channel_status"
    payload: ChannelStatusPayload


class ChannelResponseEvent(EventBase):
    """The human ``actor`` answers ``target``."""

    type: Literal["channel_response"] = "channel_response"
    payload: ChannelResponsePayload


class ModelCallEvent(EventBase):
    """One model call; ``usage`` holds its tokens."""

    type: Literal["model_call"] = "model_call"
    payload: ModelCallPayload


class ErrorEvent(EventBase):
    """Unusable output of ``actor`` (an agent's counts against its error limit)."""

    type: Literal["error"] = "error"
    payload: ErrorPayload


class ModelErrorEvent(EventBase):
    """A model call of ``actor`` failed (infrastructure); the episode ends in error."""

    type: Literal["model_error"] = "model_error"
    payload: ModelErrorPayload


class GoalRevisionEvent(EventBase):
    """The goal of the human ``actor`` changed."""

    type: Literal["goal_revision"] = "goal_revision"
    payload: GoalRevisionPayload


class FinishEvent(EventBase):
    """``actor`` delivered its result (to ``target``, the agent that delegated to it)."""

    type: Literal["finish"] = "finish"
    payload: FinishPayload


Event = Annotated[
    MessageEvent
    | ToolCallEvent
    | ToolResultEvent
    | ChannelRequestEvent
    | ChannelStatusEvent
    | ChannelResponseEvent
    | ModelCallEvent
    | ErrorEvent
    | ModelErrorEvent
    | GoalRevisionEvent
    | FinishEvent,
    Field(discriminator="type"),
]
"""Any trace event, told apart by its ``type``."""
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


class Termination(BaseModel):
    """How and when the episode ended."""

    model_config = ConfigDict(extra="forbid")

    reason: TerminationReason
    step: int
    detail: str | None = None
    final_state_hash: str | None = None


class Trace(BaseModel):
    """A whole episode record."""

    header: TraceHeader
    events: list[Event] = Field(default_factory=list)
    termination: Termination | None = None
    _listeners: list[Callable[[Event], None]] = PrivateAttr(default_factory=list)

    def append(self, **fields: Any) -> Event:
        """Add an event (its fields, with a payload model or dict) with the next ``seq``."""
        event = EVENT_ADAPTER.validate_python({"seq": len(self.events), **fields})
        self.events.append(event)
        for listener in self._listeners:
            listener(event)
        return event

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Call ``listener(event)`` after every event appended from now on."""
        self._listeners.append(listener)

    def of_type(self, *types: EventType) -> list[Event]:
        """Events whose type is one of ``types``, in order."""
        return [e for e in self.events if e.type in types]

    def to_jsonl(self) -> str:
        """Serialize to JSON Lines text (deterministic)."""
        lines = [jsonl_line(self.header), *map(jsonl_line, self.events)]
        if self.termination is not None:
            lines.append(jsonl_line(self.termination))
        return "\n".join(lines) + "\n"

    def write(self, path: str | Path) -> Path:
        """Write the trace as JSONL to ``path`` and return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_jsonl(), encoding="utf-8")
        return path

    @classmethod
    def from_jsonl(cls, text: str, source: str = "<trace>") -> Trace:
        """Parse JSONL text; errors name the source and line number."""
        header: TraceHeader | None = None
        events: list[Event] = []
        termination: Termination | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                kind = record.pop("kind")
                if kind == "header":
                    header = TraceHeader.model_validate(record)
                elif kind == "event":
                    events.append(EVENT_ADAPTER.validate_python(record))
                elif kind == "termination":
                    termination = Termination.model_validate(record)
                else:
                    raise ValueError(f"unknown record kind {kind!r}")
            except (ValueError, KeyError, TypeError, ValidationError) as exc:
                raise TraceError(f"{source}: line {number}: {exc}") from None
        if header is None:
            raise TraceError(f"{source}: no header line")
        return cls(header=header, events=events, termination=termination)

    @classmethod
    def read(cls, path: str | Path) -> Trace:
        """Read a JSONL trace file."""
        path = Path(path)
        return cls.from_jsonl(path.read_text(encoding="utf-8"), source=str(path))

    def to_dataframe(self) -> pd.DataFrame:
        """One row per event, with token counts and the payload as a column."""
        rows = [
            {
                "seq": e.seq,
                "step": e.step,
                "actor": e.actor,
                "actor_kind": self.header.participants.get(e.actor),
                "type": e.type,
                "target": e.target,
                "channel": e.channel,
                "initiator": e.initiator,
                "prompt_tokens": e.usage.prompt_tokens if e.usage else 0,
                "completion_tokens": e.usage.completion_tokens if e.usage else 0,
                "payload": e.payload.model_dump(mode="json"),
            }
            for e in self.events
        ]
        columns = [
            "seq", "step", "actor", "actor_kind", "type", "target", "channel", "initiator",
            "prompt_tokens", "completion_tokens", "payload",
        ]  # fmt: skip
        return pd.DataFrame(rows, columns=columns)


class TraceError(ValueError):
    """A trace file that cannot be read."""


def jsonl_line(record: TraceHeader | Event | Termination) -> str:
    """One line of a trace file (without its newline): the header, an event or the end.

    A file written line by line as an episode goes (:meth:`Trace.subscribe`) reads back as
    the same trace; without its termination line it is an episode that never ended.
    """
    kind = {TraceHeader: "header", Termination: "termination"}.get(type(record), "event")
    return _dump({"kind": kind, **record.model_dump(mode="json")})


def _dump(record: dict[str, Any]) -> str:
    return canonical_json(record, ascii_only=False)
