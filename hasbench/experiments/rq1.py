"""RQ1 — the value of human participation: A1 (full automation) vs A3 (equal partnership).

The grid runs every selected task under A1 and A3 for each agent model. From the tidy
results table (:func:`hasbench.runner.load_results`) it builds:

- ``table4``: per model × domain — Pass@1 A1 / A3 / Δ, Task Score A1 / A3 / Δ, the rescue
  rate RR (A1-failed runs that succeed under A3), and Delivery Rate and Human Intervention
  Rate under A3; percentages, "–" where undefined; and how many of the cell's episodes
  an offline stand-in ended because the task needs language understanding its rules do
  not have (counted apart: a reader sees how much of a failure rate is the stand-in's).
- ``macro_deltas``: per model, the mean over domains of ΔPass@1 and ΔTask Score.
- ``safety_c``: per model, the Safety Rate on pattern C tasks under A1 and A3.
- ``rescue``: per model, the rescue rate pooled over all its A1-failed runs and macro
  averaged over domains.
- a figure of the per-task A1→A3 changes per model with 95% bootstrap CIs over tasks.

Episodes that ended in error (``error`` set: a crash, or a model call that failed for a
reason outside the agent's control) are left out of every number; the notes say how many
and of which kinds, and the next run retries them. Agent backends named ``scripted:*`` are
deterministic scripted policies that stand in for models in offline runs; tables and
figure label them as such.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from hasbench.agency import Setting
from hasbench.experiments.common import (
    FIGURE_KEY,
    PAPER_DOMAINS,
    STANDIN_FOOTNOTE,
    bars,
    fmt,
    language_understanding_endings,
    model_label,
    run_notes,
    save_figure,
)
from hasbench.experiments.study import Analysis, Outputs, Study, Table
from hasbench.experiments.study import write_tables as write_study_tables
from hasbench.metrics import rate, rescue_rate
from hasbench.report import undefined_notes, undelivered

DEFAULT_DOMAINS = PAPER_DOMAINS
"""Table 4 covers the paper's six domains."""
SETTINGS = (Setting(agency="A1"), Setting(agency="A3"))


def _usable(results: pd.DataFrame) -> pd.DataFrame:
    frame = results[results["error"].isna() & results["agency"].isin(["A1", "A3"])].copy()
    frame["task_score"] = pd.to_numeric(frame["task_score"], errors="coerce")
    frame["hir"] = pd.to_numeric(frame["hir"], errors="coerce")
    return frame


def _pct(value: float) -> float:
    return value * 100 if not math.isnan(value) else math.nan


def _pair(cell: pd.DataFrame) -> tuple[dict, dict]:
    def by_run(agency: str) -> dict:
        part = cell[cell["agency"] == agency]
        rows = zip(part["task_id"], part["seed"], part["success"], strict=True)
        return {(task, seed): bool(ok) for task, seed, ok in rows}

    return by_run("A1"), by_run("A3")


def table4(results: pd.DataFrame) -> pd.DataFrame:
    """Per model × domain outcomes under A1 and A3 (percentages; NaN where undefined).

    ``judge_scored`` counts the tasks of the cell that only the LLM judge scores;
    ``needs_language`` its episodes (A1 and A3) that a stand-in ended for want of language
    understanding (:func:`~hasbench.experiments.common.language_understanding_endings`).
    """
    frame = _usable(results)
    rows = []
    for (model, domain), cell in frame.groupby(["agent_model", "domain"], sort=True):
        a1, a3 = cell[cell["agency"] == "A1"], cell[cell["agency"] == "A3"]
        p1, p3 = _pct(rate(a1["success"])), _pct(rate(a3["success"]))
        t1, t3 = _pct(_mean(a1["task_score"])), _pct(_mean(a3["task_score"]))
        rows.append(
            {
                "model": model_label(model),
                "domain": domain,
                "tasks": cell["task_id"].nunique(),
                "judge_scored": int(cell.drop_duplicates("task_id")["judge_scored"].eq(True).sum()),
                "pass1_a1": p1,
                "pass1_a3": p3,
                "pass1_delta": p3 - p1,
                "ts_a1": t1,
                "ts_a3": t3,
                "ts_delta": t3 - t1,
                "rr": _pct(rescue_rate(*_pair(cell))),
                "dr_a3": _pct(rate(a3["delivered"])),
                "hir_a3": _pct(_mean(a3["hir"])),
                "needs_language": int(
                    language_understanding_endings(cell, keys=())["endings"].sum()
                ),
            }
        )
    return pd.DataFrame(rows)


PROCESS_COLUMNS = ("hir", "h_init", "h_init_judged", "action_safe", "cqs", "fur", "crj")
"""The process metrics of an RQ1 cell (docs/metrics.md)."""


def process_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per model × domain × agency: the mean of each process metric (NaN where undefined).

    ``action_safe`` becomes the Action Safety Rate; CQS, FUR and CRJ are means over the
    episodes that had their event (event-conditioned).
    """
    frame = _usable(results)
    for column in PROCESS_COLUMNS:
        frame[column] = pd.to_numeric(frame[column].astype("object"), errors="coerce")
    keys = ["agent_model", "domain", "agency"]
    table = frame.groupby(keys, sort=True)[list(PROCESS_COLUMNS)].mean().reset_index()
    return table.rename(columns={"action_safe": "asr"})


def macro_deltas(table: pd.DataFrame) -> pd.DataFrame:
    """Per model: the mean over domains of ΔPass@1 and ΔTask Score (points)."""
    rows = [
        {
            "model": model,
            "domains": len(part),
            "pass1_delta": _mean(part["pass1_delta"]),
            "ts_delta": _mean(part["ts_delta"]),
        }
        for model, part in table.groupby("model", sort=True)
    ]
    return pd.DataFrame(rows, columns=["model", "domains", "pass1_delta", "ts_delta"])


def safety_c(results: pd.DataFrame) -> pd.DataFrame:
    """Per model: Safety Rate (final state) on pattern C tasks under A1 and A3."""
    frame = _usable(results)
    frame = frame[frame["pattern"] == "C"]
    rows = []
    for model in sorted(results["agent_model"].unique()):
        part = frame[frame["agent_model"] == model]
        s1 = _pct(rate(part[part["agency"] == "A1"]["safe"]))
        s3 = _pct(rate(part[part["agency"] == "A3"]["safe"]))
        rows.append(
            {
                "model": model_label(model),
                "tasks_c": part["task_id"].nunique(),
                "safety_a1": s1,
                "safety_a3": s3,
                "safety_delta": s3 - s1,
            }
        )
    return pd.DataFrame(
        rows, columns=["model", "tasks_c", "safety_a1", "safety_a3", "safety_delta"]
    )


def rescue(results: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Per model: rescue rate pooled over all A1-failed runs, and averaged over domains."""
    frame = _usable(results)
    rows = []
    for model, part in frame.groupby("agent_model", sort=True):
        a1, a3 = _pair(part.assign(task_id=part["domain"] + "/" + part["task_id"]))
        label = model_label(model)
        rows.append(
            {
                "model": label,
                "a1_failures": sum(not ok for ok in a1.values()),
                "rescued": sum(not ok and a3.get(k, False) for k, ok in a1.items()),
                "rr_pooled": _pct(rescue_rate(a1, a3)),
                "rr_macro": _mean(table.loc[table["model"] == label, "rr"]),
            }
        )
    return pd.DataFrame(rows, columns=["model", "a1_failures", "rescued", "rr_pooled", "rr_macro"])


def task_deltas(results: pd.DataFrame) -> pd.DataFrame:
    """Per model × task: A3 minus A1 of success and Task Score (seeds averaged), in points."""
    frame = _usable(results)
    frame = frame.assign(success=frame["success"].astype(float))
    means = frame.pivot_table(
        index=["agent_model", "domain", "task_id"],
        columns="agency",
        values=["success", "task_score"],
        aggfunc="mean",
    )
    out = pd.DataFrame(index=means.index)
    for metric in ("success", "task_score"):
        if (metric, "A1") in means and (metric, "A3") in means:
            out[metric] = (means[(metric, "A3")] - means[(metric, "A1")]) * 100
        else:
            out[metric] = math.nan
    return out.reset_index()


def tables(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every RQ1 table, numeric."""
    t4 = table4(results)
    return {
        "table4": t4,
        "macro_deltas": macro_deltas(t4),
        "safety_c": safety_c(results),
        "rescue": rescue(results, t4),
    }


HEADERS = {
    "model": "Model", "domain": "Domain", "tasks": "Tasks", "judge_scored": "Judge-scored",
    "tasks_c": "Tasks (C)",
    "domains": "Domains", "pass1_a1": "P@1 A1", "pass1_a3": "P@1 A3", "pass1_delta": "Δ P@1",
    "ts_a1": "TS A1", "ts_a3": "TS A3", "ts_delta": "Δ TS", "rr": "RR", "dr_a3": "DR@A3",
    "hir_a3": "HIR@A3", "safety_a1": "SR_C A1", "safety_a3": "SR_C A3",
    "safety_delta": "Δ SR_C", "a1_failures": "A1 failures", "rescued": "Rescued",
    "rr_pooled": "RR pooled", "rr_macro": "RR macro", "needs_language": "Needs LU",
}  # fmt: skip
"""Display names of the table columns."""


def display(table: pd.DataFrame) -> pd.DataFrame:
    """Format a numeric table for reading: one decimal, signed deltas, "–" for undefined."""
    shown = pd.DataFrame(index=table.index)
    for column in table.columns:
        values = table[column]
        if pd.api.types.is_float_dtype(values):
            signed = column.endswith("_delta")
            shown[column] = [fmt(v, signed=signed) for v in values]
        else:
            shown[column] = values.astype(str)
    return shown.rename(columns=HEADERS)


def text_columns(shown: pd.DataFrame) -> int:
    """How many leading columns of a displayed RQ1 table are text."""
    return sum(1 for c in shown.columns if c in ("Model", "Domain"))


UNDEFINED = {
    "pass1_a1": "no A1 episode of the cell finished (every one ended in error)",
    "pass1_a3": "no A3 episode of the cell finished (every one ended in error)",
    "ts_a1": "no A1 episode of the cell finished (every one ended in error)",
    "ts_a3": "no A3 episode of the cell finished (every one ended in error)",
    "pass1_delta": "A1 or A3 is undefined",
    "ts_delta": "A1 or A3 is undefined",
    "rr": "no A1 run of the cell failed (or none finished), so there was nothing to rescue",
    "rr_pooled": "no A1 run failed, so there was nothing to rescue",
    "rr_macro": "no domain had an A1 failure to rescue",
    "safety_a1": "the model ran no pattern-C task under A1 (Tasks (C) = 0)",
    "safety_a3": "the model ran no pattern-C task under A3 (Tasks (C) = 0)",
    "safety_delta": "A1 or A3 is undefined",
    "hir_a3": "no A3 episode of the cell finished",
}
"""Why a cell of an RQ1 table can be undefined, by column."""
NEEDS_LANGUAGE_NOTE = (
    "Needs LU: the cell's episodes (A1 and A3) that an offline stand-in ended because the "
    "task needs language understanding its rules do not have; they count as not solved."
)


def study_tables(results: pd.DataFrame) -> dict[str, Table]:
    """Every RQ1 table with its cells for reading and what its undefined cells mean."""
    made = tables(results)
    reasons = {
        **UNDEFINED,
        "dr_a3": undelivered(results, "no A3 episode of the cell finished"),
    }
    written = {}
    for name, table in made.items():
        shown = display(table)
        notes = undefined_notes(table, HEADERS, reasons)
        if "needs_language" in table.columns:
            notes.append(NEEDS_LANGUAGE_NOTE)
        written[name] = Table(table, shown, text_columns(shown), tuple(notes))
    return written


def write_tables(results: pd.DataFrame, output_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Write every table as CSV (numeric), Markdown and LaTeX (formatted) into output_dir.

    The Markdown files end with a note on scripted stand-ins and excluded episodes, and
    on what each table's undefined cells mean. Returns the numeric tables.
    """
    made = study_tables(results)
    write_study_tables(Path(output_dir), made, run_notes(results))
    return {name: table.numeric for name, table in made.items()}


def figure(results: pd.DataFrame, output_dir: str | Path, seed: int = 0) -> Path:
    """Bar chart of the mean per-task A1→A3 change per model, with 95% bootstrap CIs.

    Writes ``rq1_deltas.png`` and ``.pdf`` and the plotted numbers to ``rq1_deltas.csv``.
    Bars are labelled with the agent backend; a footnote marks scripted stand-ins once.
    """
    from matplotlib.figure import Figure

    from hasbench.stats import bootstrap_ci

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    deltas = task_deltas(results)
    rows = []
    for model, part in deltas.groupby("agent_model", sort=True):
        for metric, label in (("success", "Δ Pass@1"), ("task_score", "Δ Task Score")):
            values = part[metric].dropna().to_numpy()
            if values.size == 0:
                continue
            ci = bootstrap_ci(values, statistic=np.mean, n_resamples=10000, seed=seed)
            rows.append(
                {
                    "model": model,
                    "metric": label,
                    "tasks": int(values.size),
                    "estimate": ci.estimate,
                    "low": ci.low,
                    "high": ci.high,
                }
            )
    plotted = pd.DataFrame(rows, columns=["model", "metric", "tasks", "estimate", "low", "high"])
    plotted.to_csv(out / "rq1_deltas.csv", index=False, float_format="%.4f")
    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(1, 2, sharey=True)
    units = {
        "Δ Pass@1": "Δ Pass@1, A3 − A1 (points)",
        "Δ Task Score": "Δ Task Score, A3 − A1 (points)",
    }
    for ax, label in zip(axes, ("Δ Pass@1", "Δ Task Score"), strict=True):
        part = plotted[plotted["metric"] == label]
        x = np.arange(len(part))
        for color, side in (("#2a9d8f", part["estimate"] >= 0), ("#e76f51", part["estimate"] < 0)):
            chosen = part[side]
            bars(ax, x[side.to_numpy()], chosen["estimate"], 0.8, color,
                 low=chosen["low"], high=chosen["high"])  # fmt: skip
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(x, part["model"], rotation=15, ha="right", fontsize=8)
        ax.set_xlabel("agent backend")
        ax.set_ylabel(units[label])
        ax.yaxis.set_tick_params(labelleft=True)
        ax.set_title(f"{label}, mean over tasks with 95% bootstrap CI", fontsize=9)
    footnote = FIGURE_KEY
    if results["agent_model"].str.startswith("scripted:").any():
        footnote = f"{STANDIN_FOOTNOTE}; {FIGURE_KEY}"
    fig.text(0.5, -0.12, footnote, ha="center", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out, "rq1_deltas")[0]


def analyse(analysis: Analysis) -> Outputs:
    """Table 4, the macro deltas, Safety Rate on C, the rescue rate and the Δ figure."""
    made = study_tables(analysis.results)
    png = figure(analysis.results, analysis.output_dir, seed=analysis.parameters.seed)
    macro = made["macro_deltas"].numeric
    headline = {"pass1_delta": _mean(macro["pass1_delta"]), "ts_delta": _mean(macro["ts_delta"])}
    return Outputs(made, png, [png.with_suffix(".pdf"), png.with_suffix(".csv")], headline)


STUDY = Study(name="rq1", title="RQ1", settings=SETTINGS, judge_process=True, analyse=analyse,
              domains=DEFAULT_DOMAINS)  # fmt: skip
"""The RQ1 study: A1 vs A3 for every agent, process judged."""


experiment = STUDY.experiment
"""The RQ1 grid: the domains' task files × agent models × {A1, A3} × one seed.

The process metrics (CQS, FUR, CRJ, judged initiative) are judged; Table 4 itself reports
only DR and HIR of them."""

plan = STUDY.plan
"""How much work :func:`run` is, before it runs: the grid's episodes, those stored, and the
time the rest should take (a few pending episodes timed per agent, domain and agency level)."""
run = STUDY.run
"""Run (or resume) the RQ1 grid, A1 vs A3 for every agent, into ``RUNS_DIR/rq1``; write
Table 4, the macro deltas, Safety Rate on C, the rescue rate, the Δ figure and the manifest
into ``FIGURES_DIR/rq1``."""


def _mean(values: pd.Series) -> float:
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return float(numbers.mean()) if len(numbers) else math.nan
