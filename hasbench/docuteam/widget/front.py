"""DocuTeamWidget: the DocuTeam UI in JupyterLab and Voila, as a custom widget.

The page (``static/docuteam.js`` and ``docuteam.css``) is loaded by anywidget; the
widget's ``state`` trait carries :meth:`SessionController.state` to it, and the page's
actions come back as custom messages that :meth:`SessionController.act` applies (each is
acknowledged with the reason it was refused, if it was). The served study uses the same
page and controller over the server's live channel.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from hasbench.docuteam.demo import DOCUTEAM_DATA
from hasbench.docuteam.session import Condition, Session, SessionConfig
from hasbench.docuteam.steps import SCRIPTED, RoleModels
from hasbench.docuteam.timing import SystemClock
from hasbench.docuteam.widget.controller import SessionController

STATIC = Path(__file__).with_name("static")
"""The UI's script and style sheet (shared with the served study)."""


class DocuTeamWidget(anywidget.AnyWidget):
    """A DocuTeam session as a notebook widget (see :mod:`hasbench.docuteam.widget`).

    Args:
        session: The session to show and drive; its condition picks the view.
        watch_edits: Let the agents read edits on their own after the debounce
            (DocuTeam condition; needs the kernel's event loop, as in Jupyter and Voila).
        title: A heading (default: the task and the condition).

    ``controller`` is the :class:`SessionController` behind the page; :meth:`act` applies
    an action as if the page had sent it, and ``state`` is what the page shows.
    """

    _esm = STATIC / "docuteam.js"
    _css = STATIC / "docuteam.css"
    state = traitlets.Dict().tag(sync=True)

    def __init__(
        self, session: Session, *, watch_edits: bool = True, title: str | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self.controller = SessionController(session, watch_edits=watch_edits, title=title)
        self._pushing = False
        self._unsubscribe = self.controller.subscribe(self._changed)
        self.on_msg(self._received)
        self.refresh()

    @property
    def baseline(self) -> bool:
        """True in the Baseline condition."""
        return self.session.baseline

    def refresh(self) -> None:
        """Send the page the state as it is now."""
        self._pushing = False
        self.state = self.controller.state()

    def _changed(self) -> None:
        """Send the new state once the current burst of changes is over."""
        if self._pushing:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.refresh()
            return
        self._pushing = True
        loop.call_soon(self.refresh)

    def act(self, action: dict[str, Any]) -> str | None:
        """Apply an action of the page; returns why it was refused, or None."""
        try:
            self.controller.act(action)
        except ValueError as error:
            return str(error)
        return None

    def _received(self, _: Any, content: dict[str, Any], buffers: list[bytes]) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        error = self.act(action) if isinstance(action, dict) else "bad message: expected an action"
        self.send({"type": "ack", "id": content.get("id"), "error": error})

    async def settle(self) -> None:
        """Wait until nothing the page or the session started is running; then refresh."""
        await self.controller.settle()
        self.refresh()

    def close(self) -> None:
        """Stop following the session and close the widget."""
        self._unsubscribe()
        self.controller.close()
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
    folder = task_folder(task)
    backends = RoleModels(**{**RoleModels.all(backend).model_dump(), **(role_backends or {})})
    config = SessionConfig(
        condition=condition, task_name=folder.name, participant=participant, debounce=debounce
    )
    session = Session.from_folder(
        folder, config=config, backends=backends, clock=SystemClock(), log_path=log_path
    )
    return DocuTeamWidget(session)


def task_folder(task: str | Path) -> Path:
    """A DocuTeam task folder: a path, or the name of one under ``data/docuteam/``.

    Raises:
        FileNotFoundError: no such task, naming the known ones.
    """
    folder = Path(task)
    if not folder.is_dir():
        folder = DOCUTEAM_DATA / str(task)
    if not folder.is_dir():
        known = ", ".join(sorted(p.name for p in DOCUTEAM_DATA.iterdir() if p.is_dir()))
        raise FileNotFoundError(f"no DocuTeam task {task!r} (known: {known})")
    return folder
