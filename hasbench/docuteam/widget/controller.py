"""The Python half of the DocuTeam UI: a session as the page's state, the page's actions.

The UI is one page (``static/docuteam.js``) that draws a JSON *state* and sends JSON
*actions*. :class:`SessionController` makes that state from a
:class:`~hasbench.docuteam.session.Session` (:meth:`SessionController.state`) and applies
the actions (:meth:`SessionController.act`); it tells its listeners when the state may
have changed (:meth:`SessionController.subscribe`). The same controller serves the
notebook widget (:class:`~hasbench.docuteam.widget.front.DocuTeamWidget`, through the
widget's comm) and a served study (:mod:`hasbench.serve.study`, through the server's
live channel), so both show one UI.

A controller stands for one person looking at the session: which discussion they have
open, which messages they have read (threads with new messages are marked unread), the
notices of discussions the agents opened (beside the block they concern) and the
agents' reactions beside the blocks they read.

Actions (``{"do": ..., ...}``; a refused one raises :class:`ValueError` with a message
for the person):

=================  ==============================================================
edit               ``block``, ``text``: rewrite a block (empty text deletes it)
check              ``block``, ``checked``: tick or untick a to-do
insert             ``after``: add an empty paragraph below a block
start              ``agents``, ``mode``, ``blocks`` (DocuTeam), ``comment``
open / close       ``discussion``: show a thread (and mark it read) / back to the list
post / answer      ``discussion``, ``text`` (answer: or ``option`` 1 or 2)
add_participant    ``discussion``, ``agent`` (also ``remove_participant``)
set_focus          ``discussion``, ``focus``; ``set_mode``: ``discussion``, ``mode``
stop               ``discussion``
apply              ``discussion``, ``message``, ``target``, ``placement``, ``text``
add_agent          ``name``, ``role``, ``stance``, ``expertise`` (list or commas)
edit_agent         ``agent`` and the same fields
dismiss            ``discussion``: take a notice away
=================  ==============================================================
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Discussion, summary_entries
from hasbench.docuteam.document import DocumentError
from hasbench.docuteam.failures import describe_failure
from hasbench.docuteam.log import LogEvent
from hasbench.docuteam.session import ConditionError, Session

MODES: list[dict[str, str]] = [
    {"value": "idea", "label": "Idea", "help": "the agents propose different ideas"},
    {
        "value": "discussion",
        "label": "Discussion",
        "help": "the agents weigh views and say where they agree and disagree",
    },
    {
        "value": "evaluation",
        "label": "Evaluation",
        "help": "each agent judges the part and suggests one improvement",
    },
]
MODE_LABELS = {m["value"]: m["label"] for m in MODES}
STATUS_LABELS: dict[str, str] = {
    "open": "starting",
    "running": "thinking",
    "waiting_for_user": "waiting for your answer",
    "converged": "concluded",
    "stopped": "stopped",
    "budget_exhausted": "paused (write to continue)",
    "failed": "failed",
}
AVATAR_COLOURS = ("#3b6fb6", "#c0504d", "#4e9a58", "#8064a2", "#d08a2c", "#2c9fa4")
ERRORS_KEPT = 3


class SessionController:
    """One person's view of a session, and their actions on it (see the module docstring).

    Args:
        session: The session shown and driven.
        watch_edits: Let the agents read edits on their own after the debounce
            (DocuTeam; needs a running event loop).
        title: A heading (default: the task name and the condition).
    """

    def __init__(
        self, session: Session, *, watch_edits: bool = True, title: str | None = None
    ) -> None:
        self.session = session
        self.watching = watch_edits and not session.baseline
        self.title = title or (
            f"DocuTeam: {session.config.task_name or 'session'} ({session.config.condition})"
        )
        self.opened: str | None = None
        self.errors: list[str] = []
        self._seen: dict[str, int] = {}
        self._reading: set[str] = set()
        self._reactions: dict[str, list[dict[str, str]]] = {}
        self._notices: list[str] = []
        self._next_speaker: dict[str, str] = {}
        self._listeners: list[Callable[[], None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe = session.subscribe(self._on_event)
        if self.watching:
            session.watch_edits(True)

    # ------------------------------------------------------------------ listening

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` whenever the state may have changed; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def close(self) -> None:
        """Stop following the session (and stop the agents reading edits on their own)."""
        self._unsubscribe()
        if self.watching:
            self.session.watch_edits(False)

    def _on_event(self, event: LogEvent) -> None:
        payload = event.payload
        if event.type == "edit" and self.watching and payload["kind"] != "delete":
            self._reading.add(payload["block_id"])
            self._reactions.pop(payload["block_id"], None)
        elif event.type == "trigger":
            self._triggered(payload)
        elif event.type == "moderator" and payload.get("decision") == "speak":
            self._next_speaker[event.discussion or ""] = payload["next_speaker_id"]
        elif event.type == "error":
            self._error(
                f"{payload.get('step')} ({payload.get('role')}): {payload.get('error_type')}: "
                f"{payload.get('message')}"
            )
        if event.type not in ("model_call", "memory"):
            self._changed()

    def _triggered(self, decision: dict[str, Any]) -> None:
        """The agents read a batch of edits: their reactions beside the blocks, a notice."""
        edited = {op.id: op.block_id for op in self.session.document.history}
        blocks = list(dict.fromkeys(edited[e] for e in decision["edits"] if e in edited))
        reactions = [
            {"agent": agent, "text": scored["reaction"]}
            for agent, scored in decision["scores"].items()
            if scored.get("reaction")
        ]
        for block_id in blocks:
            self._reading.discard(block_id)
            if reactions:
                self._reactions[block_id] = reactions
        if decision["outcome"] == "opened" and decision["discussion"]:
            self._notices.append(decision["discussion"])

    def _error(self, text: str) -> None:
        self.errors = [*self.errors, text][-ERRORS_KEPT:]
        self._changed()

    # ------------------------------------------------------------------ tasks

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine on the running loop; a failure shows on the errors line."""
        return self._watch(asyncio.get_running_loop().create_task(coroutine))

    def _watch(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            self._error(f"{type(error).__name__}: {error}")
        else:
            self._changed()

    async def settle(self) -> None:
        """Wait until nothing the controller or the session started is running."""
        while True:
            pending = [t for t in self._tasks if not t.done()]
            if pending:
                await asyncio.wait(pending)
                continue
            await self.session.settle()
            if not any(not t.done() for t in self._tasks):
                return

    # ------------------------------------------------------------------ the state

    def state(self) -> dict[str, Any]:
        """Everything the page shows now (JSON)."""
        session = self.session
        if self.opened is not None:
            self._seen[self.opened] = len(session.discussions[self.opened].messages)
        agents = list(session.agents.values())
        ids = session.document.ids()
        discussions = [self._discussion(d, ids) for d in session.discussions.values()]
        anchors = {d["id"]: d["anchor"] for d in discussions}
        beside: dict[str, dict[str, Any]] = {}
        for block_id in self._reading:
            beside.setdefault(block_id, {})["reading"] = True
        for block_id, reactions in self._reactions.items():
            beside.setdefault(block_id, {})["reactions"] = reactions
        for discussion_id in self._notices:
            anchor = anchors.get(discussion_id)
            if anchor is not None:
                beside.setdefault(anchor, {}).setdefault("notices", []).append(discussion_id)
        failure = session.failure
        return {
            "title": self.title,
            "condition": session.config.condition,
            "baseline": session.baseline,
            "task": session.task,
            "agents": [
                {
                    **a.profile.model_dump(),
                    "colour": AVATAR_COLOURS[i % len(AVATAR_COLOURS)],
                }
                for i, a in enumerate(agents)
            ],
            "blocks": [b.model_dump() for b in session.document.blocks],
            "beside": {b: v for b, v in beside.items() if b in ids},
            "discussions": discussions,
            "thread": self._thread(),
            "modes": MODES,
            "errors": list(self.errors),
            "failed": (
                None
                if failure is None
                else f"The session failed: {describe_failure(failure)}. The agents have stopped; "
                "this session gives no study data."
            ),
        }

    def _discussion(self, d: Discussion, ids: list[str]) -> dict[str, Any]:
        present = [b for b in d.scope or [] if b in ids]
        waiting = d.status == "waiting_for_user" and d.pending is not None
        speaker = self._next_speaker.get(d.id)
        seen = self._seen.get(d.id, 0)
        unread = sum(m.author != "user" for m in d.messages[seen:])
        return {
            "id": d.id,
            "mode": d.mode,
            "mode_label": MODE_LABELS[d.mode],
            "scope": d.scope,
            "anchor": present[0] if present else None,
            "participants": list(d.participants),
            "initiator": d.initiator,
            "status": d.status,
            "status_label": STATUS_LABELS[d.status],
            "active": d.active,
            "focus": d.focus,
            "comment": d.comment,
            "bubble": d.bubble,
            "question": d.pending.question if waiting else None,
            "options": list(d.pending.options) if waiting else [],
            "next_speaker": speaker if d.status == "running" else None,
            "unread": unread if self.opened != d.id else 0,
        }

    def _thread(self) -> dict[str, Any] | None:
        if self.opened is None:
            return None
        d = self.session.discussions[self.opened]
        ids = self.session.document.ids()
        present = [b for b in d.scope or [] if b in ids]
        texts = [b.id for b in self.session.document.blocks if b.type != "heading"]
        return {
            "id": d.id,
            "messages": [m.model_dump() for m in d.messages],
            "summary": [
                {"section": e.section, "text": e.text, "message_id": e.message_id}
                for e in summary_entries(d.summary)
            ],
            "target": present[0] if present else (texts[0] if texts else None),
        }

    # ------------------------------------------------------------------ actions

    def act(self, action: dict[str, Any]) -> None:
        """Apply one action of the page (see the module docstring).

        Raises:
            ValueError: the action is refused; the message says why, for the person.
        """
        what = action.get("do")
        handler = getattr(self, f"_do_{what}", None) if isinstance(what, str) else None
        if handler is None:
            raise ValueError(f"unknown action {what!r}")
        try:
            handler(action)
        except (ConditionError, DocumentError, KeyError, TypeError) as error:
            message = error.args[0] if error.args else str(error)
            raise ValueError(str(message)) from None
        self._changed()

    def _discussion_of(self, action: dict[str, Any]) -> Discussion:
        d = self.session.discussions.get(str(action.get("discussion")))
        if d is None:
            raise ValueError("this discussion does not exist")
        return d

    def _do_edit(self, action: dict[str, Any]) -> None:
        block_id, text = str(action["block"]), str(action.get("text", ""))
        document = self.session.document
        if block_id not in document.ids():
            raise ValueError("this block was removed")
        if not text.strip():
            self.session.delete(block_id)
        elif text != document.block(block_id).text:
            self.session.edit(block_id, text)

    def _do_check(self, action: dict[str, Any]) -> None:
        block = self.session.document.block(str(action["block"]))
        self.session.edit(block.id, block.text, checked=bool(action.get("checked")))

    def _do_insert(self, action: dict[str, Any]) -> None:
        block = self.session.document.block(str(action["after"]))
        kind = "paragraph" if block.type in ("heading", "table_row") else block.type
        self.session.insert("…", kind, after=block.id)

    def _do_start(self, action: dict[str, Any]) -> None:
        agents = [str(a) for a in action.get("agents") or []]
        if not 2 <= len(agents) <= 4:
            raise ValueError(f"choose 2 to 4 agents for a discussion (chosen: {len(agents)})")
        mode = str(action.get("mode") or "idea")
        if mode not in MODE_LABELS:
            raise ValueError(f"unknown mode {mode!r}")
        scope: tuple[str, str] | None = None
        if not self.session.baseline:
            ids = self.session.document.ids()
            chosen = [b for b in ids if b in set(action.get("blocks") or [])]
            if not chosen:
                raise ValueError("tick the blocks the discussion is about first")
            scope = (chosen[0], chosen[-1])
        unknown = [a for a in agents if a not in self.session.agents]
        if unknown or len(set(agents)) != len(agents):
            raise ValueError("choose each agent once, from the team")
        comment = str(action.get("comment") or "").strip()
        self.run(self._start(agents, mode, scope, comment))

    async def _start(
        self, agents: list[str], mode: s.Mode, scope: tuple[str, str] | None, comment: str
    ) -> None:
        session = self.session
        d = await session.start_discussion(agents, mode, scope, comment, run=False)
        self.opened = d.id
        if d.status == "open":
            self._watch(session.start(d.id))

    def _do_open(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        self.opened = d.id
        self._notices = [n for n in self._notices if n != d.id]

    def _do_close(self, action: dict[str, Any]) -> None:
        self.opened = None

    def _do_dismiss(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        self._notices = [n for n in self._notices if n != d.id]

    def _do_post(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        text = str(action.get("text") or "").strip()
        if not text:
            raise ValueError("write something to send")
        self.run(self._then_run(self.session.post(d.id, text, run=False), d.id))

    def _do_answer(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        if d.pending is None or d.status != "waiting_for_user":
            raise ValueError("the agents are not waiting for an answer any more")
        option = action.get("option")
        reply: str | int = int(option) if option else str(action.get("text") or "").strip()
        if reply == "":
            raise ValueError("choose an answer or write one")
        self.run(self._then_run(self.session.answer(d.id, reply, run=False), d.id))

    async def _then_run(self, step: Coroutine[Any, Any, Any], discussion_id: str) -> None:
        await step
        self._watch(self.session.start(discussion_id))

    def _do_add_participant(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        self.session.add_participant(d.id, str(action.get("agent")))
        if d.status == "open":
            self._watch(self.session.start(d.id))

    def _do_remove_participant(self, action: dict[str, Any]) -> None:
        self.session.remove_participant(self._discussion_of(action).id, str(action.get("agent")))

    def _do_set_focus(self, action: dict[str, Any]) -> None:
        self.session.set_focus(self._discussion_of(action).id, str(action.get("focus") or ""))

    def _do_set_mode(self, action: dict[str, Any]) -> None:
        self.session.set_mode(self._discussion_of(action).id, action.get("mode"))

    def _do_stop(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        if d.active:
            self.run(self.session.stop(d.id))

    def _do_apply(self, action: dict[str, Any]) -> None:
        d = self._discussion_of(action)
        message = d.message(str(action.get("message")))
        target = str(action.get("target") or "")
        if target not in self.session.document.ids():
            raise ValueError("choose the block to apply it to")
        placement = action.get("placement") or "after"
        if placement not in ("after", "replace"):
            raise ValueError(f"unknown placement {placement!r}")
        text = action.get("text")
        snippet = None if text is None else str(text)
        self.run(self.session.apply_message(d.id, message.id, target, placement, snippet))

    def _do_add_agent(self, action: dict[str, Any]) -> None:
        self.session.add_agent(*_profile_fields(action))

    def _do_edit_agent(self, action: dict[str, Any]) -> None:
        self.session.edit_agent(str(action.get("agent")), *_profile_fields(action))


def _profile_fields(action: dict[str, Any]) -> tuple[str, str, str, list[str]]:
    expertise = action.get("expertise") or []
    if isinstance(expertise, str):
        expertise = expertise.split(",")
    return (
        str(action.get("name") or ""),
        str(action.get("role") or ""),
        str(action.get("stance") or ""),
        [str(e) for e in expertise],
    )
