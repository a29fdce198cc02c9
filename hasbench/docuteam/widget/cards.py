"""Discussion cards beside the document, and the notices of agent-opened discussions."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam.discussion import Discussion
from hasbench.docuteam.document import Document
from hasbench.docuteam.widget.common import MODE_LABELS, short, status_html

NOTICES_KEPT = 3


class DiscussionCard:
    """A discussion's card beside the first block it is anchored to.

    It shows the participants' avatars, the mode, who started it, the status and the
    one-line bubble summary, or the agents' question with a red border while they ask.

    Args:
        d: The discussion.
        on_open: Called with the discussion id when the card's button is clicked.
    """

    def __init__(self, d: Discussion, on_open: Callable[[str], None]) -> None:
        self.open = widgets.Button(description="open", layout=widgets.Layout(width="60px"))
        self.open.add_class("hb-dt-open")
        self.open.on_click(lambda _, i=d.id: on_open(i))
        self.html = widgets.HTML()
        self.box = widgets.VBox([self.html, self.open])
        self.box.add_class("hb-dt-card")
        self.box.add_class(f"hb-dt-card-{d.id}")
        if d.initiator == "agents":
            self.box.add_class("hb-dt-agent-initiated")

    def refresh(self, d: Discussion, avatars: dict[str, str]) -> None:
        """Show the discussion as it is now."""
        people = "".join(avatars.get(a, "") for a in d.participants)
        tag = (
            "<span class='hb-dt-tag'>started by the agents</span>"
            if d.initiator == "agents"
            else ""
        )
        if d.status == "waiting_for_user" and d.pending is not None:
            question = html.escape(d.pending.question)
            line = f"<span class='hb-dt-ask'>The agents ask you: {question}</span>"
            self.box.add_class("hb-dt-asks")
        else:
            line = html.escape(d.bubble or d.focus or "…")
            self.box.remove_class("hb-dt-asks")
        self.html.value = (
            f"<div class='hb-dt'>{people} <span class='hb-dt-mode'>{MODE_LABELS[d.mode]}</span> "
            f"{tag} <span class='hb-dt-muted'>{d.id}</span> {status_html(d)}<br>{line}</div>"
        )


class Notices(widgets.VBox):
    """The latest announcements of discussions the agents opened, newest first.

    Args:
        on_open: Called with the discussion id when a notice's button is clicked.
    """

    def __init__(self, on_open: Callable[[str], None]) -> None:
        super().__init__()
        self._on_open = on_open

    def announce(
        self, d: Discussion, document: Document, reactions: list[str], blocks: list[str]
    ) -> None:
        """Announce a discussion the agents opened, where it is and their reactions."""
        ids = document.ids()
        where = next((b for b in d.scope or [] if b in ids), blocks[0] if blocks else None)
        beside = (
            f" beside “{html.escape(short(document.block(where).text))}”" if where in ids else ""
        )
        text = widgets.HTML(
            f"<div class='hb-dt hb-dt-notice'><b>New:</b> the agents started a discussion "
            f"({d.id}, {MODE_LABELS[d.mode]} mode){beside}. {' '.join(reactions)}</div>",
            layout=widgets.Layout(width="88%"),
        )
        open_button = widgets.Button(description="open", layout=widgets.Layout(width="60px"))
        open_button.add_class(f"hb-dt-notice-open-{d.id}")
        open_button.on_click(lambda _, i=d.id: self._on_open(i))
        notice = widgets.HBox([text, open_button])
        notice.add_class("hb-dt-notice-row")
        self.children = (notice, *self.children)[:NOTICES_KEPT]


def reaction_html(
    decision: dict[str, Any], names: dict[str, str], avatars: dict[str, str]
) -> list[str]:
    """The agents' short reactions in a trigger decision, one badge each."""
    return [
        f"<span class='hb-dt-reaction'>{avatars.get(a, '')}"
        f"{html.escape(names.get(a, a))}: “{html.escape(x['reaction'])}”</span>"
        for a, x in decision["scores"].items()
    ]
