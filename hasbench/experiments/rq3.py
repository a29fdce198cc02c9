"""RQ3 — which channel helps which problem pattern (HAS paper §5.3.1, Table 5, appendix grid).

The grid runs every selected task under A1 (the baseline that defines the failures to
recover) and under A3 with each channel setting: clarification-only, feedback-only,
control-only, full, and the leave-one-out settings no-clar, no-feed, no-cont. From the
tidy results table it builds:

- ``table5``: per model × pattern × {clar-only, feed-only, cont-only, full}. Patterns A, B,
  D, E and F report the Recovery Rate: of the runs (task × seed) that failed under A1, the
  share solved under the setting. Pattern C reports the Safety Rate: the share of its runs
  under the setting that ended with no protected action executed without approval. Every
  cell has its numerator, denominator and a 95% bootstrap CI over those runs;
  ``best_single`` marks the strongest single-channel setting of each pattern (ties all
  marked; bold in Markdown and LaTeX). Patterns without runs appear with denominator 0.
- ``ts_grid``: per model × pattern × setting (A1 and the seven A3 channel settings), the
  mean Task Score (%) over tasks with a 95% bootstrap CI and the task count.

Crashed episodes are left out (a run counts only where both its A1 and its A3 episode
finished) and counted in the notes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hasbench.agency import Setting
from hasbench.experiments.common import (
    DASH,
    FIGURE_KEY,
    UNDEFINED_MARK,
    bars,
    fmt,
    fmt_ci,
    mean_ci,
    model_label,
    per_task,
    save_figure,
    usable,
)
from hasbench.experiments.study import Analysis, Outputs, Study, Table
from hasbench.scenario import PATTERN_NAMES

PATTERNS = PATTERN_NAMES
"""Table 5's rows: the six collaboration patterns, by letter."""
SINGLE = ("clar-only", "feed-only", "cont-only")
TABLE5_SETTINGS = (*SINGLE, "full")
GRID_SETTINGS = ("full", "no-clar", "no-feed", "no-cont", *SINGLE)
"""The A3 channel settings of the grid (the appendix Task-Score grid shows them all)."""
SAFETY_PATTERN = "C"
CHANNEL_NAMES = {
    "clar-only": "clar-only (clarification only)",
    "feed-only": "feed-only (feedback only)",
    "cont-only": "cont-only (control only)",
    "full": "full (all three channels)",
}
"""How the figure's legend names the channel settings."""


def _runs(frame: pd.DataFrame, agency: str, channels: str, column: str) -> dict[tuple, Any]:
    part = frame[(frame["agency"] == agency) & (frame["channels"] == channels)]
    keys = zip(part["domain"], part["task_id"], part["seed"], strict=True)
    return dict(zip(keys, part[column], strict=True))


def table5(results: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Recovery Rate (A, B, D, E, F) or Safety Rate (C) per model × pattern × setting (%)."""
    frame = usable(results)
    rows = []
    for model in sorted(results["agent_model"].unique()):
        mine = frame[frame["agent_model"] == model]
        for pattern in PATTERNS:
            part = mine[mine["pattern"] == pattern]
            a1 = _runs(part, "A1", "full", "success")
            failed = [key for key, ok in a1.items() if ok is not None and not ok]
            cells = []
            for setting in TABLE5_SETTINGS:
                if pattern == SAFETY_PATTERN:
                    safe = _runs(part, "A3", setting, "safe")
                    values = [float(v) for v in safe.values() if v is not None]
                    metric = "safety"
                else:
                    solved = _runs(part, "A3", setting, "success")
                    values = [float(bool(solved[k])) for k in failed if k in solved]
                    metric = "recovery"
                ci = mean_ci([v * 100 for v in values], seed=seed)
                cells.append(
                    {
                        "model": model_label(model),
                        "pattern": pattern,
                        "metric": metric,
                        "setting": setting,
                        "numerator": int(sum(values)),
                        "denominator": len(values),
                        "estimate": ci["estimate"],
                        "low": ci["low"],
                        "high": ci["high"],
                    }
                )
            singles = [c["estimate"] for c in cells if c["setting"] in SINGLE]
            best = max((v for v in singles if not math.isnan(v)), default=math.nan)
            for cell in cells:
                cell["best_single"] = bool(
                    cell["setting"] in SINGLE and not math.isnan(best)
                    and np.isclose(cell["estimate"], best)
                )  # fmt: skip
            rows += cells
    return pd.DataFrame(rows, columns=[
        "model", "pattern", "metric", "setting", "numerator", "denominator", "estimate", "low",
        "high", "best_single",
    ])  # fmt: skip


def ts_grid(results: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Task Score (%) per model × pattern × setting: mean over tasks with a bootstrap CI."""
    frame = usable(results)
    frame = frame.assign(task_score=frame["task_score"] * 100)
    rows = []
    for model in sorted(results["agent_model"].unique()):
        for pattern in PATTERNS:
            part = frame[(frame["agent_model"] == model) & (frame["pattern"] == pattern)]
            for agency, channels in [("A1", "full"), *(("A3", c) for c in GRID_SETTINGS)]:
                cell = part[(part["agency"] == agency) & (part["channels"] == channels)]
                ci = mean_ci(per_task(cell, "task_score"), seed=seed)
                rows.append(
                    {
                        "model": model_label(model),
                        "pattern": pattern,
                        "setting": "A1" if agency == "A1" else channels,
                        "tasks": ci["n"],
                        "estimate": ci["estimate"],
                        "low": ci["low"],
                        "high": ci["high"],
                    }
                )
    return pd.DataFrame(
        rows, columns=["model", "pattern", "setting", "tasks", "estimate", "low", "high"]
    )


def _pattern_label(pattern: str, metric: str | None = None) -> str:
    suffix = {"recovery": " (Rec.)", "safety": " (Safety)"}.get(metric or "", "")
    return f"{pattern} {PATTERNS[pattern]}{suffix}"


def display_table5(table: pd.DataFrame) -> pd.DataFrame:
    """Table 5 for reading: ``rate [CI] (numerator/denominator)``, best single in bold."""
    rows = []
    for (model, pattern), part in table.groupby(["model", "pattern"], sort=False):
        row = {"Model": model, "Pattern (metric)": _pattern_label(pattern, part.iloc[0]["metric"])}
        for r in part.itertuples():
            value = fmt(r.estimate)
            if r.best_single:
                value = f"**{value}**"
            ci = "" if math.isnan(r.estimate) else f" [{fmt(r.low)}, {fmt(r.high)}]"
            row[r.setting] = f"{value}{ci} ({r.numerator}/{r.denominator})"
        rows.append(row)
    return pd.DataFrame(rows, columns=["Model", "Pattern (metric)", *TABLE5_SETTINGS])


def display_grid(table: pd.DataFrame) -> pd.DataFrame:
    """The Task-Score grid for reading: ``mean [CI] (n)`` per pattern × setting."""
    settings = ["A1", *GRID_SETTINGS]
    rows = []
    for (model, pattern), part in table.groupby(["model", "pattern"], sort=False):
        row = {"Model": model, "Pattern": _pattern_label(pattern)}
        for r in part.itertuples():
            row[r.setting] = f"{fmt_ci(r.estimate, r.low, r.high)} (n={r.tasks})"
        rows.append(row)
    return pd.DataFrame(rows, columns=["Model", "Pattern", *settings])


def figures(table: pd.DataFrame, grid: pd.DataFrame, output_dir: Path) -> list[Path]:
    """Table 5 as grouped bars with CIs, and the Task-Score grid as a heat map, per model."""
    from matplotlib.figure import Figure

    models = list(dict.fromkeys(table["model"]))
    fig = Figure(figsize=(11, 3.8 * len(models)))
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    colors = dict(zip(TABLE5_SETTINGS, ("#264653", "#2a9d8f", "#e9c46a", "#e76f51"), strict=True))
    width = 0.8 / len(TABLE5_SETTINGS)
    for ax, model in zip(axes, models, strict=True):
        part = table[table["model"] == model]
        x = np.arange(len(PATTERNS))
        for i, setting in enumerate(TABLE5_SETTINGS):
            cells = part[part["setting"] == setting].set_index("pattern").reindex(list(PATTERNS))
            bars(ax, x + (i - 1.5) * width, cells["estimate"], width, colors[setting],
                 CHANNEL_NAMES[setting], cells["low"], cells["high"])  # fmt: skip
        labels = [f"{p}\n({'Safety' if p == SAFETY_PATTERN else 'Rec.'})" for p in PATTERNS]
        ax.set_xticks(x, labels)
        ax.set_xlabel("problem pattern (metric)")
        ax.set_ylabel("percent")
        ax.set_title(
            f"{model}: recovery rate of A1 failures (Safety Rate for C), 95% bootstrap CI",
            fontsize=9,
        )
        ax.set_ylim(0, 105)
        ax.legend(title="channels under A3", fontsize=8, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # fmt: skip
    fig.text(0.5, 0.0, FIGURE_KEY, ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    files = save_figure(fig, output_dir, "table5")

    settings = ["A1", *GRID_SETTINGS]
    fig = Figure(figsize=(10, 3.6 * len(models)))
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    for ax, model in zip(axes, models, strict=True):
        part = grid[grid["model"] == model]
        matrix = part.pivot(index="pattern", columns="setting", values="estimate")
        matrix = matrix.reindex(index=list(PATTERNS), columns=settings).to_numpy(dtype=float)
        image = ax.imshow(np.ma.masked_invalid(matrix), vmin=0, vmax=100, cmap="viridis")
        ax.set_facecolor("#e9ecef")  # undefined cells: light grey with a large "–"
        for (r, c), value in np.ndenumerate(matrix):
            if math.isnan(value):
                ax.text(c, r, DASH, ha="center", va="center", **UNDEFINED_MARK)
                continue
            ax.text(c, r, f"{value:.0f}", ha="center", va="center",
                    color="white" if value < 60 else "black", fontsize=8)  # fmt: skip
        ax.set_xticks(range(len(settings)), settings, rotation=30, ha="right")
        ax.set_yticks(range(len(PATTERNS)), list(PATTERNS))
        ax.set_xlabel("setting (A1, or A3 with these channels)")
        ax.set_ylabel("problem pattern")
        ax.set_title(f"{model}: mean Task Score (%)", fontsize=9)
        fig.colorbar(image, ax=ax, label="Task Score (%)")
    fig.tight_layout()
    return files + save_figure(fig, output_dir, "ts_grid")


def table5_notes(table: pd.DataFrame) -> list[str]:
    """What Table 5's undefined cells mean."""
    missing = table[table["estimate"].isna()]
    notes = []
    recovery = missing[missing["metric"] == "recovery"]
    if len(recovery):
        notes.append(
            f"A recovery rate is undefined ({DASH}, 0/0) in {len(recovery)} cell(s): no A1 run "
            "of the pattern failed, so there was no failure to recover."
        )
    if len(missing) > len(recovery):
        notes.append(
            f"The Safety Rate is undefined ({DASH}, 0/0) in {len(missing) - len(recovery)} "
            "cell(s): no pattern-C episode finished under the setting."
        )
    return notes


def grid_notes(table: pd.DataFrame) -> list[str]:
    """What the Task-Score grid's undefined cells mean."""
    missing = int(table["estimate"].isna().sum())
    if not missing:
        return []
    return [f"{missing} cell(s) are undefined ({DASH}, n=0): no task of the pattern finished "
            "under the setting."]  # fmt: skip


def analyse(analysis: Analysis) -> Outputs:
    """Table 5, the Task-Score grid, and their figures."""
    seed = analysis.parameters.seed
    t5, grid = table5(analysis.results, seed=seed), ts_grid(analysis.results, seed=seed)
    made = {
        "table5": Table(t5, display_table5(t5), 2, tuple(table5_notes(t5))),
        "ts_grid": Table(grid, display_grid(grid), 2, tuple(grid_notes(grid))),
    }
    written = figures(t5, grid, analysis.output_dir)
    best = t5[t5["best_single"]]
    headline = {
        f"best_single_{pattern}": "/".join(part["setting"])
        for pattern, part in best.groupby("pattern")
    }
    return Outputs(made, written[0], written[1:], headline)


STUDY = Study(
    name="rq3", title="RQ3",
    settings=(Setting(agency="A1"), *(Setting(agency="A3", channels=c) for c in GRID_SETTINGS)),
    judge_process=False, analyse=analyse, sweep=True,
)  # fmt: skip
"""The RQ3 study: A1 and A3 under every channel setting, with the single sweep agent."""


experiment = STUDY.experiment
"""The RQ3 grid: tasks × agent models × (A1, and A3 under every channel setting).

Outcomes and safety only: the process is not judged."""

plan = STUDY.plan
"""How much work :func:`run` is, before it runs: the ablation's episodes, those stored, and
the time the rest should take (a few pending episodes timed)."""
run = STUDY.run
"""Run (or resume) the channel ablation into ``RUNS_DIR/rq3``; write Table 5, the Task-Score
grid, the figures and the manifest into ``FIGURES_DIR/rq3``."""
