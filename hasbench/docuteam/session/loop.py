"""Opening discussions and running them, one moderator round at a time.

A discussion opens (by the user, or by the agents after an edit) with intent extraction
setting its focus. A run is a loop of rounds: the moderator decides (an agent speaks with
a direction, the user is asked a question with two quick replies, or the discussion has
converged) and, when an agent is to speak, it utters one act. A run ends when the
discussion converges, asks the user, is stopped or uses its turn budget; the mode summary
and the bubble are refreshed along the way and when it pauses, and the participants'
memories when it closes.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Clarification, Discussion
from hasbench.docuteam.session.config import ConditionError
from hasbench.docuteam.session.memory import MemoryUpkeep
from hasbench.docuteam.session.state import SessionState


class DiscussionLoop:
    """Opens discussions and runs them (see the module docstring)."""

    def __init__(self, state: SessionState, memory: MemoryUpkeep) -> None:
        self.state = state
        self.memory = memory
        self.loops: dict[str, asyncio.Task[Discussion]] = {}
        """Discussion id -> its latest run."""

    # ------------------------------------------------------------------ opening

    def open(
        self,
        mode: s.Mode,
        scope: list[str] | None,
        participants: list[str],
        initiator: Literal["user", "agents"],
        origin: Literal["document", "side_panel"],
        comment: str,
    ) -> Discussion:
        """Create a discussion and log its opening (its focus is not set yet)."""
        state = self.state
        discussion = Discussion(
            id=f"d{len(state.discussions) + 1}",
            mode=mode,
            scope=scope,
            participants=participants,
            initiator=initiator,
            origin=origin,
            comment=comment,
        )
        state.discussions[discussion.id] = discussion
        payload = {
            "id": discussion.id,
            "mode": mode,
            "scope": scope,
            "participants": participants,
            "initiator": initiator,
            "origin": origin,
            "comment": comment,
        }
        state.record(
            "discussion_opened",
            initiator if initiator == "user" else "agents",
            payload,
            discussion.id,
        )
        return discussion

    async def open_by_user(
        self,
        agents: list[str],
        mode: s.Mode,
        scope: str | tuple[str, str] | None,
        comment: str,
        run: bool,
    ) -> Discussion:
        """The user starts a discussion (see :meth:`Session.start_discussion`)."""
        state = self.state
        if mode not in s.MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(s.MODES)})")
        state.check_participants(agents)
        if state.baseline and scope is not None:
            raise ConditionError("Baseline discussions are grounded in the whole document")
        if not state.baseline and scope is None:
            raise ConditionError("DocuTeam discussions are anchored to a block range (scope)")
        blocks = None
        if scope is not None:
            first, last = (scope, scope) if isinstance(scope, str) else scope
            blocks = [b.id for b in state.document.span(first, last)]
        discussion = self.open(
            mode=mode,
            scope=blocks,
            participants=list(agents),
            initiator="user",
            origin="side_panel" if state.baseline else "document",
            comment=comment,
        )
        await self.set_focus(discussion)
        if run and discussion.status == "open":
            await self.run(discussion.id)
        return discussion

    async def set_focus(self, d: Discussion, comment: str | None = None) -> None:
        """Run intent extraction; a failed step leaves the discussion failed."""
        state = self.state
        data = s.FocusInput(
            task=state.task,
            outline=state.outline(),
            scope=state.scope_view(d),
            mode=d.mode,
            comment=d.comment if comment is None else comment,
            agents=[state.public_profile(a) for a in d.participants],
            initiator="agents" if d.initiator == "agents" and comment is None else "user",
        )
        out = await state.steps.run("focus", data, d.id)
        if out is None:
            state.set_status(d, "failed", "the focus could not be set")
            return
        d.focus = out.focus
        state.record("focus", "moderator", {"focus": d.focus}, d.id)

    # ------------------------------------------------------------------ running

    def start(self, discussion_id: str) -> asyncio.Task[Discussion]:
        """Run a discussion in the background (see :meth:`Session.start`)."""
        d = self.state.discussion(discussion_id)
        previous = self.loops.get(d.id)
        if previous is not None and not previous.done():
            if d.status == "running":
                return previous
            task = self.state.spawn(self._loop_after(previous, d))
        else:
            task = self.state.spawn(self._loop(d))
        self.loops[d.id] = task
        return task

    async def run(self, discussion_id: str) -> Discussion:
        """Run a discussion until it pauses."""
        return await self.start(discussion_id)

    async def _loop_after(self, previous: asyncio.Task[Discussion], d: Discussion) -> Discussion:
        await asyncio.wait([previous])
        return await self._loop(d)

    async def _loop(self, d: Discussion) -> Discussion:
        state = self.state
        if d.status not in ("open", "running"):
            return d
        state.set_status(d, "running", "run started")
        rounds = 0
        while d.status == "running":
            if d.stop_requested:
                state.set_status(d, "stopped", "stopped by the user")
                break
            if rounds >= state.config.turn_budget:
                state.set_status(d, "budget_exhausted", f"{rounds} rounds without converging")
                break
            rounds += 1
            await self.round(d)
            if d.agent_turns - self._turns_at_summary(d) >= state.config.summary_every:
                await self.refresh_summary(d)
        await self.refresh_summary(d)
        if not d.active:
            await self.memory.after_discussion(d)
        return d

    @staticmethod
    def _turns_at_summary(d: Discussion) -> int:
        return sum(1 for m in d.messages[: d.summarized_at] if m.kind == "utterance")

    async def round(self, d: Discussion) -> None:
        """One moderator decision and, when an agent is to speak, its turn."""
        state = self.state
        decision = await state.steps.run(
            "moderator",
            s.ModeratorInput(
                task=state.task,
                mode=d.mode,
                scope=state.scope_view(d),
                focus=d.focus,
                agents=[state.public_profile(a) for a in d.participants],
                agent_turns=d.agent_turns,
                messages=state.recent(d),
                dialog_state=d.dialog_state,
                asked_user=d.asked_user,
            ),
            d.id,
        )
        if decision is None or d.stop_requested:
            return
        d.dialog_state = decision.dialog_state
        state.record("moderator", "moderator", decision.model_dump(), d.id)
        if decision.decision == "converged":
            state.set_status(d, "converged", decision.reasoning)
            return
        if decision.decision == "ask_user":
            question = state.add_message(d, "moderator", "question", decision.question_for_user)
            options = [decision.possible_answer_1, decision.possible_answer_2]
            d.pending = Clarification(
                message_id=question.id, question=question.text, options=options
            )
            d.asked_user = True
            payload = {"action": "asked", "question": question.text, "options": options}
            state.record("clarification", "moderator", payload, d.id)
            state.set_status(d, "waiting_for_user", "the moderator asked the user")
            return
        speaker = state.agents[decision.next_speaker_id]
        out = await state.steps.run(
            "utterance",
            s.UtteranceInput(
                task=state.task,
                mode=d.mode,
                focus=d.focus,
                scope=state.scope_view(d),
                agent=state.public_profile(speaker.id),
                memory=speaker.memory.snapshot(),
                elsewhere=self._elsewhere(speaker.id, d.id),
                direction=decision.speaking_direction,
                messages=state.recent(d),
            ),
            d.id,
        )
        if out is None or d.stop_requested or speaker.id not in d.participants:
            return
        state.add_message(
            d,
            speaker.id,
            "utterance",
            out.utterance,
            act=out.act,
            direction=decision.speaking_direction,
        )
        d.agent_turns += 1

    def _elsewhere(self, agent_id: str, discussion_id: str, n: int = 3) -> list[str]:
        said = [
            m.text
            for d in self.state.discussions.values()
            if d.id != discussion_id
            for m in d.messages
            if m.author == agent_id
        ]
        return said[-n:]

    async def refresh_summary(self, d: Discussion) -> None:
        """Refresh the mode summary and the bubble (concurrently) if there is news."""
        if d.summarized_at == len(d.messages) or not any(m.kind == "utterance" for m in d.messages):
            return
        state = self.state
        d.summarized_at = len(d.messages)
        messages = list(d.messages)
        agents = [
            state.public_profile(a)
            for a in dict.fromkeys([*d.participants, *d.speakers()])
            if a in state.agents
        ]
        summary, bubble = await asyncio.gather(
            state.steps.run(
                "summary",
                s.SummaryInput(
                    mode=d.mode,
                    focus=d.focus,
                    agents=agents,
                    speakers=d.speakers(),
                    messages=messages,
                ),
                d.id,
            ),
            state.steps.run(
                "bubble", s.BubbleInput(mode=d.mode, focus=d.focus, messages=messages), d.id
            ),
        )
        if summary is not None:
            d.summary = summary
            state.record(
                "summary", "summarizer", {"mode": d.mode, "summary": summary.model_dump()}, d.id
            )
        if bubble is not None:
            d.bubble = bubble.sentence
            state.record("bubble", "summarizer", {"text": d.bubble}, d.id)
