"""A discussion's state, the user's pending question, trigger decisions, summary lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hasbench.docuteam import schemas as s

DiscussionStatus = Literal[
    "open", "running", "waiting_for_user", "converged", "stopped", "budget_exhausted", "failed"
]
ACTIVE: tuple[DiscussionStatus, ...] = ("open", "running", "waiting_for_user")
"""Statuses of a discussion that is still open (and so damps new ones nearby)."""


class Clarification(BaseModel):
    """A question the moderator put to the user, with two quick replies."""

    model_config = ConfigDict(extra="forbid")

    message_id: str
    question: str
    options: list[str]


@dataclass
class Discussion:
    """One discussion thread and its state."""

    id: str
    mode: s.Mode
    scope: list[str] | None
    """Block ids the discussion is anchored to; None for the whole document (Baseline)."""
    participants: list[str]
    initiator: Literal["user", "agents"]
    origin: Literal["document", "side_panel"]
    comment: str = ""
    focus: str = ""
    status: DiscussionStatus = "open"
    messages: list[s.Message] = field(default_factory=list)
    dialog_state: s.DialogState = field(default_factory=s.DialogState)
    pending: Clarification | None = None
    asked_user: bool = False
    summary: s.Summary | None = None
    bubble: str = ""
    agent_turns: int = 0
    stop_requested: bool = False
    summarized_at: int = 0
    """Number of messages when the summary was last refreshed."""

    @property
    def active(self) -> bool:
        """True while the discussion is open, running or waiting for the user."""
        return self.status in ACTIVE

    def message(self, message_id: str) -> s.Message:
        """A message of this discussion by id."""
        for message in self.messages:
            if message.id == message_id:
                return message
        raise KeyError(f"discussion {self.id} has no message {message_id!r}")

    def speakers(self) -> list[str]:
        """Agents who have spoken, in order of first turn."""
        return list(dict.fromkeys(m.author for m in self.messages if m.kind == "utterance"))


class TriggerDecision(BaseModel):
    """The outcome of the proactive trigger on one batch of edits (also logged)."""

    model_config = ConfigDict(extra="forbid")

    outcome: Literal["no_change", "trivial", "below_threshold", "opened", "failed"]
    edits: list[str]
    goal: str | None = None
    interpretation: str | None = None
    selected: list[dict[str, str]] = Field(default_factory=list)
    scores: dict[str, dict[str, Any]] = Field(default_factory=dict)
    nearby: list[str] = Field(default_factory=list)
    means: dict[str, float] = Field(default_factory=dict)
    threshold: float
    mode: s.Mode | None = None
    discussion: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class SummaryEntry:
    """One line of a discussion summary.

    Its section (cluster, agreed, in dispute, or an agent's evaluation), its text and the
    message it links to. Every line can be applied to the document (a point in dispute
    carries its sides, so the user can write down the choice to make).
    """

    section: str
    text: str
    message_id: str


def summary_entries(summary: s.Summary | None) -> list[SummaryEntry]:
    """The lines of a mode summary, each linked to the message it comes from."""
    if summary is None:
        return []
    if isinstance(summary, s.IdeaSummary):
        return [
            SummaryEntry(cluster.label, item.text, item.message_id)
            for cluster in summary.clusters
            for item in cluster.items
        ]
    if isinstance(summary, s.DiscussionSummary):
        agreed = [SummaryEntry("Agreed", i.text, i.message_id) for i in summary.consensus]
        disputed = [
            SummaryEntry("In dispute", f"{c.description} ({' / '.join(c.sides)})", c.message_id)
            for c in summary.conflicts
        ]
        return agreed + disputed
    return [
        SummaryEntry(f"{e.agent_id}: {e.evaluation}", e.suggestion, e.message_id)
        for e in summary.evaluations
    ]
