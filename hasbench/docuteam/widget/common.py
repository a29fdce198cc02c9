"""What the widget's parts share: labels, the style sheet, small HTML helpers, a context."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from hasbench.docuteam.discussion import Discussion
from hasbench.docuteam.document import Block
from hasbench.docuteam.session import Session

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


@dataclass(frozen=True)
class WidgetContext:
    """What every part of the widget is given.

    Attributes:
        session: The session the widget shows and drives.
        names: Agent id -> name.
        avatars: Agent id -> its avatar (HTML).
        run: Runs a coroutine on the kernel's event loop; its failure shows as an error.
        watch: Watches a task the session started, the same way.
        show_error: Puts a line on the errors line.
    """

    session: Session
    names: dict[str, str]
    avatars: dict[str, str]
    run: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]]
    watch: Callable[[asyncio.Task[Any]], asyncio.Task[Any]]
    show_error: Callable[[str], None]

    @property
    def baseline(self) -> bool:
        """True in the Baseline condition."""
        return self.session.baseline


def avatar(name: str, index: int) -> str:
    """A coloured circle with the name's initial."""
    colour = AVATAR_COLOURS[index % len(AVATAR_COLOURS)]
    initial = html.escape(name[:1].upper() or "?")
    return (
        f"<span class='hb-dt-avatar' style='background:{colour}' "
        f"title='{html.escape(name)}'>{initial}</span>"
    )


def marker(block: Block) -> str:
    """The sign before a block: ``#`` per heading level, a bullet, a checkbox, a bar."""
    if block.type == "heading":
        return "#" * max(block.level, 1)
    return {"list_item": "•", "todo": "☑" if block.checked else "☐", "table_row": "|"}.get(
        block.type, "¶"
    )


def button(description: str, css: str, width: str | None = None) -> widgets.Button:
    """A button with a CSS class (and a width when given)."""
    made = widgets.Button(description=description, layout=widgets.Layout(width=width))
    made.add_class(css)
    return made


def set_choices(dropdown: widgets.Dropdown, options: list[tuple[str, str]]) -> None:
    """Give a dropdown new options, keeping its choice when it is still offered."""
    current = dropdown.value
    dropdown.options = options
    values = [value for _, value in options]
    dropdown.value = current if current in values else (values[0] if values else None)


def text_rows(text: str) -> int:
    """Lines a block's textarea needs (about 50 characters a line, at most four)."""
    return min(4, 1 + len(text) // 50)


def short(text: str, n: int = BLOCK_LABEL_CHARS) -> str:
    """A text on one line, cut to ``n`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def status_html(d: Discussion) -> str:
    """A discussion's status as the cards and the thread show it."""
    label = STATUS_LABELS[d.status]
    if d.status == "running":
        return f"<span class='hb-dt-thinking'>● {label}…</span>"
    return f"<span class='hb-dt-muted'>{html.escape(label)}</span>"
