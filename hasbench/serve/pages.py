"""The pages a served application opens: one frame, each page's content in ``static/``.

``static/<name>.html`` holds what a page shows (the inside of its ``<body>``); the frame
around it, the same for every page, is here: the document's head (title, viewport, the
stylesheets), the body's class, and the scripts (``live.js``, the page's channel, then
``<name>.js``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STATIC = Path(__file__).with_name("static")
"""The pages' content, scripts and styles (served under ``/static/``)."""
FRAME = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{styles}
</head>
<body class="{kind}">
{content}<script src="/static/live.js"></script>
<script src="/static/{name}.js"></script>
</body>
</html>
"""


@dataclass(frozen=True)
class Page:
    """What a page's frame says about it.

    Attributes:
        title: the window's title until the page's script names it.
        kind: the body's class, which the stylesheets lay out by.
        styles: the stylesheets of ``static/`` it uses.
    """

    title: str
    kind: str
    styles: tuple[str, ...] = ("serve.css",)


_STUDY_STYLES = ("serve.css", "study.css")
PAGES = {
    "episode_person": Page("Your part in the episode", "hb-person"),
    "episode_watch": Page("Watching the episode", "hb-watch"),
    "study_participant": Page("Study", "hb-study", _STUDY_STYLES),
    "study_rater": Page("Rating plans", "hb-study", _STUDY_STYLES),
    "study_watch": Page("Study progress", "hb-study", _STUDY_STYLES),
}
"""Every page a seat can open (:attr:`hasbench.serve.tokens.Seat.page`), by name."""


def render(name: str) -> str:
    """The whole HTML of the page ``name``: its content in the frame."""
    page = PAGES[name]
    styles = "\n".join(f'<link rel="stylesheet" href="/static/{style}">' for style in page.styles)
    content = (STATIC / f"{name}.html").read_text(encoding="utf-8")
    return FRAME.format(title=page.title, styles=styles, kind=page.kind, content=content,
                        name=name)  # fmt: skip
