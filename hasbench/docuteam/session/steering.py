"""The user steering a discussion: writing into it, answering, changing it, stopping it.

A user message re-enters the moderator's next decision at once and reopens a closed
discussion (its focus is extracted again from the message). Changing participants,
focus or mode is in-document steering, which the Baseline condition does not offer.
Every action is a ``steering`` event (answers are ``clarification`` events).
"""

from __future__ import annotations

from typing import Any

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Discussion
from hasbench.docuteam.session.loop import DiscussionLoop
from hasbench.docuteam.session.memory import MemoryUpkeep
from hasbench.docuteam.session.state import SessionState


class Steering:
    """The user's actions on discussions (see :class:`Session` for each)."""

    def __init__(self, state: SessionState, loop: DiscussionLoop, memory: MemoryUpkeep) -> None:
        self.state = state
        self.loop = loop
        self.memory = memory

    def _steer(self, d: Discussion, action: str, **detail: Any) -> None:
        self.state.record("steering", "user", {"action": action, **detail}, d.id)

    async def post(self, discussion_id: str, text: str, run: bool) -> s.Message:
        """The user writes into a discussion (and reopens it if it had closed)."""
        d = self.state.discussion(discussion_id)
        self._steer(d, "post", text=text)
        message = self.state.add_message(d, "user", "post", text)
        d.pending = None
        await self.memory.after_user_message(d)
        await self._resume(d, reopen_with=text)
        if run:
            await self.loop.run(d.id)
        return message

    async def answer(self, discussion_id: str, reply: str | int, run: bool) -> s.Message:
        """The user answers the moderator's question: option 1 or 2, or free text."""
        state = self.state
        d = state.discussion(discussion_id)
        if d.pending is None or d.status != "waiting_for_user":
            raise RuntimeError(f"discussion {d.id} is not waiting for an answer")
        option = reply if isinstance(reply, int) else None
        if option is not None and option not in (1, 2):
            raise ValueError("a quick reply is option 1 or 2")
        text = d.pending.options[option - 1] if option is not None else reply
        payload = {
            "action": "answered",
            "question": d.pending.question,
            "answer": text,
            "option": option,
        }
        state.record("clarification", "user", payload, d.id)
        message = state.add_message(d, "user", "answer", text)
        d.pending = None
        await self.memory.after_user_message(d)
        state.set_status(d, "open", "the user answered")
        if run:
            await self.loop.run(d.id)
        return message

    async def _resume(self, d: Discussion, reopen_with: str) -> None:
        """Make a discussion runnable again after a user message."""
        if d.status == "running":
            return
        if d.status in ("waiting_for_user", "open"):
            self.state.set_status(d, "open", "the user wrote")
            return
        d.stop_requested = False
        self.state.set_status(d, "open", "reopened by a user message")
        await self.loop.set_focus(d, comment=reopen_with)

    def add_participant(self, discussion_id: str, agent_id: str) -> None:
        """Bring another agent into a discussion (at most four take part).

        A discussion that had ended (concluded, stopped, out of budget) reopens, so the
        newcomer can speak at its next run.
        """
        d = self.state.discussion(discussion_id)
        self.state.in_document_only("changing participants")
        self.state.check_participants([*d.participants, agent_id])
        d.participants.append(agent_id)
        self._steer(d, "add_participant", agent=agent_id)
        if not d.active and d.status != "failed":
            d.stop_requested = False
            name = self.state.agents[agent_id].profile.name
            self.state.set_status(d, "open", f"reopened: {name} joined")

    def remove_participant(self, discussion_id: str, agent_id: str) -> None:
        """Take an agent out of a discussion (at least two stay)."""
        d = self.state.discussion(discussion_id)
        self.state.in_document_only("changing participants")
        if agent_id not in d.participants:
            raise ValueError(f"{agent_id!r} does not take part in {d.id}")
        self.state.check_participants([a for a in d.participants if a != agent_id])
        d.participants.remove(agent_id)
        self._steer(d, "remove_participant", agent=agent_id)

    def set_focus(self, discussion_id: str, focus: str) -> None:
        """Replace a discussion's focus with the user's own words."""
        d = self.state.discussion(discussion_id)
        self.state.in_document_only("changing the focus")
        if not focus.strip():
            raise ValueError("the focus cannot be empty")
        d.focus = focus.strip()
        self._steer(d, "set_focus", focus=d.focus)
        self.state.record("focus", "user", {"focus": d.focus}, d.id)

    def set_mode(self, discussion_id: str, mode: s.Mode) -> None:
        """Switch a discussion to another mode; its stages start over."""
        d = self.state.discussion(discussion_id)
        self.state.in_document_only("changing the mode")
        if mode not in s.MODES:
            raise ValueError(f"unknown mode {mode!r}")
        d.mode = mode
        d.dialog_state = s.DialogState()
        self._steer(d, "set_mode", mode=mode)

    async def stop(self, discussion_id: str) -> Discussion:
        """Stop a discussion; a running one stops after its current step."""
        d = self.state.discussion(discussion_id)
        self._steer(d, "stop")
        d.stop_requested = True
        loop = self.loop.loops.get(d.id)
        if loop is not None and not loop.done():
            await loop
        elif d.active:
            d.pending = None
            self.state.set_status(d, "stopped", "stopped by the user")
            await self.memory.after_discussion(d)
        return d
