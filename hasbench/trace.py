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
  execute) and ``arguments`` when the human modified the action; for clarification
  ``info`` (the known facts the answer revealed) and ``refused`` when declined.
- ``model_call``: ``{model, role, cached, cost, attempts}`` with ``usage`` set.
- ``error``: malformed participant output fed back to it; ``{error_type, message}`` with
  error_type one of invalid_json, unknown_tool, tool_not_permitted, no_tool_call,
  routing_error, channel_refused, model_failure, invalid_arguments (a channel tool
  called with unusable arguments). An error whose actor is a human records a user
  simulator reply that could not be used (it does not count against the agents).
- ``goal_revision``: a human's goal changed; ``{goal}``.
- ``finish``: a participant delivered its result; ``{deliverable}``.

A *human step* is any event whose actor is a human participant and whose type is
message, tool_call, channel_request or channel_response.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

EventType = Literal[
    "message",  # a participant speaks to a neighbour: payload {text}
    "tool_call",  # a domain tool call: payload {call_id, name, arguments, side}
    "tool_result",  # its result: payload {call_id, name, output, error, error_type, diff}
    "channel_request",  # a C/F/C request was created: payload {request_id, form, content, ...}
    "channel_status",  # a lifecycle transition: payload {request_id, status, reason}
    "channel_response",  # the answer or decision: payload {request_id, form, content, decision}
    "model_call",  # one LLM call: payload {model, cached, cost}; usage set
    "error",  # malformed participant output: payload {error_type, message}
    "goal_revision",  # the user's goal changed (pattern F): payload {goal}
    "finish",  # a participant delivered its result: payload {deliverable}
]
ChannelName = Literal["clarification", "feedback", "control"]
Initiator = Literal["agent", "human"]
TerminationReason = Literal[
    "agent_done",  # the lead agent finished with a deliverable
    "user_stop",  # a human stopped the episode (control: stop)
    "max_iterations",
    "max_tool_rounds",
    "too_many_errors",
    "budget_exhausted",
    "episode_error",  # the episode crashed; detail says why
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


class TraceHeader(BaseModel):
    """What determines the episode: scenario, setting, backends, seed, versions."""

    model_config = ConfigDict(extra="forbid")

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


class Event(BaseModel):
    """One thing that happened, at a logical step, by one participant."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    step: int
    actor: str
    type: EventType
    target: str | None = None
    channel: ChannelName | None = None
    initiator: Initiator | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None


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

    def append(self, **fields: Any) -> Event:
        """Add an event with the next ``seq`` and return it."""
        event = Event(seq=len(self.events), **fields)
        self.events.append(event)
        return event

    def of_type(self, *types: str) -> list[Event]:
        """Events whose type is one of ``types``, in order."""
        return [e for e in self.events if e.type in types]

    def to_jsonl(self) -> str:
        """Serialize to JSON Lines text (deterministic)."""
        lines = [_dump({"kind": "header", **self.header.model_dump(mode="json")})]
        lines += [
            _dump({"kind": "event", **e.model_dump(mode="json", exclude_none=True)})
            for e in self.events
        ]
        if self.termination is not None:
            lines.append(_dump({"kind": "termination", **self.termination.model_dump(mode="json")}))
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
                    events.append(Event.model_validate(record))
                elif kind == "termination":
                    termination = Termination.model_validate(record)
                else:
                    raise ValueError(f"unknown record kind {kind!r}")
            except (ValueError, KeyError, TypeError) as exc:
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
                "payload": e.payload,
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


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
