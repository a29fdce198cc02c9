"""The thread view: the open discussion, read and steered from the side panel.

It shows the discussion's header (mode, scope, who started it, focus, participants), a
status line naming the next speaker while it runs, with Stop; the agents' question with
its two quick replies and a text box; the messages with their acts and the mode summary
linked to them, each with an Apply button that puts it into the block chosen below
(after it or replacing it); a box to write into the discussion; and in DocuTeam the
steering controls (add or remove agents, focus, mode).
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Discussion, summary_entries
from hasbench.docuteam.log import LogEvent
from hasbench.docuteam.session import ConditionError
from hasbench.docuteam.widget.common import (
    BLOCK_LABEL_CHARS,
    MODE_LABELS,
    WidgetContext,
    button,
    set_choices,
    short,
    status_html,
)


class ThreadView(widgets.VBox):
    """The open discussion (see the module docstring).

    Args:
        context: What the widget's parts share.

    Attributes:
        opened: The id of the discussion shown (None before one is opened).
    """

    def __init__(self, context: WidgetContext) -> None:
        self.context = context
        self.opened: str | None = None
        self._next_speaker: dict[str, str] = {}
        self._message_widgets: list[str] = []
        self.thread_header = widgets.HTML()
        self.activity = widgets.HTML()
        self.stop_button = widgets.Button(description="Stop", button_style="danger", disabled=True)
        self.stop_button.add_class("hb-dt-stop")
        self.stop_button.on_click(lambda _: self._stop())
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
        self.refresh_targets()
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
            self._clarification(),
            widgets.HBox([self.target, self.placement]),
            widgets.HTML("<div class='hb-dt-section'>Messages</div>"),
            self.message_rows,
            widgets.HTML("<div class='hb-dt-section'>Summary</div>"),
            self.summary_rows,
            widgets.HBox([self.post_text, self.post_button]),
        ]
        if not context.baseline:
            parts.append(self._steering())
        self.body = widgets.VBox(parts)
        self.body.add_class("hb-dt-thread")
        self.body.layout.display = "none"
        self.placeholder = widgets.HTML(
            "<div class='hb-dt hb-dt-muted'>Open a discussion to read it here.</div>"
        )
        super().__init__([self.placeholder, self.body])

    def _clarification(self) -> widgets.VBox:
        """The agents' question, its two quick replies and a free answer."""
        self.question = widgets.HTML()
        self.reply_buttons = [widgets.Button(layout=widgets.Layout(width="auto")) for _ in range(2)]
        for number, reply in enumerate(self.reply_buttons, start=1):
            reply.add_class(f"hb-dt-reply-{number}")
            reply.on_click(lambda _, n=number: self._answer(n))
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
        return self.clarification

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
        steer = self.context.session
        self.add_button = button("Add", "hb-dt-add-agent", "60px")
        self.remove_button = button("Remove", "hb-dt-remove-agent", "70px")
        self.focus_button = button("Set focus", "hb-dt-set-focus")
        self.mode_button = button("Switch mode", "hb-dt-set-mode")
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

    # ------------------------------------------------------------------ showing

    def refresh_targets(self) -> None:
        """Offer the document's blocks as targets of Apply, keeping the choice if it stays."""
        document = self.context.session.document
        current = self.target.value
        self.target.options = [
            (f"{b.id} · {short(b.text, BLOCK_LABEL_CHARS)}", b.id) for b in document.blocks
        ]
        if current in document.ids():
            self.target.value = current
        else:
            text = [b.id for b in document.blocks if b.type != "heading"]
            self.target.value = text[0] if text else None

    def show(self, discussion_id: str) -> None:
        """Show a discussion."""
        session = self.context.session
        d = session.discussions[discussion_id]
        changed = self.opened != discussion_id
        self.opened = discussion_id
        if changed:
            self.message_rows.children = ()
            self._message_widgets = []
            present = [b for b in d.scope or [] if b in session.document.ids()]
            if present:
                self.target.value = present[0]
        self.body.layout.display = None
        self.placeholder.layout.display = "none"
        self.refresh(d)

    def note_event(self, event: LogEvent) -> None:
        """Remember who the moderator chose to speak next (for the status line)."""
        if event.type == "moderator" and event.payload.get("decision") == "speak":
            self._next_speaker[event.discussion or ""] = event.payload["next_speaker_id"]

    def refresh(self, d: Discussion) -> None:
        """Show the open discussion as it is now."""
        names, avatars = self.context.names, self.context.avatars
        people = ", ".join(
            f"{avatars.get(a, '')} {html.escape(names.get(a, a))}" for a in d.participants
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
        if not self.context.baseline:
            others = [a for a in self.context.session.agents if a not in d.participants]
            set_choices(self.add_agent, [(names[a], a) for a in others])
            set_choices(self.remove_agent, [(names[a], a) for a in d.participants])

    def _refresh_activity(self, d: Discussion) -> None:
        status = status_html(d)
        if d.status == "running" and d.id in self._next_speaker:
            name = self.context.names.get(self._next_speaker[d.id], self._next_speaker[d.id])
            status += f" <span class='hb-dt-muted'>{html.escape(name)} is preparing to speak</span>"
        self.activity.value = f"<div class='hb-dt hb-dt-activity'>{status}</div>"
        self.stop_button.disabled = not d.active

    def _refresh_clarification(self, d: Discussion) -> None:
        if d.status == "waiting_for_user" and d.pending is not None:
            self.question.value = (
                f"<div class='hb-dt hb-dt-ask'>The agents ask you: "
                f"{html.escape(d.pending.question)}</div>"
            )
            for reply, option in zip(self.reply_buttons, d.pending.options, strict=True):
                reply.description = option
                reply.tooltip = option
            self.clarification.layout.display = None
        else:
            self.clarification.layout.display = "none"

    def _message_html(self, m: s.Message) -> str:
        if m.kind == "question":
            who = "Moderator asks you"
        elif m.author == "user":
            who = "You answered" if m.kind == "answer" else "You"
        else:
            who = f"{self.context.avatars.get(m.author, '')} <b>{html.escape(m.author_name)}</b>"
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
            self.context.show_error("open a discussion first")
            return None
        return self.context.session.discussions[self.opened]

    def _answer(self, reply: str | int) -> None:
        d = self._current()
        if d is None or reply == "":
            return
        self.reply_text.value = ""
        self.context.run(self._answer_and_run(d.id, reply))

    async def _answer_and_run(self, discussion_id: str, reply: str | int) -> None:
        await self.context.session.answer(discussion_id, reply, run=False)
        self.context.watch(self.context.session.start(discussion_id))

    def _post(self) -> None:
        d = self._current()
        text = self.post_text.value.strip()
        if d is None or not text:
            return
        self.post_text.value = ""
        self.context.run(self._post_and_run(d.id, text))

    async def _post_and_run(self, discussion_id: str, text: str) -> None:
        await self.context.session.post(discussion_id, text, run=False)
        self.context.watch(self.context.session.start(discussion_id))

    def _stop(self) -> None:
        d = self._current()
        if d is not None and d.active:
            self.context.run(self.context.session.stop(d.id))

    def _steer(self, action: Callable[[str, Any], None], control: widgets.ValueWidget) -> None:
        """Call a steering method of the session with the open discussion and a control's value."""
        d = self._current()
        if d is None or control.value in (None, ""):
            return
        try:
            action(d.id, control.value)
        except (ValueError, ConditionError) as error:
            self.context.show_error(str(error))
            return
        if isinstance(control, widgets.Text):
            control.value = ""
        self.refresh(d)

    def apply(self, message_id: str, text: str | None = None) -> asyncio.Task[Any] | None:
        """Apply a message of the open discussion to the document.

        The message (or a summary item's ``text``) goes to the block chosen in ``target``,
        after it or replacing it (``placement``).
        """
        d = self._current()
        if d is None or self.target.value is None:
            return None
        return self.context.run(
            self.context.session.apply_message(
                d.id, message_id, self.target.value, placement=self.placement.value, text=text
            )
        )
