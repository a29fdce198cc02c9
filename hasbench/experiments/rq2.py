"""RQ2 — the effect of human agency: A1, A3 and A4 per domain (HAS paper §5.2.2, Figure 2).

The grid runs every selected task under A1 (full automation), A3 (equal partnership) and
A4 (proactive human participation) for each agent model, with the process judge on. From
the tidy results table it builds:

- ``figure2``: per model × domain × level, panel (a) Pass@1 and Task Score (%) and panel
  (b) HIR, CQS, FUR, CRJ and H_init (0–1), each the mean over tasks (seeds averaged per
  task first) with a 95% bootstrap CI over tasks and the number of tasks it rests on.
  CQS, FUR and CRJ are event-conditioned: only tasks whose episode had such an event and
  a verdict count, and the event coverage and mean events per episode stand beside them.
  H_init is the Initiative Entropy of the judge's initiative verdicts (``h_init_judged``;
  the rule judge reproduces the structural count).
- ``a4_vs_a3``: per model × domain, the runs A4 rescues (failed under A3, solved under A4)
  and breaks (solved under A3, failed under A4), as counts and task lists; ``a4_changes``
  lists them one per row.
- ``a4_harm``: every broken run classified by the judge from its A4 trace
  (:meth:`~hasbench.participants.judges.rule.RuleJudge.classify_a4_harm`: premature
  intervention, redundant or distracting input, other, or a missing value with its reason)
  with the evidence it cites and the human-initiated inputs of that trace;
  ``a4_harm_counts`` counts the categories. The judges' complete evidence goes to
  ``a4_harm.json``.

The paper runs this sweep on Coding and Research; the domains are a parameter, and a
requested domain without tasks is replaced, with a printed note, by those that exist.
A4's proactive input comes from each task's ``spontaneous_config``; a note says how many
tasks define one (on the others A4 differs from A3 only in its control threshold and
prompt). Crashed episodes are left out of every number and counted in the notes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hasbench.agency import Setting
from hasbench.experiments.common import (
    DASH,
    FIGURE_KEY,
    bars,
    fmt_ci,
    mean_ci,
    model_label,
    per_task,
    save_figure,
    usable,
)
from hasbench.experiments.study import Analysis, Outputs, Study, Table
from hasbench.metrics import event_conditioned
from hasbench.runner import Experiment

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

LEVELS = ("A1", "A3", "A4")
DEFAULT_DOMAINS = ("coding", "research")
OUTCOME_METRICS = {"pass1": "Pass@1", "task_score": "Task Score"}
"""Panel (a), in percent."""
PROCESS_METRICS = {"hir": "HIR", "cqs": "CQS", "fur": "FUR", "crj": "CRJ", "h_init": "H_init"}
"""Panel (b), on 0–1."""
EVENT_METRICS = ("cqs", "fur", "crj")
HARM_COLUMNS = [
    "model", "domain", "task_id", "seed", "category", "missing_reason", "evidence_seq",
    "explanation", "inputs", "judge_model", "trace",
]  # fmt: skip


LEVEL_NAMES = {"A1": "A1 full automation", "A3": "A3 equal partnership",
               "A4": "A4 proactive humans"}  # fmt: skip
"""How the figure's legend names the agency levels."""


# ---------------------------------------------------------------------------------------
# Figure 2 numbers


def episode_values(results: pd.DataFrame) -> pd.DataFrame:
    """Usable episodes of the sweep with one column per Figure 2 metric.

    Pass@1 and Task Score in percent; CQS, FUR and CRJ only where the episode had an event.
    """
    frame = usable(results)
    frame = frame[frame["agency"].isin(LEVELS)].copy()
    frame["pass1"] = frame["success"].astype(float) * 100
    frame["task_score"] = frame["task_score"] * 100
    frame["h_init"] = frame["h_init_judged"]
    for metric in EVENT_METRICS:
        events = pd.to_numeric(frame[f"{metric}_events"], errors="coerce").fillna(0)
        scores = pd.to_numeric(frame[metric], errors="coerce")
        frame[metric] = scores.where(events > 0)
    return frame


def figure2_table(results: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model × domain × level × metric: mean over tasks with a 95% bootstrap CI."""
    frame = episode_values(results)
    rows = []
    for (model, domain, level), cell in frame.groupby(["agent_model", "domain", "agency"]):
        for metric in [*OUTCOME_METRICS, *PROCESS_METRICS]:
            ci = mean_ci(per_task(cell, metric), seed=seed)
            row = {
                "model": model_label(model),
                "domain": domain,
                "level": level,
                "metric": metric,
                "tasks": ci["n"],
                "estimate": ci["estimate"],
                "low": ci["low"],
                "high": ci["high"],
                "coverage": math.nan,
                "events_per_task": math.nan,
            }
            if metric in EVENT_METRICS:
                events = pd.to_numeric(cell[f"{metric}_events"], errors="coerce").fillna(0)
                agg = event_conditioned(cell[metric].tolist(), events.astype(int).tolist())
                row.update(coverage=agg["coverage"], events_per_task=agg["events_per_task"])
            rows.append(row)
    return pd.DataFrame(rows, columns=[
        "model", "domain", "level", "metric", "tasks", "estimate", "low", "high", "coverage",
        "events_per_task",
    ])  # fmt: skip


def display_figure2(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 2's numbers, one row per model × domain × metric, one column per level."""
    names = {**OUTCOME_METRICS, **PROCESS_METRICS}
    rows = []
    for (model, domain, metric), part in table.groupby(["model", "domain", "metric"], sort=False):
        row = {"Model": model, "Domain": domain, "Metric": names[metric]}
        digits = 1 if metric in OUTCOME_METRICS else 2
        for level in LEVELS:
            hit = part[part["level"] == level]
            if hit.empty:
                row[level] = DASH
                continue
            r = hit.iloc[0]
            cell = f"{fmt_ci(r['estimate'], r['low'], r['high'], digits)} (n={r['tasks']}"
            if metric in EVENT_METRICS:
                cell += f"; cov {r['coverage']:.2f}"
            row[level] = cell + ")"
        rows.append(row)
    return pd.DataFrame(rows, columns=["Model", "Domain", "Metric", *LEVELS])


def figure2(table: pd.DataFrame, output_dir: Path) -> list[Path]:
    """Figure 2: per model × domain a row of panel (a) outcomes and panel (b) process."""
    from matplotlib.figure import Figure

    cells = table[["model", "domain"]].drop_duplicates().to_numpy().tolist()
    height = 3.6 * max(1, len(cells))
    fig = Figure(figsize=(12, height))
    axes = fig.subplots(max(1, len(cells)), 2, squeeze=False)
    colors = {"A1": "#adb5bd", "A3": "#2a9d8f", "A4": "#e9c46a"}
    width = 0.8 / len(LEVELS)
    panels = (
        (OUTCOME_METRICS, "percent", "(a) outcomes"),
        (PROCESS_METRICS, "score (0–1)", "(b) process"),
    )
    for row, (model, domain) in enumerate(cells):
        part = table[(table["model"] == model) & (table["domain"] == domain)]
        for col, (metrics, ylabel, title) in enumerate(panels):
            ax = axes[row, col]
            x = np.arange(len(metrics))
            for i, level in enumerate(LEVELS):
                values = np.array([_value(part, level, metric) for metric in metrics], float)
                position = x + (i - (len(LEVELS) - 1) / 2) * width
                bars(ax, position, values[:, 0], width, colors[level], LEVEL_NAMES[level],
                     values[:, 1], values[:, 2])  # fmt: skip
            ax.set_xticks(x, list(metrics.values()))
            ax.set_xlabel("metric")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{title}: {domain}, {model}", fontsize=9)
        axes[row, 0].legend(title="agency level", fontsize=8)
    fig.suptitle(f"Agency levels; error bars: 95% bootstrap CI over tasks ({FIGURE_KEY})")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / height))
    return save_figure(fig, output_dir, "figure2")


def _value(part: pd.DataFrame, level: str, metric: str) -> tuple[float, float, float]:
    hit = part[(part["level"] == level) & (part["metric"] == metric)]
    if hit.empty:
        return (math.nan, math.nan, math.nan)
    r = hit.iloc[0]
    return (r["estimate"], r["low"], r["high"])


# ---------------------------------------------------------------------------------------
# A4 against A3


def a4_changes(results: pd.DataFrame) -> pd.DataFrame:
    """Runs whose success differs between A3 and A4 (paired by task and seed)."""
    frame = usable(results)
    rows = []
    for (model, domain), cell in frame.groupby(["agent_model", "domain"]):
        a3, a4 = _runs(cell, "A3"), _runs(cell, "A4")
        for key in sorted(a3.keys() & a4.keys()):
            ok3, ok4 = bool(a3[key]["success"]), bool(a4[key]["success"])
            if ok3 == ok4:
                continue
            rows.append(
                {
                    "model": model_label(model),
                    "domain": domain,
                    "task_id": key[0],
                    "seed": key[1],
                    "change": "rescued" if ok4 else "broken",
                    "ts_a3": float(a3[key]["task_score"]),
                    "ts_a4": float(a4[key]["task_score"]),
                    "trace_a4": a4[key]["trace"],
                }
            )
    return pd.DataFrame(rows, columns=[
        "model", "domain", "task_id", "seed", "change", "ts_a3", "ts_a4", "trace_a4",
    ])  # fmt: skip


def _runs(cell: pd.DataFrame, level: str) -> dict[tuple[str, int], dict[str, Any]]:
    part = cell[cell["agency"] == level]
    return {(r["task_id"], int(r["seed"])): r for r in part.to_dict("records")}


def a4_vs_a3(results: pd.DataFrame, changes: pd.DataFrame) -> pd.DataFrame:
    """Per model × domain: paired runs, solved under A3 and A4, rescued and broken (lists)."""
    frame = usable(results)
    rows = []
    for (model, domain), cell in frame.groupby(["agent_model", "domain"]):
        a3, a4 = _runs(cell, "A3"), _runs(cell, "A4")
        paired = a3.keys() & a4.keys()
        label = model_label(model)
        mine = changes[(changes["model"] == label) & (changes["domain"] == domain)]
        several_seeds = len({seed for _, seed in paired}) > 1

        def listed(kind: str, mine: pd.DataFrame = mine, several: bool = several_seeds) -> str:
            part = mine[mine["change"] == kind]
            names = [
                f"{t}@{s}" if several else t
                for t, s in zip(part["task_id"], part["seed"], strict=True)
            ]
            return "; ".join(names)

        rows.append(
            {
                "model": label,
                "domain": domain,
                "paired": len(paired),
                "solved_a3": sum(bool(a3[k]["success"]) for k in paired),
                "solved_a4": sum(bool(a4[k]["success"]) for k in paired),
                "rescued": int((mine["change"] == "rescued").sum()),
                "broken": int((mine["change"] == "broken").sum()),
                "rescued_tasks": listed("rescued"),
                "broken_tasks": listed("broken"),
            }
        )
    return pd.DataFrame(rows, columns=[
        "model", "domain", "paired", "solved_a3", "solved_a4", "rescued", "broken",
        "rescued_tasks", "broken_tasks",
    ])  # fmt: skip


async def classify_harm(
    changes: pd.DataFrame, store: Path, judge_model: str, client: LLMClient
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Judge every broken run from its A4 trace; return the table and the full evidence."""
    import asyncio

    from hasbench.participants.backends import make_judge
    from hasbench.trace import Trace
    from hasbench.transcript import transcript

    judge = make_judge(judge_model, client)
    broken = changes[changes["change"] == "broken"].to_dict("records")

    traces = [Trace.read(store / run["trace_a4"]) for run in broken]

    async def one(run: dict[str, Any], trace: Trace) -> Any:
        outcomes = (
            f"Under A3 the task succeeded (task score {run['ts_a3']:.2f}); under A4 it "
            f"failed (task score {run['ts_a4']:.2f})."
        )
        return await judge.classify_a4_harm(transcript(trace), outcomes)

    verdicts = await asyncio.gather(*(one(r, t) for r, t in zip(broken, traces, strict=True)))
    rows, evidence = [], []
    for run, trace, verdict in zip(broken, traces, verdicts, strict=True):
        ev = verdict.evidence
        inputs = " | ".join(
            f"seq {e.seq}: {e.payload.content}"
            for e in trace.of_type("channel_request")
            if e.initiator == "human"
        )
        rows.append(
            {
                "model": run["model"],
                "domain": run["domain"],
                "task_id": run["task_id"],
                "seed": run["seed"],
                "category": verdict.value,
                "missing_reason": verdict.missing_reason,
                "evidence_seq": " ".join(str(s) for s in ev.get("evidence_seq", [])),
                "explanation": ev.get("rule") or ev.get("rationale") or "",
                "inputs": inputs,
                "judge_model": judge_model,
                "trace": run["trace_a4"],
            }
        )
        kept = {k: v for k, v in ev.items() if k != "excerpt"}
        evidence.append({**{k: run[k] for k in ("model", "domain", "task_id", "seed")},
                         "category": verdict.value, "missing_reason": verdict.missing_reason,
                         "evidence": kept})  # fmt: skip
    return pd.DataFrame(rows, columns=HARM_COLUMNS), evidence


def harm_counts(harm: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Per model × domain (every cell of ``table``) × category, including missing verdicts."""
    from hasbench.participants.judges import A4_HARM_CATEGORIES

    rows = []
    for model, domain in table[["model", "domain"]].drop_duplicates().to_numpy().tolist():
        part = harm[(harm["model"] == model) & (harm["domain"] == domain)]
        for category in [*A4_HARM_CATEGORIES, "missing"]:
            hits = (
                part["category"].isna() if category == "missing" else part["category"] == category
            )
            rows.append(
                {"model": model, "domain": domain, "category": category, "count": int(hits.sum())}
            )
    return pd.DataFrame(rows, columns=["model", "domain", "category", "count"])


# ---------------------------------------------------------------------------------------
# Running


HEADERS = {
    "model": "Model", "domain": "Domain", "paired": "Paired runs", "solved_a3": "Solved A3",
    "solved_a4": "Solved A4", "rescued": "Rescued", "broken": "Broken",
    "rescued_tasks": "Rescued tasks", "broken_tasks": "Broken tasks", "task_id": "Task",
    "seed": "Seed", "change": "Change", "ts_a3": "TS A3", "ts_a4": "TS A4",
    "category": "Category", "missing_reason": "Missing because", "evidence_seq": "Evidence seq",
    "explanation": "Judge's explanation", "inputs": "Human-initiated input",
    "judge_model": "Judge", "count": "Count",
}  # fmt: skip


def display(table: pd.DataFrame) -> pd.DataFrame:
    """A numeric table for reading: two decimals, "–" for missing, headers named."""
    shown = table.drop(columns=[c for c in ("trace", "trace_a4") if c in table])
    shown = shown.map(lambda v: DASH if v is None or (isinstance(v, float) and math.isnan(v))
                      else f"{v:.2f}" if isinstance(v, float) else str(v))  # fmt: skip
    return shown.rename(columns=HEADERS)


def spontaneous_note(grid: Experiment) -> str:
    """How many of the grid's tasks define a proactive (spontaneous) intervention."""
    from hasbench.runner import select_tasks

    tasks = select_tasks(grid.tasks)
    proactive = sum(any(u.spontaneous_config for u in t.users) for t in tasks)
    return (
        f"A4's proactive input comes from each task's spontaneous_config: {proactive} of "
        f"{len(tasks)} tasks define one; on the others A4 differs from A3 only in its "
        "stricter control threshold and its prompt."
    )


EVENTS = {"cqs": "clarification", "fur": "feedback", "crj": "control"}


def figure2_notes(table: pd.DataFrame) -> list[str]:
    """What Figure 2's undefined cells mean."""
    notes = []
    for metric, channel in EVENTS.items():
        missing = table[(table["metric"] == metric) & table["estimate"].isna()]
        if len(missing):
            notes.append(
                f"{PROCESS_METRICS[metric]} is undefined ({DASH}) in {len(missing)} cell(s): "
                f"no episode of the cell had a {channel} event with a judge's verdict "
                "(event-conditioned; its coverage is 0)."
            )
    other = table[~table["metric"].isin(list(EVENTS)) & table["estimate"].isna()]
    if len(other):
        notes.append(f"Other undefined cells ({DASH}): no episode of the cell finished.")
    return notes


def analyse(analysis: Analysis) -> Outputs:
    """Figure 2 and its table, A4 against A3, and the judged A4 failures."""
    from hasbench.sync import run_sync

    results, seed = analysis.results, analysis.parameters.seed
    changes = a4_changes(results)
    fig_table = figure2_table(results, seed=seed)
    judge = analysis.parameters.judge_model
    harm, evidence = run_sync(classify_harm(changes, analysis.stores[0], judge, analysis.client))
    numeric = {
        "figure2": fig_table,
        "a4_vs_a3": a4_vs_a3(results, changes),
        "a4_changes": changes,
        "a4_harm": harm,
        "a4_harm_counts": harm_counts(harm, fig_table),
    }
    made = {
        name: Table(table, display_figure2(table) if name == "figure2" else display(table), 2,
                    tuple(figure2_notes(table)) if name == "figure2" else ())
        for name, table in numeric.items()
    }  # fmt: skip
    out = analysis.output_dir
    figures = figure2(fig_table, out)
    details = out / "a4_harm.json"
    details.write_text(json.dumps(evidence, indent=1, default=str) + "\n", encoding="utf-8")
    totals = numeric["a4_vs_a3"]
    headline = {"a4_rescued": int(totals["rescued"].sum()),
                "a4_broken": int(totals["broken"].sum())}  # fmt: skip
    return Outputs(made, figures[0], [*figures[1:], details], headline)


STUDY = Study(name="rq2", title="RQ2", settings=tuple(Setting(agency=level) for level in LEVELS),
              judge_process=True, analyse=analyse, sweep=True,
              grid_notes=lambda grids: [spontaneous_note(grids[0])],
              domains=DEFAULT_DOMAINS)  # fmt: skip
"""The RQ2 study: A1, A3 and A4 with the single sweep agent, process judged."""


experiment = STUDY.experiment
"""The RQ2 grid: the domains' tasks × agent models × {A1, A3, A4}, process judged."""

plan = STUDY.plan
"""How much work :func:`run` is, before it runs: the sweep's episodes, those stored, and the
time the rest should take (a few pending episodes timed)."""
run = STUDY.run
"""Run (or resume) the RQ2 sweep (A1, A3, A4 with the sweep agent) into ``RUNS_DIR/rq2``,
classify the A4-harmed runs, and write the tables, figure and manifest into
``FIGURES_DIR/rq2``."""
