"""DocuTeamWidget: a DocuTeam session in JupyterLab or Voila (ipywidgets).

The widget is the face of :class:`~hasbench.docuteam.session.Session` (DocuTeam paper
§4.1). In the DocuTeam condition the document pane shows every block as an editable line
with a checkbox to select it; each discussion is a card beside the first block it is
anchored to (participants, mode, status and the one-line bubble summary), and the agents'
short reactions appear next to the block they are reading. The side panel starts a
discussion on the selected blocks (mode, agents, an optional request), lists the
discussions, and shows the open one: its messages with their acts, the mode's summary
with links to the messages, the agents' question with its two quick replies and a text
box, steering (post, add or remove agents, focus, mode, stop) and Apply buttons that put a
message or a summary item into a chosen block. Discussions the agents open announce
themselves in a notice with the agents' reactions. In the Baseline condition the same
widget is a side-panel chat: whole-document threads, no anchors, no proactive agents,
no in-document steering.

Everything that waits for a model runs as a task on the kernel's event loop, so the
notebook stays responsive: a running discussion shows a "thinking" line naming the next
speaker, and its Stop button ends it after the current step. The widget redraws from the
session log (:meth:`Session.subscribe`), so what it shows is what the log records.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam import schemas as s
from hasbench.docuteam.demo import DOCUTEAM_DATA
from hasbench.docuteam.discussion import Discussion, summary_entries
from hasbench.docuteam.document import Block, DocumentError
from hasbench.docuteam.log import LogEvent
from hasbench.docuteam.session import Condition, ConditionError, Session, SessionConfig
from hasbench.docuteam.steps import SCRIPTED, Backends
from hasbench.docuteam.timing import SystemClock

MODE_LABELS: dict[str, str] = {
    "idea": "Idea",
    "discussion": "Discussion",
    "evaluation": "Evaluation",
}
STATUS_LABELS: dict[str, str] = {
    "open": "starting",
    "running": "thinking",
    "waiting_for_user": "waiting for your answer",
    "converged": "concluded",
    "stopped": "stopped",
    "budget_exhausted": "paused: turn budget used (write to continue)",
    "failed": "failed (see the errors line)",
}
AVATAR_COLOURS = ("#3b6fb6", "#c0504d", "#4e9a58", "#8064a2", "#d08a2c", "#2c9fa4")
NOTICES_KEPT = 3
ERRORS_KEPT = 3
BLOCK_LABEL_CHARS = 48

STYLE = """<style>
.hb-dt {font-family: sans-serif; font-size: 13px;}
.hb-dt-doc {border-right: 1px solid #ddd; padding-right: 8px;}
.hb-dt-row {align-items: flex-start;}
.hb-dt-heading textarea {font-weight: bold; font-size: 15px;}
.hb-dt-marker {color: #888; font-family: monospace;}
.hb-dt-anchor {padding-left: 4px;}
.hb-dt-card {border: 1px solid #9db4d8; border-radius: 8px; padding: 3px 6px;
  background: #f4f8fd; margin-bottom: 4px;}
.hb-dt-card.hb-dt-agent-initiated {border-style: dashed; border-color: #7a5cc2;}
.hb-dt-card.hb-dt-asks {border: 2px solid #c62828;}
.hb-dt-avatar {display: inline-block; width: 18px; height: 18px; border-radius: 9px;
  color: white; text-align: center; font-size: 11px; line-height: 18px; margin-right: 2px;}
.hb-dt-mode {font-size: 11px; border-radius: 3px; padding: 0 4px; background: #e3e3e3;}
.hb-dt-tag {font-size: 11px; color: #7a5cc2;}
.hb-dt-ask {color: #c62828; font-weight: bold;}
.hb-dt-muted {color: #777;}
.hb-dt-reaction {font-size: 11px; color: #444; background: #fff8e1; border-radius: 8px;
  padding: 1px 5px; margin: 1px 0; display: inline-block;}
.hb-dt-reviewing {font-size: 11px; color: #777; font-style: italic;}
.hb-dt-notice {background: #efe8fb; border-left: 4px solid #7a5cc2; padding: 3px 6px;}
.hb-dt-error {color: #b00020;}
.hb-dt-msg {padding: 2px 0;}
.hb-dt-msg-question {color: #c62828;}
.hb-dt-msg-post, .hb-dt-msg-answer {color: #1b5e20;}
.hb-dt-act {font-size: 10px; border-radius: 3px; padding: 0 3px; color: white;
  background: #607d8b;}
.hb-dt-act-ISSUE {background: #8e24aa;} .hb-dt-act-CLAIM {background: #1e88e5;}
.hb-dt-act-SUPPORT {background: #43a047;} .hb-dt-act-REBUT {background: #e53935;}
.hb-dt-act-QUESTION {background: #fb8c00;}
.hb-dt-thinking {color: #1e88e5; font-weight: bold;}
.hb-dt-section {font-weight: bold; margin-top: 6px;}
</style>"""


def _avatar(name: str, index: int) -> str:
    colour = AVATAR_COLOURS[index % len(AVATAR_COLOURS)]
    initial = html.escape(name[:1].upper() or "?")
    return (
        f"<span class='hb-dt-avatar' style='background:{colour}' "
        f"title='{html.escape(name)}'>{initial}</span>"
    )


def _marker(block: Block) -> str:
    if block.type == "heading":
        return "#" * max(block.level, 1)
    return {"list_item": "•", "todo": "☑" if block.checked else "☐", "table_row": "|"}.get(
        block.type, "¶"
    )


def _button(description: str, css: str, width: str | None = None) -> widgets.Button:
    """A button with a CSS class (and a width when given)."""
    button = widgets.Button(description=description, layout=widgets.Layout(width=width))
    button.add_class(css)
    return button


def _choices(dropdown: widgets.Dropdown, options: list[tuple[str, str]]) -> None:
    """Give a dropdown new options, keeping its choice when it is still offered."""
    current = dropdown.value
    dropdown.options = options
    values = [value for _, value in options]
    dropdown.value = current if current in values else (values[0] if values else None)


def _rows(text: str) -> int:
    """Lines a block's textarea needs (about 50 characters a line, at most four)."""
    return min(4, 1 + len(text) // 50)


def _short(text: str, n: int = BLOCK_LABEL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass
class _BlockRow:
    """The widgets of one document block."""

    select: widgets.Checkbox
    marker: widgets.HTML
    text: widgets.Textarea
    add: widgets.Button
    anchor: widgets.VBox
    box: widgets.HBox


@dataclass
class _Card:
    """A discussion's card beside its blocks."""

    html: widgets.HTML
    open: widgets.Button
    box: widgets.VBox


class DocuTeamWidget(widgets.VBox):
    """A DocuTeam session as a notebook widget (see the module docstring).

    Args:
        session: The session to show and drive; its condition picks the view.
        watch_edits: Let the agents read edits on their own after the debounce
            (DocuTeam condition; needs the kernel's event loop, as in Jupyter and Voila).
        title: A heading (default: the task and the condition).

    The parts a script or a test reaches are attributes: ``rows`` (block id -> the
    block's checkbox, textarea and anchor column), ``cards`` (discussion id -> card),
    ``notices``, ``errors``, the start form (``mode``, ``agent_boxes``, ``comment``,
    ``start_button``), and the thread view of the open discussion (``opened``,
    ``thread_header``, ``activity``, ``stop_button``, ``message_rows``, ``summary_rows``,
    ``question``, ``reply_buttons``, ``reply_text``, ``post_text``, ``target``,
    ``placement``, and in DocuTeam the steering controls).
    """

    def __init__(
        self, session: Session, *, watch_edits: bool = True, title: str | None = None
    ) -> None:
        self.session = session
        self.baseline = session.baseline
        self.opened: str | None = None
        self._syncing = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reactions: dict[str, str] = {}
        self._next_speaker: dict[str, str] = {}
        self._error_lines: list[str] = []
        self._names = {a: agent.profile.name for a, agent in session.agents.items()}
        self._avatars = {a: _avatar(n, i) for i, (a, n) in enumerate(self._names.items())}

        heading = title or (
            f"DocuTeam: {session.config.task_name or 'session'} ({session.config.condition})"
        )
        task = widgets.Accordion(children=[widgets.HTML(self._task_html())])
        task.set_title(0, "Task")
        task.selected_index = None
        self.notices = widgets.VBox()
        self.errors = widgets.HTML()
        self.rows: dict[str, _BlockRow] = {}
        self.cards: dict[str, _Card] = {}
        self.document_pane = widgets.VBox(layout=widgets.Layout(width="58%"))
        self.document_pane.add_class("hb-dt-doc")
        self._watching = watch_edits and not self.baseline
        side = widgets.VBox(
            [
                widgets.HTML(f"<div class='hb-dt-section'>Agents</div>{self._agents_html()}"),
                self._start_form(),
                widgets.HTML("<div class='hb-dt-section'>Discussions</div>"),
                self._discussion_list(),
                self._thread_view(),
            ],
            layout=widgets.Layout(width="42%", padding="0 0 0 8px"),
        )
        side.add_class("hb-dt-side")
        self._sync_document()
        super().__init__(
            [
                widgets.HTML(STYLE + f"<h3 class='hb-dt'>{html.escape(heading)}</h3>"),
                task,
                self.notices,
                self.errors,
                widgets.HBox([self.document_pane, side]),
            ]
        )
        self.add_class("hb-dt")
        self.add_class("hb-dt-baseline" if self.baseline else "hb-dt-docuteam")
        self._unsubscribe = session.subscribe(self._on_event)
        if self._watching:
            session.watch_edits(True)

    # ------------------------------------------------------------------ static parts

    def _task_html(self) -> str:
        text = html.escape(self.session.task or "(no task description)")
        return f"<div class='hb-dt' style='white-space: pre-wrap'>{text}</div>"

    def _agents_html(self) -> str:
        lines = [
            f"<div>{self._avatars[a]} <b>{html.escape(agent.profile.name)}</b>, "
            f"{html.escape(agent.profile.role)}: "
            f"<span class='hb-dt-muted'>{html.escape(agent.profile.stance)}</span></div>"
            for a, agent in self.session.agents.items()
        ]
        return "<div class='hb-dt'>" + "".join(lines) + "</div>"

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

    # ------------------------------------------------------------------ document pane

    def _new_row(self, block: Block) -> _BlockRow:
        select = widgets.Checkbox(
            value=False, indent=False, layout=widgets.Layout(width="22px", min_width="22px")
        )
        select.add_class("hb-dt-select")
        if self.baseline:
            select.layout.display = "none"
        marker = widgets.HTML(
            f"<span class='hb-dt-marker'>{html.escape(_marker(block))}</span>",
            layout=widgets.Layout(width="28px", min_width="28px"),
        )
        text = widgets.Textarea(
            value=block.text,
            continuous_update=False,
            rows=_rows(block.text),
            layout=widgets.Layout(flex="1 1 auto", width="auto"),
        )
        text.add_class("hb-dt-text")
        add = widgets.Button(
            description="+",
            tooltip="add a block below",
            layout=widgets.Layout(width="32px", min_width="32px"),
        )
        add.add_class("hb-dt-add")
        anchor = widgets.VBox(layout=widgets.Layout(width="40%", min_width="40%"))
        anchor.add_class("hb-dt-anchor")
        if self.baseline:
            anchor.layout.display = "none"
        box = widgets.HBox([select, marker, text, add, anchor])
        box.add_class("hb-dt-row")
        box.add_class(f"hb-dt-block-{block.id}")
        if block.type == "heading":
            box.add_class("hb-dt-heading")
        text.observe(lambda change, b=block.id: self._typed(b, change["new"]), names="value")
        add.on_click(lambda _, b=block.id: self._add_after(b))
        return _BlockRow(select, marker, text, add, anchor, box)

    def _sync_document(self) -> None:
        """Make the rows match the document (new, deleted and changed blocks)."""
        blocks = self.session.document.blocks
        ids = [b.id for b in blocks]
        for block in blocks:
            if block.id not in self.rows:
                self.rows[block.id] = self._new_row(block)
        for gone in [b for b in self.rows if b not in ids]:
            del self.rows[gone]
        self._syncing = True
        try:
            for block in blocks:
                row = self.rows[block.id]
                if row.text.value != block.text:
                    row.text.value = block.text
                    row.text.rows = _rows(block.text)
                row.marker.value = (
                    f"<span class='hb-dt-marker'>{html.escape(_marker(block))}</span>"
                )
        finally:
            self._syncing = False
        children = tuple(self.rows[b].box for b in ids)
        if self.document_pane.children != children:
            self.document_pane.children = children
        self._refresh_targets()

    def _typed(self, block_id: str, text: str) -> None:
        """The user changed a block's text in its textarea (a clear textarea deletes it)."""
        if self._syncing or block_id not in self.session.document.ids():
            return
        if text == self.session.document.block(block_id).text:
            return
        try:
            if text.strip():
                self.session.edit(block_id, text)
            else:
                self.session.delete(block_id)
        except (DocumentError, ConditionError) as error:
            self._show_error(str(error))

    def _add_after(self, block_id: str) -> None:
        block = self.session.document.block(block_id)
        kind = "paragraph" if block.type == "heading" else block.type
        self.session.insert("…", kind, after=block_id)

    def selected_blocks(self) -> list[str]:
        """Ids of the blocks whose checkbox is ticked, in document order."""
        return [b for b in self.session.document.ids() if self.rows[b].select.value]

    def _refresh_anchors(self) -> None:
        """Put each discussion card and the agents' reactions beside their block."""
        if self.baseline:
            return
        beside: dict[str, list[widgets.Widget]] = {}
        for block_id, reaction in self._reactions.items():
            beside.setdefault(block_id, []).append(widgets.HTML(reaction))
        ids = self.session.document.ids()
        for d in self.session.discussions.values():
            present = [b for b in d.scope or [] if b in ids]
            if present and d.id in self.cards:
                beside.setdefault(present[0], []).append(self.cards[d.id].box)
        for block_id, row in self.rows.items():
            children = tuple(beside.get(block_id, []))
            if row.anchor.children != children:
                row.anchor.children = children

    # ------------------------------------------------------------------ cards

    def _card(self, d: Discussion) -> _Card:
        if d.id not in self.cards:
            open_button = widgets.Button(description="open", layout=widgets.Layout(width="60px"))
            open_button.add_class("hb-dt-open")
            open_button.on_click(lambda _, i=d.id: self.open_discussion(i))
            card_html = widgets.HTML()
            box = widgets.VBox([card_html, open_button])
            box.add_class("hb-dt-card")
            box.add_class(f"hb-dt-card-{d.id}")
            if d.initiator == "agents":
                box.add_class("hb-dt-agent-initiated")
            self.cards[d.id] = _Card(card_html, open_button, box)
        card = self.cards[d.id]
        people = "".join(self._avatars.get(a, "") for a in d.participants)
        tag = (
            "<span class='hb-dt-tag'>started by the agents</span>"
            if d.initiator == "agents"
            else ""
        )
        status = self._status_html(d)
        if d.status == "waiting_for_user" and d.pending is not None:
            question = html.escape(d.pending.question)
            line = f"<span class='hb-dt-ask'>The agents ask you: {question}</span>"
            card.box.add_class("hb-dt-asks")
        else:
            line = html.escape(d.bubble or d.focus or "…")
            card.box.remove_class("hb-dt-asks")
        card.html.value = (
            f"<div class='hb-dt'>{people} <span class='hb-dt-mode'>{MODE_LABELS[d.mode]}</span> "
            f"{tag} <span class='hb-dt-muted'>{d.id}</span> {status}<br>{line}</div>"
        )
        return card

    def _status_html(self, d: Discussion) -> str:
        label = STATUS_LABELS[d.status]
        if d.status == "running":
            return f"<span class='hb-dt-thinking'>● {label}…</span>"
        return f"<span class='hb-dt-muted'>{html.escape(label)}</span>"

    # ------------------------------------------------------------------ start form

    def _start_form(self) -> widgets.VBox:
        self.mode = widgets.ToggleButtons(
            options=[(label, mode) for mode, label in MODE_LABELS.items()], value="idea"
        )
        self.mode.add_class("hb-dt-mode-choice")
        self.agent_boxes: dict[str, widgets.Checkbox] = {}
        for agent_id, agent in self.session.agents.items():
            box = widgets.Checkbox(
                value=False,
                description=f"{agent.profile.name} ({agent.profile.role})",
                indent=False,
            )
            box.add_class(f"hb-dt-pick-{agent_id}")
            self.agent_boxes[agent_id] = box
        self.comment = widgets.Text(
            placeholder="what should the agents focus on? (optional)",
            layout=widgets.Layout(width="95%"),
        )
        self.start_button = widgets.Button(description="Start discussion", button_style="primary")
        self.start_button.add_class("hb-dt-start")
        self.start_button.on_click(lambda _: self.start_from_form())
        where = (
            "A new chat about the whole document"
            if self.baseline
            else "Tick blocks in the document, then start a discussion on them"
        )
        return widgets.VBox(
            [
                widgets.HTML(f"<div class='hb-dt-section'>{where}</div>"),
                self.mode,
                widgets.HBox(
                    list(self.agent_boxes.values()), layout=widgets.Layout(flex_flow="row wrap")
                ),
                self.comment,
                self.start_button,
            ]
        )

    def start_from_form(self) -> asyncio.Task[Any] | None:
        """Start a discussion from the form: the ticked agents, mode, request and blocks."""
        agents = [a for a, box in self.agent_boxes.items() if box.value]
        if not 2 <= len(agents) <= 4:
            self._show_error(f"choose 2 to 4 agents for a discussion (chosen: {len(agents)})")
            return None
        scope: tuple[str, str] | None = None
        if not self.baseline:
            chosen = self.selected_blocks()
            if not chosen:
                self._show_error("tick the blocks the discussion is about first")
                return None
            scope = (chosen[0], chosen[-1])
        mode, comment = self.mode.value, self.comment.value.strip()
        for box in [*self.agent_boxes.values(), *(r.select for r in self.rows.values())]:
            box.value = False
        self.comment.value = ""
        return self._run(self._start(agents, mode, scope, comment))

    async def _start(
        self, agents: list[str], mode: s.Mode, scope: tuple[str, str] | None, comment: str
    ) -> None:
        d = await self.session.start_discussion(agents, mode, scope, comment, run=False)
        self.open_discussion(d.id)
        if d.status == "open":
            self._watch(self.session.start(d.id))

    # ------------------------------------------------------------------ discussion list

    def _discussion_list(self) -> widgets.VBox:
        self.discussion_buttons: dict[str, widgets.Button] = {}
        self.discussion_list = widgets.VBox()
        self.discussion_list.add_class("hb-dt-list")
        return self.discussion_list

    def _list_entry(self, d: Discussion) -> None:
        if d.id not in self.discussion_buttons:
            button = widgets.Button(layout=widgets.Layout(width="95%"))
            button.add_class(f"hb-dt-list-{d.id}")
            button.on_click(lambda _, i=d.id: self.open_discussion(i))
            self.discussion_buttons[d.id] = button
            self.discussion_list.children = (*self.discussion_list.children, button)
        who = "agents" if d.initiator == "agents" else "you"
        focus = _short(d.focus or d.comment or "", 60)
        self.discussion_buttons[d.id].description = (
            f"{d.id} · {MODE_LABELS[d.mode]} · {STATUS_LABELS[d.status].split(':')[0]} · "
            f"by {who} · {focus}"
        )

    # ------------------------------------------------------------------ thread view

    def _thread_view(self) -> widgets.VBox:
        self.thread_header = widgets.HTML()
        self.activity = widgets.HTML()
        self.stop_button = widgets.Button(description="Stop", button_style="danger", disabled=True)
        self.stop_button.add_class("hb-dt-stop")
        self.stop_button.on_click(lambda _: self._stop())

        self.question = widgets.HTML()
        self.reply_buttons = [widgets.Button(layout=widgets.Layout(width="auto")) for _ in range(2)]
        for number, button in enumerate(self.reply_buttons, start=1):
            button.add_class(f"hb-dt-reply-{number}")
            button.on_click(lambda _, n=number: self._answer(n))
        self.reply_text = widgets.Text(placeholder="or write your own answer")
        self.reply_send = widgets.Button(description="Reply")
        self.reply_send.add_class("hb-dt-reply-send")
        self.reply_send.on_click(lambda _: self._answer(self.reply_text.value.strip()))
        self.clarification = widgets.VBox(
            [
                self.question,
                widgets.HBox(self.reply_buttons),
                widgets.HBox([self.reply_text, self.reply_send]),
            ]
        )
        self.clarification.add_class("hb-dt-clarification")
        self.clarification.layout.display = "none"

        self.message_rows = widgets.VBox()
        self.message_rows.add_class("hb-dt-messages")
        self.summary_rows = widgets.VBox()
        self.summary_rows.add_class("hb-dt-summary")
        self.target = widgets.Dropdown(description="apply to", layout=widgets.Layout(width="70%"))
        self.placement = widgets.Dropdown(
            options=[("after it", "after"), ("replacing it", "replace")],
            value="after",
            layout=widgets.Layout(width="28%"),
        )
        self.target.add_class("hb-dt-target")
        self.placement.add_class("hb-dt-placement")
        self._refresh_targets()

        self.post_text = widgets.Textarea(
            placeholder="write into the discussion", rows=2, layout=widgets.Layout(width="80%")
        )
        self.post_text.add_class("hb-dt-post-text")
        self.post_button = widgets.Button(description="Send")
        self.post_button.add_class("hb-dt-post")
        self.post_button.on_click(lambda _: self._post())
        parts: list[widgets.Widget] = [
            self.thread_header,
            widgets.HBox([self.activity, self.stop_button]),
            self.clarification,
            widgets.HBox([self.target, self.placement]),
            widgets.HTML("<div class='hb-dt-section'>Messages</div>"),
            self.message_rows,
            widgets.HTML("<div class='hb-dt-section'>Summary</div>"),
            self.summary_rows,
            widgets.HBox([self.post_text, self.post_button]),
        ]
        if not self.baseline:
            parts.append(self._steering())
        self.thread = widgets.VBox(parts)
        self.thread.add_class("hb-dt-thread")
        self.thread.layout.display = "none"
        self._message_widgets: list[str] = []
        self.placeholder = widgets.HTML(
            "<div class='hb-dt hb-dt-muted'>Open a discussion to read it here.</div>"
        )
        return widgets.VBox([self.placeholder, self.thread])

    def _steering(self) -> widgets.VBox:
        """Participants, focus and mode of the open discussion (DocuTeam only)."""
        self.add_agent = widgets.Dropdown(description="add", layout=widgets.Layout(width="45%"))
        self.remove_agent = widgets.Dropdown(
            description="remove", layout=widgets.Layout(width="45%")
        )
        self.focus_text = widgets.Text(placeholder="new focus", layout=widgets.Layout(width="70%"))
        self.mode_switch = widgets.Dropdown(
            options=[(label, mode) for mode, label in MODE_LABELS.items()],
            layout=widgets.Layout(width="40%"),
        )
        steer = self.session
        self.add_button = _button("Add", "hb-dt-add-agent", "60px")
        self.remove_button = _button("Remove", "hb-dt-remove-agent", "70px")
        self.focus_button = _button("Set focus", "hb-dt-set-focus")
        self.mode_button = _button("Switch mode", "hb-dt-set-mode")
        self.add_button.on_click(lambda _: self._steer(steer.add_participant, self.add_agent))
        self.remove_button.on_click(
            lambda _: self._steer(steer.remove_participant, self.remove_agent)
        )
        self.focus_button.on_click(lambda _: self._steer(steer.set_focus, self.focus_text))
        self.mode_button.on_click(lambda _: self._steer(steer.set_mode, self.mode_switch))
        return widgets.VBox(
            [
                widgets.HTML("<div class='hb-dt-section'>Steer</div>"),
                widgets.HBox(
                    [self.add_agent, self.add_button, self.remove_agent, self.remove_button]
                ),
                widgets.HBox([self.focus_text, self.focus_button]),
                widgets.HBox([self.mode_switch, self.mode_button]),
            ]
        )

    def _refresh_targets(self) -> None:
        current = self.target.value
        options = [
            (f"{b.id} · {_short(b.text, BLOCK_LABEL_CHARS)}", b.id)
            for b in self.session.document.blocks
        ]
        self.target.options = options
        if current in self.session.document.ids():
            self.target.value = current
        else:
            text = [b.id for b in self.session.document.blocks if b.type != "heading"]
            self.target.value = text[0] if text else None

    def open_discussion(self, discussion_id: str) -> None:
        """Show a discussion in the thread view."""
        d = self.session.discussions[discussion_id]
        changed = self.opened != discussion_id
        self.opened = discussion_id
        if changed:
            self.message_rows.children = ()
            self._message_widgets = []
            present = [b for b in d.scope or [] if b in self.session.document.ids()]
            if present:
                self.target.value = present[0]
        self.thread.layout.display = None
        self.placeholder.layout.display = "none"
        self._refresh_thread(d)

    def _refresh_thread(self, d: Discussion) -> None:
        people = ", ".join(
            f"{self._avatars.get(a, '')} {html.escape(self._names.get(a, a))}"
            for a in d.participants
        )
        scope = (
            "the whole document"
            if d.scope is None
            else f"blocks {d.scope[0]}–{d.scope[-1]}"
            if len(d.scope) > 1
            else f"block {d.scope[0]}"
        )
        started = "the agents" if d.initiator == "agents" else "you"
        self.thread_header.value = (
            f"<div class='hb-dt'><b>{d.id}</b> "
            f"<span class='hb-dt-mode'>{MODE_LABELS[d.mode]}</span> "
            f"on {scope}, started by {started}<br><b>Focus:</b> {html.escape(d.focus or '…')}"
            f"<br><b>With:</b> {people}</div>"
        )
        self._refresh_activity(d)
        self._refresh_clarification(d)
        self._refresh_messages(d)
        self._refresh_summary(d)
        if not self.baseline:
            others = [a for a in self.session.agents if a not in d.participants]
            _choices(self.add_agent, [(self._names[a], a) for a in others])
            _choices(self.remove_agent, [(self._names[a], a) for a in d.participants])

    def _refresh_activity(self, d: Discussion) -> None:
        status = self._status_html(d)
        if d.status == "running" and d.id in self._next_speaker:
            name = self._names.get(self._next_speaker[d.id], self._next_speaker[d.id])
            status += f" <span class='hb-dt-muted'>{html.escape(name)} is preparing to speak</span>"
        self.activity.value = f"<div class='hb-dt hb-dt-activity'>{status}</div>"
        self.stop_button.disabled = not d.active

    def _refresh_clarification(self, d: Discussion) -> None:
        if d.status == "waiting_for_user" and d.pending is not None:
            self.question.value = (
                f"<div class='hb-dt hb-dt-ask'>The agents ask you: "
                f"{html.escape(d.pending.question)}</div>"
            )
            for button, option in zip(self.reply_buttons, d.pending.options, strict=True):
                button.description = option
                button.tooltip = option
            self.clarification.layout.display = None
        else:
            self.clarification.layout.display = "none"

    def _message_html(self, m: s.Message) -> str:
        if m.kind == "question":
            who = "Moderator asks you"
        elif m.author == "user":
            who = "You answered" if m.kind == "answer" else "You"
        else:
            who = f"{self._avatars.get(m.author, '')} <b>{html.escape(m.author_name)}</b>"
        act = f" <span class='hb-dt-act hb-dt-act-{m.act}'>{m.act}</span>" if m.act else ""
        return (
            f"<div class='hb-dt hb-dt-msg hb-dt-msg-{m.kind}' id='hb-dt-{m.id}'>{who}{act} "
            f"<span class='hb-dt-muted'>{m.id}</span><br>{html.escape(m.text)}</div>"
        )

    def _refresh_messages(self, d: Discussion) -> None:
        new = [m for m in d.messages if m.id not in self._message_widgets]
        rows = []
        for m in new:
            parts: list[widgets.Widget] = [
                widgets.HTML(self._message_html(m), layout=widgets.Layout(width="85%"))
            ]
            if m.kind == "utterance":
                apply = widgets.Button(description="Apply", layout=widgets.Layout(width="64px"))
                apply.add_class("hb-dt-apply")
                apply.add_class(f"hb-dt-apply-{m.id}")
                apply.on_click(lambda _, i=m.id: self.apply(i))
                parts.append(apply)
            rows.append(widgets.HBox(parts))
            self._message_widgets.append(m.id)
        if rows:
            self.message_rows.children = (*self.message_rows.children, *rows)

    def _refresh_summary(self, d: Discussion) -> None:
        entries = summary_entries(d.summary)
        if not entries:
            self.summary_rows.children = (
                widgets.HTML("<div class='hb-dt hb-dt-muted'>No summary yet.</div>"),
            )
            return
        rows: list[widgets.Widget] = []
        section = None
        for entry in entries:
            if entry.section != section:
                section = entry.section
                rows.append(widgets.HTML(f"<div class='hb-dt'><i>{html.escape(section)}</i></div>"))
            link = f"<a href='#hb-dt-{entry.message_id}'>{entry.message_id}</a>"
            parts: list[widgets.Widget] = [
                widgets.HTML(
                    f"<div class='hb-dt'>• {html.escape(entry.text)} ({link})</div>",
                    layout=widgets.Layout(width="85%"),
                )
            ]
            if entry.applicable:
                apply = widgets.Button(description="Apply", layout=widgets.Layout(width="64px"))
                apply.add_class("hb-dt-apply-summary")
                apply.on_click(lambda _, e=entry: self.apply(e.message_id, text=e.text))
                parts.append(apply)
            rows.append(widgets.HBox(parts))
        self.summary_rows.children = tuple(rows)

    # ------------------------------------------------------------------ user actions

    def _current(self) -> Discussion | None:
        if self.opened is None:
            self._show_error("open a discussion first")
            return None
        return self.session.discussions[self.opened]

    def _answer(self, reply: str | int) -> None:
        d = self._current()
        if d is None or reply == "":
            return
        self.reply_text.value = ""
        self._run(self._answer_and_run(d.id, reply))

    async def _answer_and_run(self, discussion_id: str, reply: str | int) -> None:
        await self.session.answer(discussion_id, reply, run=False)
        self._watch(self.session.start(discussion_id))

    def _post(self) -> None:
        d = self._current()
        text = self.post_text.value.strip()
        if d is None or not text:
            return
        self.post_text.value = ""
        self._run(self._post_and_run(d.id, text))

    async def _post_and_run(self, discussion_id: str, text: str) -> None:
        await self.session.post(discussion_id, text, run=False)
        self._watch(self.session.start(discussion_id))

    def _stop(self) -> None:
        d = self._current()
        if d is not None and d.active:
            self._run(self.session.stop(d.id))

    def _steer(self, action: Callable[[str, Any], None], control: widgets.ValueWidget) -> None:
        """Call a steering method of the session with the open discussion and a control's value."""
        d = self._current()
        if d is None or control.value in (None, ""):
            return
        try:
            action(d.id, control.value)
        except (ValueError, ConditionError) as error:
            self._show_error(str(error))
            return
        if isinstance(control, widgets.Text):
            control.value = ""
        self._refresh_thread(d)

    def apply(self, message_id: str, text: str | None = None) -> asyncio.Task[Any] | None:
        """Apply a message of the open discussion to the document.

        The message (or a summary item's ``text``) goes to the block chosen in ``target``,
        after it or replacing it (``placement``).
        """
        d = self._current()
        if d is None or self.target.value is None:
            return None
        return self._run(
            self.session.apply_message(
                d.id, message_id, self.target.value, placement=self.placement.value, text=text
            )
        )

    # ------------------------------------------------------------------ log events

    def _on_event(self, event: LogEvent) -> None:
        if event.type == "edit":
            self._sync_document()
            self._reviewing(event)
        elif event.type == "trigger":
            self._triggered(event)
        elif event.type == "moderator" and event.payload.get("decision") == "speak":
            self._next_speaker[event.discussion or ""] = event.payload["next_speaker_id"]
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
        self._card(d)
        self._list_entry(d)
        if new:
            self._refresh_anchors()
        if self.opened == discussion_id:
            self._refresh_thread(d)

    def _reviewing(self, event: LogEvent) -> None:
        """Show that the agents are reading a user's edit (DocuTeam, watching edits)."""
        if not self._watching or event.payload["kind"] == "delete":
            return
        self._reactions[event.payload["block_id"]] = (
            "<span class='hb-dt hb-dt-reviewing'>the agents are reading this edit…</span>"
        )
        self._refresh_anchors()

    def _triggered(self, event: LogEvent) -> None:
        """Show the agents' reactions beside the edited blocks; announce a new discussion."""
        decision = event.payload
        edited = {op.id: op.block_id for op in self.session.document.history}
        blocks = list(dict.fromkeys(edited[e] for e in decision["edits"] if e in edited))
        reactions = [
            f"<span class='hb-dt-reaction'>{self._avatars.get(a, '')}"
            f"{html.escape(self._names.get(a, a))}: “{html.escape(x['reaction'])}”</span>"
            for a, x in decision["scores"].items()
        ]
        for block_id in blocks:
            if reactions:
                self._reactions[block_id] = (
                    "<div class='hb-dt'>" + "<br>".join(reactions) + "</div>"
                )
            else:
                self._reactions.pop(block_id, None)
        self._refresh_anchors()
        if decision["outcome"] == "opened" and decision["discussion"]:
            self._notice(decision, reactions, blocks)

    def _notice(self, decision: dict[str, Any], reactions: list[str], blocks: list[str]) -> None:
        d = self.session.discussions[decision["discussion"]]
        ids = self.session.document.ids()
        where = next((b for b in d.scope or [] if b in ids), blocks[0] if blocks else None)
        beside = (
            f" beside “{html.escape(_short(self.session.document.block(where).text))}”"
            if where in ids
            else ""
        )
        text = widgets.HTML(
            f"<div class='hb-dt hb-dt-notice'><b>New:</b> the agents started a discussion "
            f"({d.id}, {MODE_LABELS[d.mode]} mode){beside}. {' '.join(reactions)}</div>",
            layout=widgets.Layout(width="88%"),
        )
        open_button = widgets.Button(description="open", layout=widgets.Layout(width="60px"))
        open_button.add_class(f"hb-dt-notice-open-{d.id}")
        open_button.on_click(lambda _, i=d.id: self.open_discussion(i))
        notice = widgets.HBox([text, open_button])
        notice.add_class("hb-dt-notice-row")
        self.notices.children = (notice, *self.notices.children)[:NOTICES_KEPT]

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
    backends = Backends(**{**Backends.all(backend).model_dump(), **(role_backends or {})})
    config = SessionConfig(
        condition=condition, task_name=folder.name, participant=participant, debounce=debounce
    )
    session = Session.from_folder(
        folder, config=config, backends=backends, clock=SystemClock(), log_path=log_path
    )
    return DocuTeamWidget(session)
