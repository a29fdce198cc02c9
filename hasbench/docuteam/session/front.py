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

The session is a front: the work is done by its parts, on one shared
:class:`~hasbench.docuteam.session.state.SessionState`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import Agent, load_agents
from hasbench.docuteam.discussion import Discussion, TriggerDecision
from hasbench.docuteam.document import Block, BlockType, Document, EditOp
from hasbench.docuteam.log import LogEvent, LogHeader, SessionLog
from hasbench.docuteam.session.config import SessionConfig
from hasbench.docuteam.session.incorporation import Incorporation, Placement
from hasbench.docuteam.session.loop import DiscussionLoop
from hasbench.docuteam.session.memory import MemoryUpkeep
from hasbench.docuteam.session.state import SessionState
from hasbench.docuteam.session.steering import Steering
from hasbench.docuteam.session.team import Team
from hasbench.docuteam.session.trigger import ProactiveTrigger
from hasbench.docuteam.steps import PROMPT_FOLDER, RoleModels
from hasbench.docuteam.timing import ManualClock, SystemClock
from hasbench.llm import LLMClient, ModelError, ResponseCache
from hasbench.prompts import prompt_hashes

DOCUMENT_FILES = ("plan.md", "plan.json")


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
        backends: RoleModels | None = None,
        client: LLMClient | None = None,
        log_path: str | Path | None = None,
        clock: SystemClock | ManualClock | None = None,
    ) -> None:
        if len(agents) < 2:
            raise ValueError("a session needs at least two agents")
        config = config or SessionConfig()
        self.backends = backends or RoleModels()
        header = LogHeader(
            condition=config.condition,
            participant=config.participant,
            task_name=config.task_name,
            order=config.order,
            task=task,
            config=config.model_dump(),
            backends=self.backends.model_dump(),
            package_version=version("hasbench"),
            prompt_hashes=prompt_hashes(PROMPT_FOLDER),
            document=json.loads(document.to_json()),
            agents=[
                {**a.profile.model_dump(), "memory": [e.model_dump() for e in a.memory.entries]}
                for a in agents.values()
            ],
        )
        if client is None and self.backends.uses_models():
            client = LLMClient(cache=ResponseCache.default())
        state = SessionState(
            document,
            agents,
            task,
            config,
            self.backends,
            client,
            SessionLog(header, log_path),
            clock or SystemClock(),
        )
        self._state = state
        self.document, self.agents, self.task, self.config = document, agents, task, config
        self.log, self.clock, self.discussions = state.log, state.clock, state.discussions
        memory = MemoryUpkeep(state)
        self._loop = DiscussionLoop(state, memory)
        self._trigger = ProactiveTrigger(state, self._loop)
        self._steering = Steering(state, self._loop, memory)
        self._incorporation = Incorporation(state, self._edited)
        self._team = Team(state)

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
        return self._state.baseline

    @property
    def failure(self) -> dict[str, Any] | None:
        """Why the session failed (the ``session_failed`` payload), or None.

        See :mod:`hasbench.docuteam.failures`: a failed session runs no model step and
        gives no measures.
        """
        return self._state.steps.failure

    def fail(self, role: str, model: str, step: str, error: ModelError) -> None:
        """Mark the session failed because a model outside the engine failed for good.

        A simulated participant's model is such a model. The engine stops calling its
        own models, and the log records why (once).
        """
        self._state.steps.fail(role, model, step, error)

    # ------------------------------------------------------------------ the team

    def add_agent(self, name: str, role: str, stance: str, expertise: list[str]) -> Agent:
        """The user adds an agent to the team (DocuTeam paper §4.1.1); logged as ``agent``.

        Its id is made from its name (``Mina`` -> ``mina``, ``mina-2`` if taken).

        Raises:
            ValueError: an empty field.
        """
        return self._team.add(name, role, stance, expertise)

    def edit_agent(
        self, agent_id: str, name: str, role: str, stance: str, expertise: list[str]
    ) -> Agent:
        """The user rewrites an agent's profile (its id and memory stay); logged as ``agent``.

        Raises:
            KeyError: no such agent.
            ValueError: an empty field.
        """
        return self._team.edit(agent_id, name, role, stance, expertise)

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
        self._state.record("edit", "user", op.model_dump())
        if not self.baseline:
            self._trigger.queue(op)
        return op

    def watch_edits(self, on: bool = True) -> None:
        """Run the trigger on its own ``debounce`` seconds after the last edit (needs a loop)."""
        self._trigger.watch(on)

    async def tick(self) -> TriggerDecision | None:
        """Send the pending edits to the trigger if the debounce time has passed."""
        return await self._trigger.tick()

    async def flush_edits(self) -> TriggerDecision | None:
        """Send the pending edits to the trigger now, whatever the time."""
        return await self._trigger.flush()

    async def settle(self) -> None:
        """Wait until no debounce, trigger or background discussion is running.

        Raises:
            Exception: the first error a background task raised.
        """
        state = self._state
        while True:
            tasks = [t for t in state.background if not t.done()]
            if not tasks:
                break
            await asyncio.wait(tasks)
        errors = [t.exception() for t in state.background if not t.cancelled() and t.exception()]
        state.background = {t for t in state.background if not t.done()}
        if errors:
            raise errors[0]

    # ------------------------------------------------------------------ discussions

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
        return await self._loop.open_by_user(agents, mode, scope, comment, run)

    def start(self, discussion_id: str) -> asyncio.Task[Discussion]:
        """Run a discussion in the background until it pauses; returns its task.

        A discussion runs one loop at a time: while its loop is running this returns
        that loop, and a discussion reopened while its last loop is still finishing
        runs again right after it.
        """
        return self._loop.start(discussion_id)

    async def run_discussion(self, discussion_id: str) -> Discussion:
        """Run a discussion until it converges, asks the user, is stopped or uses its budget."""
        return await self._loop.run(discussion_id)

    def scope_blocks(self, discussion_id: str) -> list[Block]:
        """The blocks a discussion is anchored to, as they read now."""
        return self._state.scope_view(self._state.discussion(discussion_id)).blocks

    # ------------------------------------------------------------------ steering

    async def post(self, discussion_id: str, text: str, *, run: bool = True) -> s.Message:
        """The user writes into a discussion (and reopens it if it had closed).

        The moderator takes the message into account at its next decision; the agents
        remember what it says about the user's wishes. A pending question is dropped.
        """
        return await self._steering.post(discussion_id, text, run)

    async def answer(self, discussion_id: str, reply: str | int, *, run: bool = True) -> s.Message:
        """The user answers the moderator's question: option 1 or 2, or free text.

        Raises:
            RuntimeError: the discussion is not waiting for an answer.
        """
        return await self._steering.answer(discussion_id, reply, run)

    def add_participant(self, discussion_id: str, agent_id: str) -> None:
        """Bring another agent into a discussion (at most four take part).

        A discussion that had ended reopens (status ``open``); :meth:`start` runs it so
        the newcomer speaks.
        """
        self._steering.add_participant(discussion_id, agent_id)

    def remove_participant(self, discussion_id: str, agent_id: str) -> None:
        """Take an agent out of a discussion (at least two stay)."""
        self._steering.remove_participant(discussion_id, agent_id)

    def set_focus(self, discussion_id: str, focus: str) -> None:
        """Replace a discussion's focus with the user's own words."""
        self._steering.set_focus(discussion_id, focus)

    def set_mode(self, discussion_id: str, mode: s.Mode) -> None:
        """Switch a discussion to another mode; its stages start over."""
        self._steering.set_mode(discussion_id, mode)

    async def stop(self, discussion_id: str) -> Discussion:
        """Stop a discussion; a running one stops after its current step."""
        return await self._steering.stop(discussion_id)

    # ------------------------------------------------------------------ incorporation

    async def apply_message(
        self,
        discussion_id: str,
        message_id: str,
        target: str,
        placement: Placement = "after",
        text: str | None = None,
    ) -> EditOp | None:
        """Put a discussion message (or a summary item's ``text``) into the document.

        In DocuTeam the snippet is rewritten to fit the target block and its neighbours;
        in Baseline it is pasted as it is. The result is an ordinary edit (so it can
        trigger the agents). Returns None when the rewrite failed (recorded).
        """
        return await self._incorporation.apply(discussion_id, message_id, target, placement, text)
