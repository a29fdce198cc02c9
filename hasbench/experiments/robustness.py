"""Robustness of the user simulator (HAS paper §5.1): the same agents, other simulators.

Do the agents' scores and their ranking survive a change of the model (or script) that
plays the humans?

The same agents run the same task subset under A3 once per user-simulator backend. From
the tidy results table it builds:

- ``per_simulator``: per agent × simulator, Pass@1 and Task Score (%) as means over tasks
  with 95% bootstrap CIs.
- ``agreement``: per metric and pair of simulators, how far they rank the agents alike:
  Kendall's τ (tau-b) and Spearman's ρ from scipy with their p-values, over the agents
  both simulators scored. Undefined (with the reason) for fewer than two agents or when a
  simulator gives every agent the same score.
- ``shifts``: per agent, metric and pair of simulators, the mean per-task change
  (second minus first) with a paired 95% bootstrap CI over the tasks both scored;
  ``largest`` marks the largest absolute shift of each metric.

Offline, the stand-ins are two scripted user profiles and the local model
(:data:`hasbench.experiments.defaults.OFFLINE_USER_SIMULATORS`); a ``local/`` model whose
extra is not installed is left out with a note. Crashed episodes are counted in the notes.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from hasbench.agency import Setting
from hasbench.experiments.common import (
    DASH,
    FIGURE_KEY,
    bars,
    fmt,
    fmt_ci,
    mean_ci,
    model_label,
    per_task,
    save_figure,
    tick_labels,
    usable,
)
from hasbench.experiments.study import Analysis, Outputs, SimulatorStudy, Table

METRICS = {"pass1": "Pass@1", "task_score": "Task Score"}
"""Both in percent."""


def _values(results: pd.DataFrame) -> pd.DataFrame:
    frame = usable(results)
    return frame.assign(
        pass1=frame["success"].astype(float) * 100, task_score=frame["task_score"] * 100
    )


def per_simulator(results: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per agent × simulator: Pass@1 and Task Score (%) with 95% bootstrap CIs over tasks."""
    frame = _values(results)
    rows = []
    for (agent, user), cell in frame.groupby(["agent_model", "user_model"], sort=True):
        row: dict[str, Any] = {"model": model_label(agent), "simulator": user}
        for metric in METRICS:
            ci = mean_ci(per_task(cell, metric), seed=seed)
            row.setdefault("tasks", ci["n"])
            row.update({metric: ci["estimate"], f"{metric}_low": ci["low"],
                        f"{metric}_high": ci["high"]})  # fmt: skip
        rows.append(row)
    columns = ["model", "simulator", "tasks"] + [
        f"{m}{s}" for m in METRICS for s in ("", "_low", "_high")
    ]
    return pd.DataFrame(rows, columns=columns)


def agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall's τ and Spearman's ρ between every pair of simulators, per metric."""
    simulators = list(dict.fromkeys(table["simulator"]))
    rows = []
    for metric in METRICS:
        scores = table.pivot(index="model", columns="simulator", values=metric)
        for first, second in itertools.combinations(simulators, 2):
            both = scores[[first, second]].dropna()
            row = {
                "metric": metric, "first": first, "second": second, "agents": len(both),
                "kendall_tau": math.nan, "kendall_p": math.nan, "spearman_rho": math.nan,
                "spearman_p": math.nan, "undefined": "",
            }  # fmt: skip
            if len(both) < 2:
                row["undefined"] = "fewer than two agents scored by both"
            elif both[first].nunique() == 1 or both[second].nunique() == 1:
                row["undefined"] = "a simulator gives every agent the same score"
            else:
                tau = sps.kendalltau(both[first], both[second], variant="b")
                rho = sps.spearmanr(both[first], both[second])
                row.update(
                    kendall_tau=float(tau.statistic),
                    kendall_p=float(tau.pvalue),
                    spearman_rho=float(rho.statistic),
                    spearman_p=float(rho.pvalue),
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=[
        "metric", "first", "second", "agents", "kendall_tau", "kendall_p", "spearman_rho",
        "spearman_p", "undefined",
    ])  # fmt: skip


def shifts(results: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per agent × metric × simulator pair: mean per-task change with a paired bootstrap CI."""
    frame = _values(results)
    simulators = list(dict.fromkeys(sorted(frame["user_model"].unique())))
    rows = []
    for agent, mine in frame.groupby("agent_model", sort=True):
        for metric in METRICS:
            by_sim = {s: per_task(mine[mine["user_model"] == s], metric) for s in simulators}
            for first, second in itertools.combinations(simulators, 2):
                paired = pd.concat([by_sim[first], by_sim[second]], axis=1).dropna()
                ci = mean_ci(paired.iloc[:, 1] - paired.iloc[:, 0], seed=seed)
                rows.append({
                    "model": model_label(agent), "metric": metric, "first": first,
                    "second": second, "tasks": ci["n"], "shift": ci["estimate"],
                    "low": ci["low"], "high": ci["high"],
                })  # fmt: skip
    table = pd.DataFrame(rows, columns=[
        "model", "metric", "first", "second", "tasks", "shift", "low", "high",
    ])  # fmt: skip
    size = pd.to_numeric(table["shift"]).astype(float).abs()  # float also with no pair
    largest = size.groupby(table["metric"]).transform("max")
    table["largest"] = size.notna() & np.isclose(size, largest)
    return table


HEADERS = {
    "model": "Agent", "simulator": "Simulator", "tasks": "Tasks", "metric": "Metric",
    "first": "Simulator A", "second": "Simulator B", "agents": "Agents",
    "undefined": "Undefined because", "largest": "Largest",
}  # fmt: skip


def display_per_simulator(table: pd.DataFrame) -> pd.DataFrame:
    """Per agent × simulator: ``mean [CI]`` of each metric."""
    shown = table[["model", "simulator", "tasks"]].astype(str).rename(columns=HEADERS)
    for metric, name in METRICS.items():
        shown[name] = [
            fmt_ci(r[metric], r[f"{metric}_low"], r[f"{metric}_high"]) for _, r in table.iterrows()
        ]
    return shown


def display_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Rank agreement: ``τ (p)`` and ``ρ (p)``."""
    shown = table[["metric", "first", "second", "agents"]].astype(str)
    shown["metric"] = table["metric"].map(METRICS)
    for column, (value, p) in {
        "Kendall τ (p)": ("kendall_tau", "kendall_p"),
        "Spearman ρ (p)": ("spearman_rho", "spearman_p"),
    }.items():
        shown[column] = [_stat(v, q) for v, q in zip(table[value], table[p], strict=True)]
    shown["undefined"] = table["undefined"]
    return shown.rename(columns=HEADERS)


def _stat(value: float, p: float) -> str:
    """``value (p=...)``; scipy gives no p-value for Spearman's ρ over two agents."""
    if math.isnan(value):
        return DASH
    return f"{value:.2f} (p={fmt(p, 3)})"


def display_shifts(table: pd.DataFrame) -> pd.DataFrame:
    """Shifts: ``shift [CI]`` in points, the largest per metric in bold."""
    shown = table[["model", "first", "second", "tasks"]].astype(str)
    shown.insert(1, "metric", table["metric"].map(METRICS))
    cells = []
    for r in table.itertuples():
        cell = fmt_ci(r.shift, r.low, r.high)
        if r.largest and not math.isnan(r.shift):
            cell = f"**{fmt(r.shift)}** [{fmt(r.low)}, {fmt(r.high)}]"
        cells.append(cell)
    shown["Shift B − A [CI] (points)"] = cells
    shown["largest"] = ["yes" if v else "" for v in table["largest"]]
    return shown.rename(columns=HEADERS)


def figure(table: pd.DataFrame, output_dir: Path) -> list[Path]:
    """Per metric: each agent's score under each simulator, with 95% bootstrap CIs."""
    from matplotlib.figure import Figure

    agents = list(dict.fromkeys(table["model"]))
    names, footnote = tick_labels(agents)
    simulators = list(dict.fromkeys(table["simulator"]))
    fig = Figure(figsize=(11, 4))
    axes = fig.subplots(1, len(METRICS), squeeze=False)[0]
    width = 0.8 / max(1, len(simulators))
    for ax, (metric, name) in zip(axes, METRICS.items(), strict=True):
        x = np.arange(len(agents))
        for i, sim in enumerate(simulators):
            part = table[table["simulator"] == sim].set_index("model").reindex(agents)
            pos = x + (i - (len(simulators) - 1) / 2) * width
            bars(ax, pos, part[metric], width, f"C{i}", sim, part[f"{metric}_low"],
                 part[f"{metric}_high"])  # fmt: skip
        ax.set_xticks(x, names, rotation=10, ha="right", fontsize=8)
        ax.set_xlabel("agent")
        ax.set_ylabel(f"{name} (%)")
        ax.set_title(f"{name} per user simulator, 95% bootstrap CI over tasks", fontsize=9)
    axes[0].legend(title="user simulator", fontsize=7)
    fig.text(0.5, -0.05, f"{footnote}; {FIGURE_KEY}" if footnote else FIGURE_KEY, ha="center",
             fontsize=8)  # fmt: skip
    fig.tight_layout()
    return save_figure(fig, output_dir, "robustness")


SHIFT_NOTE = (
    "A shift is the mean per-task change from simulator A to simulator B (B − A, in points) "
    "with a paired 95% bootstrap CI over the tasks both scored; it can be negative."
)


def analyse(analysis: Analysis) -> Outputs:
    """Scores per simulator, rank agreement, shifts, and the figure."""
    seed = analysis.parameters.seed
    table = per_simulator(analysis.results, seed=seed)
    agree, moved = agreement(table), shifts(analysis.results, seed)
    undefined = int(agree["kendall_tau"].isna().sum())
    agree_notes = (f"{undefined} agreement row(s) are undefined ({DASH}): the column "
                   "'Undefined because' says why.",) if undefined else ()  # fmt: skip
    made = {
        "per_simulator": Table(table, display_per_simulator(table), 2),
        "agreement": Table(agree, display_agreement(agree), 3, agree_notes),
        "shifts": Table(moved, display_shifts(moved), 4, (SHIFT_NOTE,)),
    }
    written = figure(table, analysis.output_dir)
    largest = moved.loc[moved["largest"], "shift"].abs()
    headline = {"largest_shift": float(largest.max()) if len(largest) else float("nan")}
    return Outputs(made, written[0], written[1:], headline)


STUDY = SimulatorStudy(name="robustness", title="Robustness", settings=(Setting(agency="A3"),),
                       judge_process=False, analyse=analyse)  # fmt: skip
"""The simulator study: every agent under A3 with every user simulator."""


experiment = STUDY.experiment
"""The grid: task subset × agents × user simulators, all under A3, process not judged."""

plan = STUDY.plan
"""How much work :func:`run` is, before it runs: the study's episodes, those stored, and the
time the rest should take (a few pending episodes timed per agent and user simulator)."""
run = STUDY.run
"""Run (or resume) the simulator study on a task subset (two tasks per domain unless asked)
into ``RUNS_DIR/robustness``; write its tables, figure and manifest into
``FIGURES_DIR/robustness``."""
