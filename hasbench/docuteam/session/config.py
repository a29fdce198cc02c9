"""A session's parameters and its condition (DocuTeam or Baseline)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Condition = Literal["DocuTeam", "Baseline"]


class ConditionError(RuntimeError):
    """An action the session's condition does not offer (e.g. block scope in Baseline)."""


class SessionConfig(BaseModel):
    """Parameters of a session.

    ``condition`` selects DocuTeam (mixed-initiative, anchored discussions, proactive
    agents, in-document steering) or Baseline (user-initiated discussions from a side
    panel, grounded in the whole document). ``participant``, ``task_name`` and ``order``
    label the session for the study table; study data from sessions with a
    ``simulated_user`` are marked synthetic.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    condition: Condition = "DocuTeam"
    threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    """A discussion opens when a mode's mean need score exceeds this."""
    debounce: float = Field(default=2.0, ge=0.0)
    """Seconds without edits before a batch of edits goes to the trigger."""
    turn_budget: int = Field(default=8, ge=1)
    """Moderator rounds per run of a discussion (a user message starts a new run)."""
    history_window: int = Field(default=16, ge=2)
    """Latest messages shown to the moderator and the agents."""
    near_blocks: int = Field(default=2, ge=0)
    """Blocks on each side of a scope shown as its surroundings."""
    context_blocks: int = Field(default=1, ge=0)
    """Neighbouring blocks shown with each edit."""
    nearby_distance: int = Field(default=2, ge=0)
    """An open discussion whose scope is within this many blocks of an edit is nearby."""
    similar_cap: float = Field(default=0.2, ge=0.0, le=1.0)
    """A mode's scores are capped here when an open nearby discussion has that mode."""
    summary_every: int = Field(default=4, ge=1)
    """Agent turns between summary refreshes (also refreshed whenever a run pauses)."""
    failed_steps_in_a_row: int = Field(default=3, ge=1)
    """Model steps lost in a row to infrastructure failures that fail the session (a
    permanent failure, such as a missing key or extra, fails it at once)."""
    auto_run: bool = True
    """Run discussions the agents open right away, in the background."""
    participant: str = ""
    task_name: str = ""
    order: int = Field(default=0, ge=0, le=2)
    simulated_user: bool = False
    """The user's side was played by a script or a simulator, not by a person."""
