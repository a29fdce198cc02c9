"""The document pane: one editable row per block, with what sits beside it.

In DocuTeam every block is a line with a checkbox (to pick the blocks a discussion is
about), its marker, its text and a button to add a block below; beside it are the cards
of the discussions anchored there and the agents' reactions to an edit of it. Typing
into a line edits the block (clearing it deletes the block). In Baseline the checkboxes
and the column beside the blocks are hidden.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam.document import Block, DocumentError
from hasbench.docuteam.log import LogEvent
from hasbench.docuteam.session import ConditionError
from hasbench.docuteam.widget.cards import DiscussionCard
from hasbench.docuteam.widget.common import WidgetContext, marker, text_rows

READING = "<span class='hb-dt hb-dt-reviewing'>the agents are reading this edit…</span>"


@dataclass
class BlockRow:
    """The widgets of one document block."""

    select: widgets.Checkbox
    marker: widgets.HTML
    text: widgets.Textarea
    add: widgets.Button
    anchor: widgets.VBox
    box: widgets.HBox


def _marker_html(block: Block) -> str:
    return f"<span class='hb-dt-marker'>{html.escape(marker(block))}</span>"


class DocumentPane(widgets.VBox):
    """The document's blocks as editable rows (see the module docstring).

    Args:
        context: What the widget's parts share.
        cards: Discussion id -> card (the widget keeps them; the pane places them).
        on_sync: Called after the rows were made to match the document.
        watching: The agents read edits on their own (shows "reading" beside an edit).

    Attributes:
        rows: Block id -> the block's row.
    """

    def __init__(
        self,
        context: WidgetContext,
        cards: dict[str, DiscussionCard],
        on_sync: Callable[[], None],
        watching: bool,
    ) -> None:
        super().__init__(layout=widgets.Layout(width="58%"))
        self.add_class("hb-dt-doc")
        self.context = context
        self.rows: dict[str, BlockRow] = {}
        self.watching = watching
        self._cards = cards
        self._on_sync = on_sync
        self._reactions: dict[str, str] = {}
        self._syncing = False

    # ------------------------------------------------------------------ rows

    def _new_row(self, block: Block) -> BlockRow:
        baseline = self.context.baseline
        select = widgets.Checkbox(
            value=False, indent=False, layout=widgets.Layout(width="22px", min_width="22px")
        )
        select.add_class("hb-dt-select")
        if baseline:
            select.layout.display = "none"
        sign = widgets.HTML(
            _marker_html(block), layout=widgets.Layout(width="28px", min_width="28px")
        )
        text = widgets.Textarea(
            value=block.text,
            continuous_update=False,
            rows=text_rows(block.text),
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
        if baseline:
            anchor.layout.display = "none"
        box = widgets.HBox([select, sign, text, add, anchor])
        box.add_class("hb-dt-row")
        box.add_class(f"hb-dt-block-{block.id}")
        if block.type == "heading":
            box.add_class("hb-dt-heading")
        text.observe(lambda change, b=block.id: self._typed(b, change["new"]), names="value")
        add.on_click(lambda _, b=block.id: self._add_after(b))
        return BlockRow(select, sign, text, add, anchor, box)

    def sync(self) -> None:
        """Make the rows match the document (new, deleted and changed blocks)."""
        blocks = self.context.session.document.blocks
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
                    row.text.rows = text_rows(block.text)
                row.marker.value = _marker_html(block)
        finally:
            self._syncing = False
        children = tuple(self.rows[b].box for b in ids)
        if self.children != children:
            self.children = children
        self._on_sync()

    def _typed(self, block_id: str, text: str) -> None:
        """The user changed a block's text in its textarea (a clear textarea deletes it)."""
        session = self.context.session
        if self._syncing or block_id not in session.document.ids():
            return
        if text == session.document.block(block_id).text:
            return
        try:
            if text.strip():
                session.edit(block_id, text)
            else:
                session.delete(block_id)
        except (DocumentError, ConditionError) as error:
            self.context.show_error(str(error))

    def _add_after(self, block_id: str) -> None:
        session = self.context.session
        block = session.document.block(block_id)
        kind = "paragraph" if block.type == "heading" else block.type
        session.insert("…", kind, after=block_id)

    def selected_blocks(self) -> list[str]:
        """Ids of the blocks whose checkbox is ticked, in document order."""
        return [b for b in self.context.session.document.ids() if self.rows[b].select.value]

    # ------------------------------------------------------------------ beside the blocks

    def refresh_anchors(self) -> None:
        """Put each discussion card and the agents' reactions beside their block."""
        if self.context.baseline:
            return
        beside: dict[str, list[widgets.Widget]] = {}
        for block_id, reaction in self._reactions.items():
            beside.setdefault(block_id, []).append(widgets.HTML(reaction))
        session = self.context.session
        ids = session.document.ids()
        for d in session.discussions.values():
            present = [b for b in d.scope or [] if b in ids]
            if present and d.id in self._cards:
                beside.setdefault(present[0], []).append(self._cards[d.id].box)
        for block_id, row in self.rows.items():
            children = tuple(beside.get(block_id, []))
            if row.anchor.children != children:
                row.anchor.children = children

    def reviewing(self, event: LogEvent) -> None:
        """Show that the agents are reading a user's edit (DocuTeam, watching edits)."""
        if not self.watching or event.payload["kind"] == "delete":
            return
        self._reactions[event.payload["block_id"]] = READING
        self.refresh_anchors()

    def show_reactions(self, decision: dict[str, Any], reactions: list[str]) -> list[str]:
        """Put the agents' reactions to a batch of edits beside the edited blocks.

        Returns:
            The edited blocks, in order.
        """
        edited = {op.id: op.block_id for op in self.context.session.document.history}
        blocks = list(dict.fromkeys(edited[e] for e in decision["edits"] if e in edited))
        for block_id in blocks:
            if reactions:
                self._reactions[block_id] = (
                    "<div class='hb-dt'>" + "<br>".join(reactions) + "</div>"
                )
            else:
                self._reactions.pop(block_id, None)
        self.refresh_anchors()
        return blocks
