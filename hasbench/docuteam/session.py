"""The DocuTeam session: a document, a team of agents, their discussions and the log.

A :class:`Session` is the engine of the DocuTeam paper (§4.2). The user edits the
document and starts discussions; agents start discussions themselves after substantive
edits; a moderator runs each discussion turn by turn; the user steers, answers the
agents' questions and applies messages back into the document. Everything that happens
is an event in :attr:`Session.log`.

Everything that calls a model is a coroutine, so a notebook UI can run discussions in
the background (:meth:`Session.start`), stop them (:meth:`Session.stop`) and watch the
log as events arrive (:meth:`Session.subscribe`). Scripts drive the same API with a
:class:`~hasbench.docuteam.timing.ManualClock`::

    session = Session.from_folder("data/docuteam/workshop", clock=ManualClock())
    session.edit("b12", "Networking: random tables of five or speed rounds?")
    session.clock.advance(2.5)
    await session.tick()          # the debounced batch goes to the proactive trigger
    await session.settle()        # discussions the agents opened run to a pause
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import Agent, MemoryUpdate, MemoryUpdateError, load_agents
from hasbench.docuteam.discussion import Clarification, Discussion, Status, TriggerDecision
from hasbench.docuteam.document import Block, BlockType, Document, EditOp, EditView
from hasbench.docuteam.log import EventType, LogEvent, LogHeader, SessionLog
from hasbench.docuteam.steps import PROMPT_FOLDER, Backends, StepRunner
from hasbench.docuteam.timing import EditBatcher, ManualClock, SystemClock
from hasbench.llm import LLMClient, ResponseCache
from hasbench.prompts import prompt_hashes
from hasbench.trace import Usage

Condition = Literal["DocuTeam", "Baseline"]
DOCUMENT_FILES = ("plan.md", "plan.json")


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
    auto_run: bool = True
    """Run discussions the agents open right away, in the background."""
    participant: str = ""
    task_name: str = ""
    order: int = Field(default=0, ge=0, le=2)
    simulated_user: bool = False
    """The user's side was played by a script or a simulator, not by a person."""


# --------------------------------------------------------------------------- the session


class Session:
    """A DocuTeam session.

    Args:
        document: The document the user works on (the session edits it in place).
        agents: Agent id -> agent (profile and memory), at least two.
        task: What the user is working on (shown to every step).
        config: Session parameters (condition, threshold, debounce, budgets, labels).
        backends: Model or scripted stand-in per role.
        client: Model client; by default one with the workbench response cache when a
            role uses a model.
        log_path: Where the JSONL log is written as events happen (optional).
        clock: The session clock; :class:`ManualClock` for scripted runs.
    """

    def __init__(
        self,
        document: Document,
        agents: dict[str, Agent],
        task: str = "",
        *,
        config: SessionConfig | None = None,
        backends: Backends | None = None,
        client: LLMClient | None = None,
        log_path: str | Path | None = None,
        clock: SystemClock | ManualClock | None = None,
    ) -> None:
        if len(agents) < 2:
            raise ValueError("a session needs at least two agents")
        self.document = document
        self.agents = agents
        self.task = task
        self.config = config or SessionConfig()
        self.backends = backends or Backends()
        self.clock = clock or SystemClock()
        header = LogHeader(
            condition=self.config.condition,
            participant=self.config.participant,
            task_name=self.config.task_name,
            order=self.config.order,
            task=task,
            config=self.config.model_dump(),
            backends=self.backends.model_dump(),
            package_version=version("hasbench"),
            prompt_hashes=prompt_hashes(PROMPT_FOLDER),
            document=json.loads(document.to_json()),
            agents=[
                {**a.profile.model_dump(), "memory": [e.model_dump() for e in a.memory.entries]}
                for a in agents.values()
            ],
        )
        self.log = SessionLog(header, log_path)
        self.discussions: dict[str, Discussion] = {}
        if client is None and self.backends.uses_models():
            client = LLMClient(cache=ResponseCache.default())
        self._steps = StepRunner(self.backends, client, self._record_step)
        self._batch = EditBatcher(self.config.debounce)
        self._background: set[asyncio.Task[Any]] = set()
        self._loops: dict[str, asyncio.Task[Discussion]] = {}
        self._watching = False
        self._debounce_task: asyncio.Task[None] | None = None
        self._applications = 0

    @classmethod
    def from_folder(cls, folder: str | Path, **kwargs: Any) -> Session:
        """A session on a task folder: ``plan.md`` (or ``plan.json``), ``agents.yaml``, ``task.md``.

        Keyword arguments go to the constructor.
        """
        folder = Path(folder)
        documents = [folder / name for name in DOCUMENT_FILES if (folder / name).exists()]
        if not documents:
            raise FileNotFoundError(f"{folder}: no {' or '.join(DOCUMENT_FILES)}")
        task_file = folder / "task.md"
        task = task_file.read_text(encoding="utf-8").strip() if task_file.exists() else ""
        return cls(Document.load(documents[0]), load_agents(folder / "agents.yaml"), task, **kwargs)

    @property
    def baseline(self) -> bool:
        """True in the Baseline condition."""
        return self.config.condition == "Baseline"

    # ------------------------------------------------------------------ logging

    def _record(
        self,
        type: EventType,
        actor: str,
        payload: dict[str, Any],
        discussion: str | None = None,
        usage: Usage | None = None,
    ) -> LogEvent:
        return self.log.append(type, actor, payload, self.clock.now(), discussion, usage)

    def _record_step(
        self,
        type: EventType,
        payload: dict[str, Any],
        discussion: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        self._record(type, payload["role"], payload, discussion, usage)

    def subscribe(self, observer: Callable[[LogEvent], None]) -> Callable[[], None]:
        """Call ``observer(event)`` for every new log event; returns an unsubscribe function."""
        return self.log.subscribe(observer)

    # ------------------------------------------------------------------ editing

    def edit(self, block_id: str, text: str, *, checked: bool | None = None) -> EditOp:
        """The user rewrites a block."""
        return self._edited(self.document.update(block_id, text, checked=checked))

    def insert(
        self, text: str, block_type: BlockType = "paragraph", after: str | None = None, **kw: Any
    ) -> EditOp:
        """The user adds a block after ``after`` (at the start when None)."""
        return self._edited(self.document.insert(text, block_type, after, **kw))

    def delete(self, block_id: str) -> EditOp:
        """The user removes a block."""
        return self._edited(self.document.delete(block_id))

    def _edited(self, op: EditOp) -> EditOp:
        self._record("edit", "user", op.model_dump())
        if not self.baseline:
            self._batch.add(op, self.clock.now())
            if self._watching:
                self._schedule_debounce()
        return op

    def watch_edits(self, on: bool = True) -> None:
        """Run the trigger on its own ``debounce`` seconds after the last edit (needs a loop)."""
        self._watching = on
        if not on and self._debounce_task is not None:
            self._debounce_task.cancel()

    def _schedule_debounce(self) -> None:
        if self._debounce_task is not None and not self._debounce_task.done():
            self._debounce_task.cancel()
        self._debounce_task = self._spawn(self._debounced())

    async def _debounced(self) -> None:
        await asyncio.sleep(self.config.debounce)
        if self._batch.due(self.clock.now()):
            await self._trigger(self._batch.take())

    async def tick(self) -> TriggerDecision | None:
        """Send the pending edits to the trigger if the debounce time has passed."""
        if not self._batch.due(self.clock.now()):
            return None
        return await self._trigger(self._batch.take())

    async def flush_edits(self) -> TriggerDecision | None:
        """Send the pending edits to the trigger now, whatever the time."""
        if not self._batch.pending:
            return None
        return await self._trigger(self._batch.take())

    async def settle(self) -> None:
        """Wait until no debounce, trigger or background discussion is running.

        Raises:
            Exception: the first error a background task raised.
        """
        while True:
            tasks = [t for t in self._background if not t.done()]
            if not tasks:
                break
            await asyncio.wait(tasks)
        errors = [t.exception() for t in self._background if not t.cancelled() and t.exception()]
        self._background = {t for t in self._background if not t.done()}
        if errors:
            raise errors[0]

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        return task

    # ------------------------------------------------------------------ proactive trigger

    def _outline(self) -> str:
        headings = [b for b in self.document.blocks if b.type == "heading"]
        shown = headings or self.document.blocks[:5]
        return "\n".join(f"- {b.text}" for b in shown) or "(empty document)"

    def _nearby(self, views: list[EditView]) -> list[Discussion]:
        ids = self.document.ids()
        edited = [ids.index(v.block_id) for v in views if v.block_id in ids]
        edited += [ids.index(b.id) for v in views for b in v.context_before[-1:] if b.id in ids]
        nearby = []
        for d in self.discussions.values():
            if not d.active or d.scope is None:
                continue
            positions = [ids.index(b) for b in d.scope if b in ids]
            if any(abs(p - e) <= self.config.nearby_distance for p in positions for e in edited):
                nearby.append(d)
        return nearby

    def _region(self, views: list[EditView]) -> list[str]:
        ids = self.document.ids()
        present = [v.block_id for v in views if v.after is not None and v.block_id in ids]
        if not present:
            present = [b.id for v in views for b in (v.context_before[-1:] or v.context_after[:1])]
            present = [b for b in present if b in ids]
        if not present:
            return []
        positions = sorted(ids.index(b) for b in present)
        return ids[positions[0] : positions[-1] + 1]

    async def _trigger(self, ops: list[EditOp]) -> TriggerDecision:
        """Decide whether a batch of edits opens an agent-initiated discussion."""
        edits = [op.id for op in ops]
        views = self.document.edit_views(ops, self.config.context_blocks)
        threshold = self.config.threshold
        if not views:
            return self._decided(
                TriggerDecision(outcome="no_change", edits=edits, threshold=threshold)
            )
        read = await self._steps.run(
            "read_edit", s.ReadEditInput(task=self.task, outline=self._outline(), edits=views)
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
        views_of_agents = [s.AgentView.of(a.profile) for a in self.agents.values()]
        selected = await self._steps.run(
            "select_agents",
            s.SelectInput(
                goal=read.goal, interpretation=read.interpretation, agents=views_of_agents
            ),
        )
        if selected is None:
            return self._decided(decision.model_copy(update={"reason": "select_agents"}))
        decision.selected = [sel.model_dump() for sel in selected.agents]
        nearby = self._nearby(views)
        decision.nearby = [d.id for d in nearby]
        nearby_views = [
            s.NearbyDiscussion(id=d.id, mode=d.mode, focus=d.focus, bubble=d.bubble) for d in nearby
        ]
        outputs = await asyncio.gather(
            *(
                self._steps.run(
                    "need",
                    s.NeedInput(
                        task=self.task,
                        goal=read.goal,
                        interpretation=read.interpretation,
                        edits=views,
                        agent=s.AgentView.of(self.agents[sel.id].profile),
                        nearby=nearby_views,
                    ),
                )
                for sel in selected.agents
            )
        )
        open_modes = {d.mode for d in nearby}
        for sel, out in zip(selected.agents, outputs, strict=True):
            if out is None:
                continue
            raw = {mode: out.score(mode) for mode in s.MODES}
            damped = {
                mode: min(score, self.config.similar_cap) if mode in open_modes else score
                for mode, score in raw.items()
            }
            decision.scores[sel.id] = {"raw": raw, "scores": damped, "reaction": out.reaction}
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
        region = self._region(views)
        discussion = self._new_discussion(
            mode=best,
            scope=region,
            participants=list(decision.scores),
            initiator="agents",
            origin="document",
            comment=read.goal or "",
        )
        decision.discussion = discussion.id
        self._decided(decision)
        await self._set_focus_from_model(discussion)
        if self.config.auto_run and discussion.status == "open":
            self.start(discussion.id)
        return decision

    def _decided(self, decision: TriggerDecision) -> TriggerDecision:
        self._record("trigger", "agents", decision.model_dump(), decision.discussion)
        return decision

    # ------------------------------------------------------------------ opening discussions

    def _new_discussion(
        self,
        mode: s.Mode,
        scope: list[str] | None,
        participants: list[str],
        initiator: Literal["user", "agents"],
        origin: Literal["document", "side_panel"],
        comment: str,
    ) -> Discussion:
        discussion = Discussion(
            id=f"d{len(self.discussions) + 1}",
            mode=mode,
            scope=scope,
            participants=participants,
            initiator=initiator,
            origin=origin,
            comment=comment,
        )
        self.discussions[discussion.id] = discussion
        payload = {
            "id": discussion.id,
            "mode": mode,
            "scope": scope,
            "participants": participants,
            "initiator": initiator,
            "origin": origin,
            "comment": comment,
        }
        self._record(
            "discussion_opened",
            initiator if initiator == "user" else "agents",
            payload,
            discussion.id,
        )
        return discussion

    async def start_discussion(
        self,
        agents: list[str],
        mode: s.Mode,
        scope: str | tuple[str, str] | None = None,
        comment: str = "",
        *,
        run: bool = True,
    ) -> Discussion:
        """The user starts a discussion.

        In DocuTeam the user drops agents on a block range (``scope``: one block id or a
        first/last pair); in Baseline the user starts it from the side panel and it is
        grounded in the whole document (``scope`` must be None).

        Args:
            agents: 2-4 participating agent ids.
            mode: ``idea``, ``discussion`` or ``evaluation``.
            scope: The anchored block range (DocuTeam only).
            comment: The user's optional request.
            run: Run the discussion until it pauses before returning.

        Raises:
            ConditionError: a scope in Baseline, or none in DocuTeam.
            ValueError: an unknown agent or mode, or not 2-4 agents.
        """
        if mode not in s.MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(s.MODES)})")
        self._check_participants(agents)
        if self.baseline and scope is not None:
            raise ConditionError("Baseline discussions are grounded in the whole document")
        if not self.baseline and scope is None:
            raise ConditionError("DocuTeam discussions are anchored to a block range (scope)")
        blocks = None
        if scope is not None:
            first, last = (scope, scope) if isinstance(scope, str) else scope
            blocks = [b.id for b in self.document.span(first, last)]
        discussion = self._new_discussion(
            mode=mode,
            scope=blocks,
            participants=list(agents),
            initiator="user",
            origin="side_panel" if self.baseline else "document",
            comment=comment,
        )
        await self._set_focus_from_model(discussion)
        if run and discussion.status == "open":
            await self.run_discussion(discussion.id)
        return discussion

    def _check_participants(self, agents: list[str]) -> None:
        unknown = [a for a in agents if a not in self.agents]
        if unknown:
            raise ValueError(
                f"unknown agent(s) {', '.join(unknown)}; known: {', '.join(self.agents)}"
            )
        if len(set(agents)) != len(agents):
            raise ValueError("an agent is listed twice")
        if not 2 <= len(agents) <= 4:
            raise ValueError(f"a discussion has 2-4 participants, not {len(agents)}")

    async def _set_focus_from_model(self, d: Discussion, comment: str | None = None) -> None:
        """Run intent extraction; a failed step leaves the discussion failed."""
        data = s.FocusInput(
            task=self.task,
            outline=self._outline(),
            scope=self._scope_view(d),
            mode=d.mode,
            comment=d.comment if comment is None else comment,
            agents=[s.AgentView.of(self.agents[a].profile) for a in d.participants],
            initiator="agents" if d.initiator == "agents" and comment is None else "user",
        )
        out = await self._steps.run("focus", data, d.id)
        if out is None:
            self._set_status(d, "failed", "the focus could not be set")
            return
        d.focus = out.focus
        self._record("focus", "moderator", {"focus": d.focus}, d.id)

    def _scope_view(self, d: Discussion) -> s.ScopeView:
        if d.scope is None:
            return s.ScopeView(
                section="(whole document)", blocks=self.document.blocks, whole_document=True
            )
        ids = self.document.ids()
        present = [b for b in d.scope if b in ids]
        if not present:
            return s.ScopeView(section="", blocks=[])
        first, last = ids.index(present[0]), ids.index(present[-1])
        n = self.config.near_blocks
        blocks = self.document.blocks
        near = blocks[max(0, first - n) : first] + blocks[last + 1 : last + 1 + n]
        return s.ScopeView(
            section=self.document.section_of(present[0]),
            blocks=[b.model_copy() for b in blocks[first : last + 1]],
            near=[b.model_copy() for b in near],
        )

    def _set_status(self, d: Discussion, status: Status, reason: str) -> None:
        d.status = status
        self._record("status", "engine", {"status": status, "reason": reason}, d.id)

    # ------------------------------------------------------------------ running discussions

    def start(self, discussion_id: str) -> asyncio.Task[Discussion]:
        """Run a discussion in the background until it pauses; returns its task.

        A discussion runs one loop at a time: while its loop is running this returns
        that loop, and a discussion reopened while its last loop is still finishing
        runs again right after it.
        """
        d = self._discussion(discussion_id)
        previous = self._loops.get(d.id)
        if previous is not None and not previous.done():
            if d.status == "running":
                return previous
            task = self._spawn(self._loop_after(previous, d))
        else:
            task = self._spawn(self._loop(d))
        self._loops[d.id] = task
        return task

    async def _loop_after(self, previous: asyncio.Task[Discussion], d: Discussion) -> Discussion:
        await asyncio.wait([previous])
        return await self._loop(d)

    async def run_discussion(self, discussion_id: str) -> Discussion:
        """Run a discussion until it converges, asks the user, is stopped or uses its budget."""
        return await self.start(discussion_id)

    async def _loop(self, d: Discussion) -> Discussion:
        if d.status not in ("open", "running"):
            return d
        self._set_status(d, "running", "run started")
        rounds = 0
        while d.status == "running":
            if d.stop_requested:
                self._set_status(d, "stopped", "stopped by the user")
                break
            if rounds >= self.config.turn_budget:
                self._set_status(d, "budget_exhausted", f"{rounds} rounds without converging")
                break
            rounds += 1
            await self._round(d)
            if d.agent_turns - self._turns_at_summary(d) >= self.config.summary_every:
                await self._refresh_summary(d)
        await self._refresh_summary(d)
        if not d.active:
            await self._update_memories(d)
        return d

    def _turns_at_summary(self, d: Discussion) -> int:
        return sum(1 for m in d.messages[: d.summarized_at] if m.kind == "utterance")

    def _recent(self, d: Discussion) -> list[s.Message]:
        return d.messages[-self.config.history_window :]

    async def _round(self, d: Discussion) -> None:
        """One moderator decision and, when an agent is to speak, its turn."""
        agents = [s.AgentView.of(self.agents[a].profile) for a in d.participants]
        decision = await self._steps.run(
            "moderator",
            s.ModeratorInput(
                task=self.task,
                mode=d.mode,
                scope=self._scope_view(d),
                focus=d.focus,
                agents=agents,
                agent_turns=d.agent_turns,
                messages=self._recent(d),
                dialog_state=d.dialog_state,
                asked_user=d.asked_user,
            ),
            d.id,
        )
        if decision is None or d.stop_requested:
            return
        d.dialog_state = decision.dialog_state
        self._record("moderator", "moderator", decision.model_dump(), d.id)
        if decision.decision == "converged":
            self._set_status(d, "converged", decision.reasoning)
            return
        if decision.decision == "ask_user":
            question = self._add_message(d, "moderator", "question", decision.question_for_user)
            options = [decision.possible_answer_1, decision.possible_answer_2]
            d.pending = Clarification(
                message_id=question.id, question=question.text, options=options
            )
            d.asked_user = True
            payload = {"action": "asked", "question": question.text, "options": options}
            self._record("clarification", "moderator", payload, d.id)
            self._set_status(d, "waiting_for_user", "the moderator asked the user")
            return
        speaker = self.agents[decision.next_speaker_id]
        out = await self._steps.run(
            "utterance",
            s.UtteranceInput(
                task=self.task,
                mode=d.mode,
                focus=d.focus,
                scope=self._scope_view(d),
                agent=s.AgentView.of(speaker.profile),
                memory=speaker.memory.snapshot(),
                elsewhere=self._elsewhere(speaker.id, d.id),
                direction=decision.speaking_direction,
                messages=self._recent(d),
            ),
            d.id,
        )
        if out is None or d.stop_requested or speaker.id not in d.participants:
            return
        self._add_message(
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
            for d in self.discussions.values()
            if d.id != discussion_id
            for m in d.messages
            if m.author == agent_id
        ]
        return said[-n:]

    def _add_message(
        self, d: Discussion, author: str, kind: s.MessageKind, text: str, **extra: Any
    ) -> s.Message:
        names = {"user": "User", "moderator": "Moderator"}
        name = names.get(author) or self.agents[author].profile.name
        message = s.Message(
            id=f"{d.id}-m{len(d.messages) + 1}",
            author=author,
            author_name=name,
            kind=kind,
            text=text,
            **extra,
        )
        d.messages.append(message)
        self._record("message", author, message.model_dump(), d.id)
        return message

    async def _refresh_summary(self, d: Discussion) -> None:
        """Refresh the mode summary and the bubble (concurrently) if there is news."""
        if d.summarized_at == len(d.messages) or not any(m.kind == "utterance" for m in d.messages):
            return
        d.summarized_at = len(d.messages)
        messages = list(d.messages)
        agents = [
            s.AgentView.of(self.agents[a].profile)
            for a in dict.fromkeys([*d.participants, *d.speakers()])
            if a in self.agents
        ]
        summary, bubble = await asyncio.gather(
            self._steps.run(
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
            self._steps.run(
                "bubble", s.BubbleInput(mode=d.mode, focus=d.focus, messages=messages), d.id
            ),
        )
        if summary is not None:
            d.summary = summary
            self._record(
                "summary", "summarizer", {"mode": d.mode, "summary": summary.model_dump()}, d.id
            )
        if bubble is not None:
            d.bubble = bubble.sentence
            self._record("bubble", "summarizer", {"text": d.bubble}, d.id)

    async def _update_memories(self, d: Discussion) -> None:
        """After a discussion closes: every participant's memory, concurrently."""
        if not any(m.kind == "utterance" for m in d.messages):
            return
        participants = [a for a in d.participants if a in self.agents]
        outputs = await asyncio.gather(
            *(
                self._steps.run(
                    "memory_discussion",
                    s.DiscussionMemoryInput(
                        agent=s.AgentView.of(self.agents[a].profile),
                        mode=d.mode,
                        focus=d.focus,
                        messages=list(d.messages),
                        entries=self.agents[a].memory.snapshot(),
                    ),
                    d.id,
                )
                for a in participants
            )
        )
        for agent_id, out in zip(participants, outputs, strict=True):
            if out is not None:
                self._apply_memory(agent_id, out, "discussion", d.id)

    def _apply_memory(
        self, agent_id: str, update: MemoryUpdate, cause: str, discussion: str
    ) -> None:
        if not (update.add or update.update or update.delete):
            return
        try:
            change = self.agents[agent_id].memory.apply(update)
        except MemoryUpdateError as exc:
            payload = {
                "step": "memory",
                "role": "summarizer",
                "error_type": "invalid_output",
                "message": str(exc),
            }
            self._record("error", "summarizer", payload, discussion)
            return
        payload = {
            "agent": agent_id,
            "cause": cause,
            **{k: [e.model_dump() for e in v] for k, v in change.items()},
        }
        self._record("memory", agent_id, payload, discussion)

    # ------------------------------------------------------------------ steering

    def _discussion(self, discussion_id: str) -> Discussion:
        try:
            return self.discussions[discussion_id]
        except KeyError:
            raise KeyError(f"no discussion {discussion_id!r}") from None

    def _steer(self, d: Discussion, action: str, **detail: Any) -> None:
        self._record("steering", "user", {"action": action, **detail}, d.id)

    def _in_document_only(self, what: str) -> None:
        if self.baseline:
            raise ConditionError(f"{what} is in-document steering, which Baseline does not offer")

    async def post(self, discussion_id: str, text: str, *, run: bool = True) -> s.Message:
        """The user writes into a discussion (and reopens it if it had closed).

        The moderator takes the message into account at its next decision; the agents
        remember what it says about the user's wishes. A pending question is dropped.
        """
        d = self._discussion(discussion_id)
        self._steer(d, "post", text=text)
        message = self._add_message(d, "user", "post", text)
        d.pending = None
        await self._remember_user(d)
        await self._resume(d, reopen_with=text)
        if run:
            await self.run_discussion(d.id)
        return message

    async def answer(self, discussion_id: str, reply: str | int, *, run: bool = True) -> s.Message:
        """The user answers the moderator's question: option 1 or 2, or free text.

        Raises:
            RuntimeError: the discussion is not waiting for an answer.
        """
        d = self._discussion(discussion_id)
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
        self._record("clarification", "user", payload, d.id)
        message = self._add_message(d, "user", "answer", text)
        d.pending = None
        await self._remember_user(d)
        self._set_status(d, "open", "the user answered")
        if run:
            await self.run_discussion(d.id)
        return message

    async def _resume(self, d: Discussion, reopen_with: str) -> None:
        """Make a discussion runnable again after a user message."""
        if d.status == "running":
            return
        if d.status in ("waiting_for_user", "open"):
            self._set_status(d, "open", "the user wrote")
            return
        d.stop_requested = False
        self._set_status(d, "open", "reopened by a user message")
        await self._set_focus_from_model(d, comment=reopen_with)

    async def _remember_user(self, d: Discussion) -> None:
        out = await self._steps.run(
            "memory_user",
            s.UserMemoryInput(mode=d.mode, focus=d.focus, messages=self._recent(d)),
            d.id,
        )
        if out is None or not out.add:
            return
        for agent_id in d.participants:
            self._apply_memory(agent_id, MemoryUpdate(add=out.add), "user_message", d.id)

    def add_participant(self, discussion_id: str, agent_id: str) -> None:
        """Bring another agent into a discussion (at most four take part)."""
        d = self._discussion(discussion_id)
        self._in_document_only("changing participants")
        self._check_participants([*d.participants, agent_id])
        d.participants.append(agent_id)
        self._steer(d, "add_participant", agent=agent_id)

    def remove_participant(self, discussion_id: str, agent_id: str) -> None:
        """Take an agent out of a discussion (at least two stay)."""
        d = self._discussion(discussion_id)
        self._in_document_only("changing participants")
        if agent_id not in d.participants:
            raise ValueError(f"{agent_id!r} does not take part in {d.id}")
        self._check_participants([a for a in d.participants if a != agent_id])
        d.participants.remove(agent_id)
        self._steer(d, "remove_participant", agent=agent_id)

    def set_focus(self, discussion_id: str, focus: str) -> None:
        """Replace a discussion's focus with the user's own words."""
        d = self._discussion(discussion_id)
        self._in_document_only("changing the focus")
        if not focus.strip():
            raise ValueError("the focus cannot be empty")
        d.focus = focus.strip()
        self._steer(d, "set_focus", focus=d.focus)
        self._record("focus", "user", {"focus": d.focus}, d.id)

    def set_mode(self, discussion_id: str, mode: s.Mode) -> None:
        """Switch a discussion to another mode; its stages start over."""
        d = self._discussion(discussion_id)
        self._in_document_only("changing the mode")
        if mode not in s.MODES:
            raise ValueError(f"unknown mode {mode!r}")
        d.mode = mode
        d.dialog_state = s.DialogState()
        self._steer(d, "set_mode", mode=mode)

    async def stop(self, discussion_id: str) -> Discussion:
        """Stop a discussion; a running one stops after its current step."""
        d = self._discussion(discussion_id)
        self._steer(d, "stop")
        d.stop_requested = True
        loop = self._loops.get(d.id)
        if loop is not None and not loop.done():
            await loop
        elif d.active:
            d.pending = None
            self._set_status(d, "stopped", "stopped by the user")
            await self._update_memories(d)
        return d

    # ------------------------------------------------------------------ incorporation

    async def apply_message(
        self,
        discussion_id: str,
        message_id: str,
        target: str,
        placement: Literal["after", "replace"] = "after",
        text: str | None = None,
    ) -> EditOp | None:
        """Put a discussion message (or a summary item's ``text``) into the document.

        In DocuTeam the snippet is rewritten to fit the target block and its neighbours;
        in Baseline it is pasted as it is. The result is an ordinary edit (so it can
        trigger the agents). Returns None when the rewrite failed (recorded).
        """
        d = self._discussion(discussion_id)
        message = d.message(message_id)
        snippet = text or message.text
        block = self.document.block(target)
        application = f"a{self._applications + 1}"
        if self.baseline:
            written, adapted = " ".join(snippet.split()), False
        else:
            before, after = self.document.neighbours(target, 1)
            out = await self._steps.run(
                "incorporate",
                s.IncorporateInput(
                    snippet=snippet,
                    author_name=message.author_name,
                    focus=d.focus,
                    target=block,
                    before=before[0] if before else None,
                    after=after[0] if after else None,
                    placement=placement,
                ),
                d.id,
            )
            if out is None:
                return None
            written, adapted = out.text, True
        self._applications += 1
        if placement == "replace":
            op = self.document.update(
                target, written, source="application", application=application
            )
        else:
            kind = "paragraph" if block.type == "heading" else block.type
            op = self.document.insert(
                written,
                kind,
                target,
                level=block.level if kind == "heading" else 0,
                source="application",
                application=application,
            )
        self._edited(op)
        payload = {
            "id": application,
            "message_id": message_id,
            "target": target,
            "placement": placement,
            "snippet": snippet,
            "text": written,
            "adapted": adapted,
            "edit": op.id,
        }
        self._record("application", "user", payload, d.id)
        return op

    # ------------------------------------------------------------------ reading

    def scope_blocks(self, discussion_id: str) -> list[Block]:
        """The blocks a discussion is anchored to, as they read now."""
        return self._scope_view(self._discussion(discussion_id)).blocks
