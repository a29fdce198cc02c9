"""What notebooks and ``hasbench results`` show: readable tables and what their numbers are.

Also a glossary of their metrics and run summaries. Notebook cells call these instead of
displaying raw objects, so an executed notebook reads as a report: tables without the
pandas index, numbers rounded, missing values as "–", yes/no for booleans; a note for
every column with undefined cells saying why; a glossary linking each metric to its
definition in ``docs/metrics.md``; one sentence for what a run did. Each shows as HTML or
Markdown and has a readable plain-text form too (no ``<object at 0x...>`` in an executed
copy).
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
from hasbench.registry import DomainError, get_domain
from hasbench.runner.progress import duration

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

    The run's time stands beside the plan's estimate when a plan preceded it. What
    stopped the run early or was quarantined follows, one sentence each.
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
    if summary.seconds is not None:
        text += f" They took {duration(summary.seconds)}"
        if summary.estimate is not None:
            text += f"; the plan estimated {duration(summary.estimate)}"
        text += "."
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


def undefined_notes(
    table: pd.DataFrame, headers: dict[str, str], reasons: dict[str, str]
) -> list[str]:
    """One note per column of a numeric table that has undefined cells, saying why.

    Args:
        table: the numeric table.
        headers: column -> its heading as shown.
        reasons: column -> why a cell of it can be undefined.
    """
    notes = []
    for column, reason in reasons.items():
        if column not in table or not pd.api.types.is_numeric_dtype(table[column]):
            continue
        missing = int(table[column].isna().sum())
        if missing:
            name = headers.get(column, column)
            rows = f"{missing} of {len(table)} rows"
            notes.append(f"{name} is undefined ({DASH}) in {rows}: {reason}.")
    return notes


def undelivered(results: pd.DataFrame, otherwise: str) -> str:
    """Why a Delivery Rate can be undefined: domains without a deliverable, else ``otherwise``."""
    none = []
    for domain in sorted(results["domain"].dropna().unique()):
        try:
            if get_domain(domain).deliverable is None:
                none.append(domain)
        except DomainError:
            continue
    if not none:
        return otherwise
    return (
        f"{', '.join(none)} {'has' if len(none) == 1 else 'have'} no task-relevant deliverable, "
        f"so the Delivery Rate is not defined there (docs/metrics.md); elsewhere, {otherwise}"
    )


PROCESS_EVENTS = {"cqs": "clarification", "fur": "feedback", "crj": "control"}
"""The event-conditioned process metrics and the events they are judged on."""


def summary_notes(table: pd.DataFrame, frame: pd.DataFrame, judged: bool | None) -> list[str]:
    """Why cells of a results summary (:func:`hasbench.runner.summary`) are undefined.

    Args:
        table: the summary.
        frame: the results it summarizes.
        judged: whether the experiment judged its process (None: not known).
    """
    reasons = {
        "pass@1": "every episode of the row ended in error",
        "task_score": "every episode of the row ended in error",
        "delivery": undelivered(frame, "every episode of the row ended in error"),
        "hir": "every episode of the row ended in error",
    }
    for metric, event in PROCESS_EVENTS.items():
        if judged is False:
            reasons[metric] = (
                "process judging was off for this experiment (judge_process: false); "
                f"{metric}_cov still gives the share of episodes with a {event} event"
            )
        else:
            reasons[metric] = f"no episode of the row had a judged {event} event ({metric}_cov 0)"
    return undefined_notes(table, {}, reasons)


def results_report(directory: str | Path, experiment: str | None = None) -> tuple[str, int]:
    """What ``hasbench results`` prints for one experiment of a store, and its exit status.

    The experiment (by key or name; None: the one run last) with its grid and benchmark,
    the summary table of exactly its episodes, why undefined cells are undefined, the
    episodes that ended in error, the damaged files skipped, and the store's other
    experiments. The status is 1 when damaged files were skipped, else 0.
    """
    from hasbench.runner import error_rows, load_store, summary
    from hasbench.runner.store import find_experiment, stored_experiments

    chosen = find_experiment(directory, experiment)
    frame, damaged = load_store(directory, chosen)
    lines = []
    if chosen is not None:
        definition = chosen.definition
        shape = " × ".join(f"{n} {what}" for what, n in definition["shape"].items())
        missing = len(chosen.episodes) - len(frame) - len(damaged)
        lines.append(
            f"experiment {chosen.name} (key {chosen.key}): {len(frame)} of "
            f"{len(chosen.episodes)} episodes ({shape}); benchmark "
            f"{definition['benchmark']['name']}"
            + (f"; {missing} not run yet" if missing > 0 else "")
        )
    table = summary(frame)
    lines.append(table.to_string(index=False, float_format="%.3f"))
    judged = None if chosen is None else chosen.definition["experiment"]["judge_process"]
    lines += [f"Note: {note}" for note in summary_notes(table, frame, judged)]
    errors = error_rows(frame)
    if len(errors):
        lines.append(
            f"\n{len(errors)} episode(s) ended in error (left out of every number; "
            "`hasbench run` retries them):"
        )
        lines.append(errors.to_string(index=False))
    if damaged:
        lines.append(
            f"\nskipped {len(damaged)} damaged file(s) (the next `hasbench run` quarantines "
            "them and runs their episodes again):"
        )
        lines += [f"  {item}" for item in damaged]
    others = [e for e in stored_experiments(directory) if chosen is None or e.key != chosen.key]
    if others:
        lines.append(f"\nother experiments in {directory} (hasbench results DIR --experiment KEY):")
        lines += [f"  {e.label()}" for e in others]
    return "\n".join(lines), 1 if damaged else 0
