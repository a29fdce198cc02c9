"""The agents' long-term memories, kept up to date as discussions happen.

When a discussion closes, every participant updates its memory from what was said
(add, update or delete entries); when the user writes into a discussion, the participants
note what it says about the user's wishes. Each change is a ``memory`` event; an update
that does not fit the memory is an ``error`` event and changes nothing.
"""

from __future__ import annotations

import asyncio

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import MemoryUpdate, MemoryUpdateError
from hasbench.docuteam.discussion import Discussion
from hasbench.docuteam.session.state import SessionState


class MemoryUpkeep:
    """Runs the memory steps of a session and applies their updates."""

    def __init__(self, state: SessionState) -> None:
        self.state = state

    async def after_discussion(self, d: Discussion) -> None:
        """After a discussion closes: every participant's memory, concurrently."""
        if not any(m.kind == "utterance" for m in d.messages):
            return
        state = self.state
        participants = [a for a in d.participants if a in state.agents]
        outputs = await asyncio.gather(
            *(
                state.steps.run(
                    "memory_discussion",
                    s.DiscussionMemoryInput(
                        agent=state.public_profile(a),
                        mode=d.mode,
                        focus=d.focus,
                        messages=list(d.messages),
                        entries=state.agents[a].memory.snapshot(),
                    ),
                    d.id,
                )
                for a in participants
            )
        )
        for agent_id, out in zip(participants, outputs, strict=True):
            if out is not None:
                self.apply(agent_id, out, "discussion", d.id)

    async def after_user_message(self, d: Discussion) -> None:
        """The participants note what the user's latest message says about their wishes."""
        out = await self.state.steps.run(
            "memory_user",
            s.UserMemoryInput(mode=d.mode, focus=d.focus, messages=self.state.recent(d)),
            d.id,
        )
        if out is None or not out.add:
            return
        for agent_id in d.participants:
            self.apply(agent_id, MemoryUpdate(add=out.add), "user_message", d.id)

    def apply(self, agent_id: str, update: MemoryUpdate, cause: str, discussion: str) -> None:
        """Apply one agent's memory update and log the change (or why it did not fit)."""
        if not (update.add or update.update or update.delete):
            return
        try:
            change = self.state.agents[agent_id].memory.apply(update)
        except MemoryUpdateError as exc:
            payload = {
                "step": "memory",
                "role": "summarizer",
                "error_type": "invalid_output",
                "message": str(exc),
            }
            self.state.record("error", "summarizer", payload, discussion)
            return
        payload = {
            "agent": agent_id,
            "cause": cause,
            **{k: [e.model_dump() for e in v] for k, v in change.items()},
        }
        self.state.record("memory", agent_id, payload, discussion)
