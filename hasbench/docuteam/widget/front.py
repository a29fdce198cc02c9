"""DocuTeamWidget: the widget that holds the parts, runs their tasks and follows the log."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam.demo import DOCUTEAM_DATA
from hasbench.docuteam.failures import describe_failure
from hasbench.docuteam.log import LogEvent
from hasbench.docuteam.session import Condition, Session, SessionConfig
from hasbench.docuteam.steps import SCRIPTED, RoleModels
from hasbench.docuteam.timing import SystemClock
from hasbench.docuteam.widget.cards import DiscussionCard, Notices, reaction_html
from hasbench.docuteam.widget.common import STYLE, WidgetContext, avatar
from hasbench.docuteam.widget.document_pane import DocumentPane
from hasbench.docuteam.widget.side_panel import SidePanel
from hasbench.docuteam.widget.thread import ThreadView

ERRORS_KEPT = 3


class DocuTeamWidget(widgets.VBox):
    """A DocuTeam session as a notebook widget (see :mod:`hasbench.docuteam.widget`).

    Args:
        session: The session to show and drive; its condition picks the view.
        watch_edits: Let the agents read edits on their own after the debounce
            (DocuTeam condition; needs the kernel's event loop, as in Jupyter and Voila).
        title: A heading (default: the task and the condition).

    The parts a script or a test reaches are attributes: ``document_pane`` (its
    ``rows``: block id -> the block's checkbox, textarea and anchor column), ``cards``
    (discussion id -> card), ``notices``, ``errors``, ``side`` (the start form: ``mode``,
    ``agent_boxes``, ``comment``, ``start_button``; the discussion list) and ``thread``
    (the open discussion: ``opened``, ``thread_header``, ``activity``, ``stop_button``,
    ``message_rows``, ``summary_rows``, ``question``, ``reply_buttons``, ``reply_text``,
    ``post_text``, ``target``, ``placement``, and in DocuTeam the steering controls).
    """

    def __init__(
        self, session: Session, *, watch_edits: bool = True, title: str | None = None
    ) -> None:
        self.session = session
        self.baseline = session.baseline
        self._tasks: set[asyncio.Task[Any]] = set()
        self._error_lines: list[str] = []
        names = {a: agent.profile.name for a, agent in session.agents.items()}
        context = WidgetContext(
            session=session,
            names=names,
            avatars={a: avatar(n, i) for i, (a, n) in enumerate(names.items())},
            run=self._run,
            watch=self._watch,
            show_error=self._show_error,
        )
        self.context = context
        heading = title or (
            f"DocuTeam: {session.config.task_name or 'session'} ({session.config.condition})"
        )
        task = widgets.Accordion(children=[widgets.HTML(self._task_html())])
        task.set_title(0, "Task")
        task.selected_index = None
        self.errors = widgets.HTML()
        self.cards: dict[str, DiscussionCard] = {}
        self.thread = ThreadView(context)
        self.notices = Notices(self.thread.show)
        watching = watch_edits and not self.baseline
        self.document_pane = DocumentPane(
            context, self.cards, self.thread.refresh_targets, watching
        )
        self.side = SidePanel(context, self.document_pane, self.thread)
        self.document_pane.sync()
        super().__init__(
            [
                widgets.HTML(STYLE + f"<h3 class='hb-dt'>{html.escape(heading)}</h3>"),
                task,
                self.notices,
                self.errors,
                widgets.HBox([self.document_pane, self.side]),
            ]
        )
        self.add_class("hb-dt")
        self.add_class("hb-dt-baseline" if self.baseline else "hb-dt-docuteam")
        self._unsubscribe = session.subscribe(self._on_event)
        if watching:
            session.watch_edits(True)

    def _task_html(self) -> str:
        text = html.escape(self.session.task or "(no task description)")
        return f"<div class='hb-dt' style='white-space: pre-wrap'>{text}</div>"

    # ------------------------------------------------------------------ tasks

    def _run(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine on the kernel's event loop; its failure shows on the errors line."""
        return self._watch(asyncio.get_running_loop().create_task(coroutine))

    def _watch(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            self._show_error(f"{type(error).__name__}: {error}")

    async def settle(self) -> None:
        """Wait until nothing the widget or the session started is running."""
        while True:
            pending = [t for t in self._tasks if not t.done()]
            if pending:
                await asyncio.wait(pending)
                continue
            await self.session.settle()
            if not any(not t.done() for t in self._tasks):
                return

    def _show_error(self, text: str) -> None:
        self._error_lines = [*self._error_lines, text][-ERRORS_KEPT:]
        items = "".join(f"<div>{html.escape(line)}</div>" for line in self._error_lines)
        self.errors.value = f"<div class='hb-dt hb-dt-error'>{items}</div>"

    # ------------------------------------------------------------------ log events

    def _on_event(self, event: LogEvent) -> None:
        if event.type == "edit":
            self.document_pane.sync()
            self.document_pane.reviewing(event)
        elif event.type == "trigger":
            self._triggered(event)
        elif event.type == "moderator":
            self.thread.note_event(event)
        elif event.type == "session_failed":
            self._show_error(
                f"The session failed: {describe_failure(event.payload)}. The agents have "
                "stopped; this session gives no study data."
            )
        elif event.type == "error":
            payload = event.payload
            self._show_error(
                f"{payload.get('step')} ({payload.get('role')}): {payload.get('error_type')}: "
                f"{payload.get('message')}"
            )
        if event.discussion and event.type not in ("model_call", "memory"):
            self._discussion_changed(event.discussion)

    def _discussion_changed(self, discussion_id: str) -> None:
        d = self.session.discussions.get(discussion_id)
        if d is None:
            return
        new = discussion_id not in self.cards
        if new:
            self.cards[d.id] = DiscussionCard(d, self.thread.show)
        self.cards[d.id].refresh(d, self.context.avatars)
        self.side.list_entry(d)
        if new:
            self.document_pane.refresh_anchors()
        if self.thread.opened == discussion_id:
            self.thread.refresh(d)

    def _triggered(self, event: LogEvent) -> None:
        """Show the agents' reactions beside the edited blocks; announce a new discussion."""
        decision = event.payload
        reactions = reaction_html(decision, self.context.names, self.context.avatars)
        blocks = self.document_pane.show_reactions(decision, reactions)
        if decision["outcome"] == "opened" and decision["discussion"]:
            d = self.session.discussions[decision["discussion"]]
            self.notices.announce(d, self.session.document, reactions, blocks)

    def close(self) -> None:
        """Stop listening to the session and close the widgets."""
        self._unsubscribe()
        self.session.watch_edits(False)
        super().close()


def session_widget(
    task: str | Path = "workshop",
    condition: Condition = "DocuTeam",
    backend: str = SCRIPTED,
    role_backends: dict[str, str] | None = None,
    *,
    log_path: str | Path | None = None,
    participant: str = "",
    debounce: float = 2.0,
) -> DocuTeamWidget:
    """A live DocuTeam session on a task folder, as a widget (the session notebook's call).

    Args:
        task: A task under ``data/docuteam/`` (``workshop``, ``sports_day``) or a folder
            with ``plan.md``, ``agents.yaml`` and ``task.md``.
        condition: ``DocuTeam`` or ``Baseline``.
        backend: The model (or ``scripted:docuteam``) for every role.
        role_backends: Role -> model overrides, e.g. ``{"agents": "openai/gpt-5-mini"}``.
        log_path: Where the session's JSONL log is written (None: kept in memory).
        participant: The participant label in the log.
        debounce: Seconds without typing before the agents read an edit.
    """
    folder = Path(task)
    if not folder.is_dir():
        folder = DOCUTEAM_DATA / str(task)
    if not folder.is_dir():
        known = ", ".join(sorted(p.name for p in DOCUTEAM_DATA.iterdir() if p.is_dir()))
        raise FileNotFoundError(f"no DocuTeam task {task!r} (known: {known})")
    backends = RoleModels(**{**RoleModels.all(backend).model_dump(), **(role_backends or {})})
    config = SessionConfig(
        condition=condition, task_name=folder.name, participant=participant, debounce=debounce
    )
    session = Session.from_folder(
        folder, config=config, backends=backends, clock=SystemClock(), log_path=log_path
    )
    return DocuTeamWidget(session)
