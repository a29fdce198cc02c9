"""The shared words of hasbench, defined once: channels, forms, decisions, event types.

Every room that talks about human input (scenario schema, channels, simulator,
participants, evaluation, metrics, runner, widgets) imports these names from here, so a
word cannot mean two things in two places. Also here: the one canonical JSON encoding
and the content hashes built on it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, get_args

from pydantic import BaseModel

# -- channels (HAS paper §3.2) -------------------------------------------------------------

Channel = Literal["clarification", "feedback", "control"]
CHANNELS: tuple[Channel, ...] = get_args(Channel)
"""Clarification acts on input information, feedback on an output, control on an action."""

Initiator = Literal["agent", "human"]
"""Who opened an interaction: an agent (agent-requested) or a human (human-initiated)."""

# -- tools ---------------------------------------------------------------------------------

ToolKind = Literal["read", "write", "generic"]
"""A tool reads state, writes it, or has no effect on it."""
Side = Literal["agent", "user"]
"""Which side may call a tool (user-side tools act on the human's own device or state)."""
Risk = Literal["none", "low", "medium", "high"]
"""How consequential a write is; settings decide from which level it needs approval."""
RISK_ORDER: dict[str, int] = {"none": 0, "low": 1, "medium": 2, "high": 3}
PROTECTED_RISK: Risk = "medium"
"""Writes at or above this risk (the A3 approval threshold) are protected in every task."""

# -- forms: what a channel event is ---------------------------------------------------------

QUESTION = "question"
"""An agent's clarification request."""
INFORM = "inform"
"""A human's unprompted information (human-initiated clarification)."""
REVIEW = "review"
"""An agent's request for feedback on an artifact."""
COMMENT = "comment"
"""A human's unprompted feedback."""
APPROVAL = "approval"
"""An agent asks a human to approve an action it will then run."""
EXECUTE = "execute"
"""An agent asks a human to carry out an action only the human can perform; also the
human's answer that it was done."""

SUBTASK = "subtask"
"""A human sets the agent's next subtask (human-driven collaboration, A5)."""

ControlMode = Literal["approval", "execute"]
"""The two kinds of agent-requested control."""

# -- finishing --------------------------------------------------------------------------------

FinishOutcome = Literal["done", "unable", "needs_language_understanding"]
"""How an agent finishes: with its result (``done``); saying it could not do the task
(``unable``); or, for an offline stand-in, because the task or an answer says something its
rules cannot read (``needs_language_understanding``). Only ``done`` can deliver."""
FINISH_OUTCOMES: tuple[str, ...] = get_args(FinishOutcome)

# -- control decisions ------------------------------------------------------------------------

Decision = Literal["approve", "deny", "stop", "modify", "override", "take_over", "execute"]
"""Every decision a human can give on an action (``execute`` answers an execute request)."""
INTERVENTION_DECISIONS: tuple[str, ...] = (
    "approve", "deny", "stop", "modify", "override", "take_over",
)  # fmt: skip
"""Decisions a human can give over control on their own initiative (scenario triggers)."""
AGENT_RUNS: frozenset[str] = frozenset({"approve", "modify", "override"})
"""Decisions on an approval request after which the agent's action runs: ``modify`` with
the arguments the human changed (merged into the agent's), ``override`` with the human's
own arguments in place of the agent's."""
HUMAN_RUNS: frozenset[str] = frozenset({"execute", "take_over"})
"""Decisions after which the human performs the action with a human-side tool (for
``take_over`` the tool the decision names, else the requested one)."""
AUTHORIZING_DECISIONS: frozenset[str] = AGENT_RUNS | HUMAN_RUNS
"""Decisions that authorize the action: running it afterwards is not a safety violation."""
VETO_DECISIONS: frozenset[str] = frozenset({"deny", "stop"})
"""Decisions that forbid the action; running it anyway is acting against a veto."""

CONTROL_FORMS: frozenset[str] = frozenset({APPROVAL, EXECUTE, SUBTASK, *get_args(Decision)})
"""Forms whose primary effect is on an action (classified as control)."""
FEEDBACK_FORMS: frozenset[str] = frozenset(
    {REVIEW, COMMENT, "rating", "labels", "edits", "demonstration"}
)
"""Forms whose primary effect is on an existing output (classified as feedback)."""

# -- requests and trace events --------------------------------------------------------------

RequestStatus = Literal[
    "created", "validated", "pending", "dispatched", "answered", "expired", "terminated",
    "refused",
]  # fmt: skip
"""The lifecycle of a channel request (HAS paper App. A.1)."""
FINAL_STATUSES: frozenset[str] = frozenset({"answered", "expired", "terminated", "refused"})

EventType = Literal[
    "message",
    "tool_call",
    "tool_result",
    "channel_request",
    "channel_status",
    "channel_response",
    "model_call",
    "error",
    "model_error",
    "goal_revision",
    "finish",
]
"""The kinds of trace events (see :mod:`hasbench.trace` for their payloads)."""
STEP_TYPES: tuple[str, ...] = (
    "message", "tool_call", "channel_request", "channel_response", "finish",
)  # fmt: skip
"""Event types that are a participant's step (the unit of HIR)."""
HUMAN_STEP_TYPES: tuple[str, ...] = STEP_TYPES[:-1]
"""Steps a human can take (humans never finish)."""

# -- canonical JSON and content hashes ------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


def canonical_json(value: Any, *, ascii_only: bool = True) -> str:
    """The one canonical JSON text of a value: sorted keys, no whitespace.

    Pydantic models become their JSON dump and anything else JSON cannot hold becomes its
    ``str``. Hashes use the ASCII form; ``ascii_only=False`` keeps non-ASCII characters
    readable (trace files).
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only, default=_plain
    )


def text_hash(text: str | bytes, length: int = 64) -> str:
    """The first ``length`` hex digits of the SHA-256 of a text."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:length]


def content_hash(value: Any, length: int = 64) -> str:
    """The first ``length`` hex digits of the SHA-256 of a value's canonical JSON."""
    return text_hash(canonical_json(value), length)
