"""The side panel: the agents, a form to start a discussion, the list, the open thread.

In DocuTeam the form starts a discussion on the blocks ticked in the document; in
Baseline it starts a chat about the whole document.
"""

from __future__ import annotations

import asyncio
import html
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Discussion
from hasbench.docuteam.widget.common import MODE_LABELS, STATUS_LABELS, WidgetContext, short
from hasbench.docuteam.widget.document_pane import DocumentPane
from hasbench.docuteam.widget.thread import ThreadView


class SidePanel(widgets.VBox):
    """The panel beside the document (see the module docstring).

    Args:
        context: What the widget's parts share.
        document_pane: The document (its ticked blocks are a new discussion's scope).
        thread: The view of the open discussion, shown at the bottom.

    Attributes:
        mode, agent_boxes, comment, start_button: The start form.
        discussion_buttons: Discussion id -> its entry in the list (opens it).
    """

    def __init__(
        self, context: WidgetContext, document_pane: DocumentPane, thread: ThreadView
    ) -> None:
        self.context = context
        self._document_pane = document_pane
        self._thread = thread
        self.discussion_buttons: dict[str, widgets.Button] = {}
        self.discussion_list = widgets.VBox()
        self.discussion_list.add_class("hb-dt-list")
        super().__init__(
            [
                widgets.HTML(f"<div class='hb-dt-section'>Agents</div>{self._agents_html()}"),
                self._start_form(),
                widgets.HTML("<div class='hb-dt-section'>Discussions</div>"),
                self.discussion_list,
                thread,
            ],
            layout=widgets.Layout(width="42%", padding="0 0 0 8px"),
        )
        self.add_class("hb-dt-side")

    def _agents_html(self) -> str:
        lines = [
            f"<div>{self.context.avatars[a]} <b>{html.escape(agent.profile.name)}</b>, "
            f"{html.escape(agent.profile.role)}: "
            f"<span class='hb-dt-muted'>{html.escape(agent.profile.stance)}</span></div>"
            for a, agent in self.context.session.agents.items()
        ]
        return "<div class='hb-dt'>" + "".join(lines) + "</div>"

    # ------------------------------------------------------------------ start form

    def _start_form(self) -> widgets.VBox:
        self.mode = widgets.ToggleButtons(
            options=[(label, mode) for mode, label in MODE_LABELS.items()], value="idea"
        )
        self.mode.add_class("hb-dt-mode-choice")
        self.agent_boxes: dict[str, widgets.Checkbox] = {}
        for agent_id, agent in self.context.session.agents.items():
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
            if self.context.baseline
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
            self.context.show_error(
                f"choose 2 to 4 agents for a discussion (chosen: {len(agents)})"
            )
            return None
        scope: tuple[str, str] | None = None
        rows = self._document_pane.rows
        if not self.context.baseline:
            chosen = self._document_pane.selected_blocks()
            if not chosen:
                self.context.show_error("tick the blocks the discussion is about first")
                return None
            scope = (chosen[0], chosen[-1])
        mode, comment = self.mode.value, self.comment.value.strip()
        for box in [*self.agent_boxes.values(), *(r.select for r in rows.values())]:
            box.value = False
        self.comment.value = ""
        return self.context.run(self._start(agents, mode, scope, comment))

    async def _start(
        self, agents: list[str], mode: s.Mode, scope: tuple[str, str] | None, comment: str
    ) -> None:
        session = self.context.session
        d = await session.start_discussion(agents, mode, scope, comment, run=False)
        self._thread.show(d.id)
        if d.status == "open":
            self.context.watch(session.start(d.id))

    # ------------------------------------------------------------------ discussion list

    def list_entry(self, d: Discussion) -> None:
        """Add a discussion to the list, or bring its entry up to date."""
        if d.id not in self.discussion_buttons:
            entry = widgets.Button(layout=widgets.Layout(width="95%"))
            entry.add_class(f"hb-dt-list-{d.id}")
            entry.on_click(lambda _, i=d.id: self._thread.show(i))
            self.discussion_buttons[d.id] = entry
            self.discussion_list.children = (*self.discussion_list.children, entry)
        who = "agents" if d.initiator == "agents" else "you"
        focus = short(d.focus or d.comment or "", 60)
        self.discussion_buttons[d.id].description = (
            f"{d.id} · {MODE_LABELS[d.mode]} · {STATUS_LABELS[d.status].split(':')[0]} · "
            f"by {who} · {focus}"
        )
