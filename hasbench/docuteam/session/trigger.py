"""The proactive trigger: the agents read the user's edits and may open a discussion.

Edits wait in a batch until none has arrived for the debounce time (DocuTeam paper
§4.2.3). The batch is then read: a trivial edit ends there; otherwise the edit's goal is
interpreted, the relevant agents are selected, and each scores the need for every mode
in [0, 1] (a mode already open in a nearby discussion is capped). A discussion opens in
the best mode when its mean score exceeds the threshold. Every decision is a ``trigger``
event.
"""

from __future__ import annotations

import asyncio

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Discussion, TriggerDecision
from hasbench.docuteam.document import EditOp, EditView
from hasbench.docuteam.session.loop import DiscussionLoop
from hasbench.docuteam.session.state import SessionState
from hasbench.docuteam.timing import EditBatcher


class ProactiveTrigger:
    """Batches the user's edits and decides whether they open a discussion."""

    def __init__(self, state: SessionState, loop: DiscussionLoop) -> None:
        self.state = state
        self.loop = loop
        self.batch = EditBatcher(state.config.debounce)
        self._watching = False
        self._debounce_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ batching

    def queue(self, op: EditOp) -> None:
        """Add an edit to the batch (and restart the debounce when watching)."""
        self.batch.add(op, self.state.clock.now())
        if self._watching:
            if self._debounce_task is not None and not self._debounce_task.done():
                self._debounce_task.cancel()
            self._debounce_task = self.state.spawn(self._debounced())

    def watch(self, on: bool) -> None:
        """Run the trigger on its own after the debounce (or stop doing so)."""
        self._watching = on
        if not on and self._debounce_task is not None:
            self._debounce_task.cancel()

    async def _debounced(self) -> None:
        await asyncio.sleep(self.state.config.debounce)
        if self.batch.due(self.state.clock.now()):
            await self.decide(self.batch.take())

    async def tick(self) -> TriggerDecision | None:
        """Decide on the pending edits if the debounce time has passed."""
        if not self.batch.due(self.state.clock.now()):
            return None
        return await self.decide(self.batch.take())

    async def flush(self) -> TriggerDecision | None:
        """Decide on the pending edits now, whatever the time."""
        if not self.batch.pending:
            return None
        return await self.decide(self.batch.take())

    # ------------------------------------------------------------------ deciding

    async def decide(self, ops: list[EditOp]) -> TriggerDecision:
        """Decide whether a batch of edits opens an agent-initiated discussion."""
        state = self.state
        edits = [op.id for op in ops]
        views = state.document.edit_views(ops, state.config.context_blocks)
        threshold = state.config.threshold
        if not views:
            return self._decided(
                TriggerDecision(outcome="no_change", edits=edits, threshold=threshold)
            )
        read = await state.steps.run(
            "read_edit", s.ReadEditInput(task=state.task, outline=state.outline(), edits=views)
        )
        if read is None:
            return self._decided(
                TriggerDecision(
                    outcome="failed", edits=edits, threshold=threshold, reason="read_edit"
                )
            )
        if read.trivial:
            return self._decided(
                TriggerDecision(outcome="trivial", edits=edits, threshold=threshold)
            )
        decision = TriggerDecision(
            outcome="failed",
            edits=edits,
            goal=read.goal,
            interpretation=read.interpretation,
            threshold=threshold,
        )
        selected = await state.steps.run(
            "select_agents",
            s.SelectInput(
                goal=read.goal,
                interpretation=read.interpretation,
                agents=[state.public_profile(a) for a in state.agents],
            ),
        )
        if selected is None:
            return self._decided(decision.model_copy(update={"reason": "select_agents"}))
        decision.selected = [sel.model_dump() for sel in selected.agents]
        await self._score(decision, read, [sel.id for sel in selected.agents], views)
        if len(decision.scores) < 2:
            decision.reason = "fewer than two agents scored the edit"
            return self._decided(decision)
        scored = list(decision.scores.values())
        decision.means = {
            mode: round(sum(x["scores"][mode] for x in scored) / len(scored), 6) for mode in s.MODES
        }
        best = max(s.MODES, key=lambda mode: decision.means[mode])
        if decision.means[best] <= threshold:
            decision.outcome = "below_threshold"
            return self._decided(decision)
        decision.outcome, decision.mode = "opened", best
        discussion = self.loop.open(
            mode=best,
            scope=self._region(views),
            participants=list(decision.scores),
            initiator="agents",
            origin="document",
            comment=read.goal or "",
        )
        decision.discussion = discussion.id
        self._decided(decision)
        await self.loop.set_focus(discussion)
        if state.config.auto_run and discussion.status == "open":
            self.loop.start(discussion.id)
        return decision

    async def _score(
        self,
        decision: TriggerDecision,
        read: s.ReadEditOutput,
        selected: list[str],
        views: list[EditView],
    ) -> None:
        """Each selected agent scores the need per mode (concurrently); damped near open ones."""
        state = self.state
        nearby = self._nearby(views)
        decision.nearby = [d.id for d in nearby]
        nearby_views = [
            s.NearbyDiscussion(id=d.id, mode=d.mode, focus=d.focus, bubble=d.bubble) for d in nearby
        ]
        outputs = await asyncio.gather(
            *(
                state.steps.run(
                    "need",
                    s.NeedInput(
                        task=state.task,
                        goal=read.goal,
                        interpretation=read.interpretation,
                        edits=views,
                        agent=state.public_profile(agent_id),
                        nearby=nearby_views,
                    ),
                )
                for agent_id in selected
            )
        )
        open_modes = {d.mode for d in nearby}
        for agent_id, out in zip(selected, outputs, strict=True):
            if out is None:
                continue
            raw = {mode: out.score(mode) for mode in s.MODES}
            damped = {
                mode: min(score, state.config.similar_cap) if mode in open_modes else score
                for mode, score in raw.items()
            }
            decision.scores[agent_id] = {"raw": raw, "scores": damped, "reaction": out.reaction}

    def _decided(self, decision: TriggerDecision) -> TriggerDecision:
        self.state.record("trigger", "agents", decision.model_dump(), decision.discussion)
        return decision

    def _nearby(self, views: list[EditView]) -> list[Discussion]:
        """Open discussions anchored within ``nearby_distance`` blocks of the edits."""
        state = self.state
        ids = state.document.ids()
        edited = [ids.index(v.block_id) for v in views if v.block_id in ids]
        edited += [ids.index(b.id) for v in views for b in v.context_before[-1:] if b.id in ids]
        nearby = []
        for d in state.discussions.values():
            if not d.active or d.scope is None:
                continue
            positions = [ids.index(b) for b in d.scope if b in ids]
            if any(abs(p - e) <= state.config.nearby_distance for p in positions for e in edited):
                nearby.append(d)
        return nearby

    def _region(self, views: list[EditView]) -> list[str]:
        """The block range the edits span (what an opened discussion is anchored to)."""
        ids = self.state.document.ids()
        present = [v.block_id for v in views if v.after is not None and v.block_id in ids]
        if not present:
            present = [b.id for v in views for b in (v.context_before[-1:] or v.context_after[:1])]
            present = [b for b in present if b in ids]
        if not present:
            return []
        positions = sorted(ids.index(b) for b in present)
        return ids[positions[0] : positions[-1] + 1]
