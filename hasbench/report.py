"""What notebooks show: tables a person reads, a glossary of their metrics, run summaries.

Notebook cells call these instead of displaying raw objects, so an executed notebook
reads as a report: tables without the pandas index, numbers rounded, missing values as
"–", yes/no for booleans; a glossary linking each metric to its definition in
``docs/metrics.md``; one sentence for what a run did. Each shows as HTML or Markdown and
has a readable plain-text form too (no ``<object at 0x...>`` in an executed copy).
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hasbench import glossary as definitions

if TYPE_CHECKING:
    from hasbench.runner import RunSummary

DASH = "–"
BOLD = re.compile(r"\*\*(.+?)\*\*")
"""A cell's Markdown bold, as the experiment tables mark best and largest values."""
WORD = re.compile(r"[^\W\d_]")
"""A cell that starts with a letter: a name or label (left-aligned), not a number."""


class Shown:
    """Something a notebook shows: HTML or Markdown, with a plain-text form.

    Attributes:
        text: the plain-text form (terminals, text-only viewers).
        html: the HTML form, if any.
        markdown: the Markdown form, if any.
    """

    def __init__(self, text: str, html: str | None = None, markdown: str | None = None) -> None:
        self.text, self.html, self.markdown = text, html, markdown

    def _repr_html_(self) -> str | None:
        return self.html

    def _repr_markdown_(self) -> str | None:
        return self.markdown

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text)

    def __str__(self) -> str:
        return self.text


def show(frame: pd.DataFrame, digits: int = 1, labels: Mapping[str, str] | None = None) -> Shown:
    """A table for reading: no index, floats rounded to ``digits``, "–" where missing.

    Text is shown as text (HTML characters escaped); a cell's ``**marked**`` part, as the
    experiment tables mark a best or largest value, is shown in bold.

    Args:
        frame: the table.
        digits: decimals of floating-point numbers.
        labels: column -> heading (columns not named keep their heading).
    """
    shown = frame.rename(columns=dict(labels or {})).reset_index(drop=True)
    cells = shown.map(lambda v: cell(v, digits))
    marked = cells.map(lambda text: BOLD.sub(r"<strong>\1</strong>", escape(text)))
    style = marked.style.hide(axis="index").format_index(escape="html", axis=1)
    words = [i for i in range(cells.shape[1]) if any(map(WORD.match, cells.iloc[:, i]))]
    style.set_table_styles(  # names and labels read from the left, numbers from the right
        [{"selector": f".col{i}", "props": "text-align: left"} for i in words]
    )
    return Shown(cells.to_string(index=False), html=style.to_html())


def cell(value: Any, digits: int = 1) -> str:
    """One value as text: rounded float, yes/no, "–" for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        return f"{value:.{digits}f}"
    return str(value)


def figure(path: str | Path) -> Shown:
    """A figure file (PNG) shown in the notebook, embedded so that the HTML export keeps it."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    name = escape(Path(path).name, quote=True)
    tag = f"<img src='data:image/png;base64,{data}' style='max-width: 100%' alt='{name}'>"
    return Shown(f"[figure: {path}]", html=tag)


def glossary(*names: str, document: str = "../docs/metrics.md") -> Shown:
    """A Markdown glossary of the named metrics, each linked to its definition.

    Args:
        names: column names defined in ``docs/metrics.md``.
        document: the metrics document as reached from the notebook (``notebooks/``).
    """
    text = definitions.glossary_markdown(list(names), document)
    return Shown(text, markdown=text)


def note(text: str) -> Shown:
    """A note for the reader, in bold."""
    return Shown(f"Note. {text}", markdown=f"**Note.** {text}")


def describe_run(summary: RunSummary) -> Shown:
    """One sentence on what a run did: episodes run, failed, skipped; model calls.

    What stopped the run early or was quarantined follows, one sentence each.
    """
    failed = f" ({summary.failed} failed, see the notes)" if summary.failed else ""
    calls = (
        f"{summary.model_calls} model calls ({summary.cache_hits} answered from the cache)"
        if summary.model_calls
        else "no model calls"
    )
    text = (
        f"Ran {summary.ran} of {summary.total} episodes{failed}; {summary.skipped} were "
        f"already in the results store `{summary.directory}`; {calls}."
    )
    if summary.quarantined:
        text += (
            f" {len(summary.quarantined)} damaged file(s) were moved to quarantine/ and "
            "their episodes run again."
        )
    for stopped in summary.stopped:
        text += f" {stopped[0].upper()}{stopped[1:]}"
    if summary.budget:
        text += f" Stopped early: {summary.budget}."
    if summary.not_started:
        text += f" {summary.not_started} episode(s) not started: run again to go on."
    return Shown(text.replace("`", ""), markdown=text)
