"""What the parts of a session share, and the small acts they all perform.

The trigger, the discussion loop, memory upkeep, steering and incorporation each work on
one :class:`SessionState`: the document, the agents, the task, the configuration, the
step runner, the log and its clock, the discussions and the background tasks. Its
methods are the acts several parts need: record an event, add a message, set a status,
render the scope a discussion is anchored to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import Agent
from hasbench.docuteam.discussion import Discussion, DiscussionStatus
from hasbench.docuteam.document import Document
from hasbench.docuteam.log import LogEvent, LogEventType, SessionLog
from hasbench.docuteam.session.config import ConditionError, SessionConfig
from hasbench.docuteam.steps import RoleModels, StepRunner
from hasbench.docuteam.timing import ManualClock, SystemClock
from hasbench.llm import LLMClient
from hasbench.trace import Usage


class SessionState:
    """The shared state of a session (see the module docstring).

    Args:
        document: The document the user works on (edited in place).
        agents: Agent id -> agent.
        task: What the user is working on.
        config: Session parameters.
        backends: Model or scripted stand-in per role.
        client: Model client (needed when a role uses a model).
        log: The session log.
        clock: The session clock.
    """

    def __init__(
        self,
        document: Document,
        agents: dict[str, Agent],
        task: str,
        config: SessionConfig,
        backends: RoleModels,
        client: LLMClient | None,
        log: SessionLog,
        clock: SystemClock | ManualClock,
    ) -> None:
        self.document = document
        self.agents = agents
        self.task = task
        self.config = config
        self.log = log
        self.clock = clock
        self.steps = StepRunner(backends, client, self.record_step, config.failed_steps_in_a_row)
        self.discussions: dict[str, Discussion] = {}
        self.background: set[asyncio.Task[Any]] = set()

    @property
    def baseline(self) -> bool:
        """True in the Baseline condition."""
        return self.config.condition == "Baseline"

    # ------------------------------------------------------------------ recording

    def record(
        self,
        type: LogEventType,
        actor: str,
        payload: dict[str, Any],
        discussion: str | None = None,
        usage: Usage | None = None,
    ) -> LogEvent:
        """Append an event to the log at the clock's time."""
        return self.log.append(type, actor, payload, self.clock.now(), discussion, usage)

    def record_step(
        self,
        type: LogEventType,
        payload: dict[str, Any],
        discussion: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        """Append a step runner's event (a model call or an error), its role as actor."""
        self.record(type, payload["role"], payload, discussion, usage)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine in the background; :meth:`Session.settle` waits for it."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self.background.add(task)
        return task

    # ------------------------------------------------------------------ discussions

    def discussion(self, discussion_id: str) -> Discussion:
        """A discussion by id.

        Raises:
            KeyError: no such discussion.
        """
        try:
            return self.discussions[discussion_id]
        except KeyError:
            raise KeyError(f"no discussion {discussion_id!r}") from None

    def public_profile(self, agent_id: str) -> s.PublicProfile:
        """An agent's profile as the steps show it."""
        return s.PublicProfile.of(self.agents[agent_id].profile)

    def set_status(self, d: Discussion, status: DiscussionStatus, reason: str) -> None:
        """Give a discussion a new status and log why."""
        d.status = status
        self.record("status", "engine", {"status": status, "reason": reason}, d.id)

    def add_message(
        self, d: Discussion, author: str, kind: s.MessageKind, text: str, **extra: Any
    ) -> s.Message:
        """Add a message to a discussion (and the log)."""
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
        self.record("message", author, message.model_dump(), d.id)
        return message

    def recent(self, d: Discussion) -> list[s.Message]:
        """The latest messages the moderator and the agents are shown."""
        return d.messages[-self.config.history_window :]

    def check_participants(self, agents: list[str]) -> None:
        """Refuse unknown or repeated agents and teams outside 2-4.

        Raises:
            ValueError: what is wrong with the list.
        """
        unknown = [a for a in agents if a not in self.agents]
        if unknown:
            raise ValueError(
                f"unknown agent(s) {', '.join(unknown)}; known: {', '.join(self.agents)}"
            )
        if len(set(agents)) != len(agents):
            raise ValueError("an agent is listed twice")
        if not 2 <= len(agents) <= 4:
            raise ValueError(f"a discussion has 2-4 participants, not {len(agents)}")

    def in_document_only(self, what: str) -> None:
        """Refuse an in-document steering action in the Baseline condition.

        Raises:
            ConditionError: the session is in the Baseline condition.
        """
        if self.baseline:
            raise ConditionError(f"{what} is in-document steering, which Baseline does not offer")

    # ------------------------------------------------------------------ the document

    def outline(self) -> str:
        """The document's headings (or its first blocks), one line each."""
        headings = [b for b in self.document.blocks if b.type == "heading"]
        shown = headings or self.document.blocks[:5]
        return "\n".join(f"- {b.text}" for b in shown) or "(empty document)"

    def scope_view(self, d: Discussion) -> s.ScopeView:
        """The blocks a discussion is anchored to, their section and surroundings."""
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
