"""RQ4 — how user personas change outcomes and cost (HAS paper §5.3.2, Table 6).

Every selected task runs under A3 once per persona of its domain (``data/personas.yaml``,
three per domain), the persona overriding every user's; task, model, agency, permissions
and private facts stay fixed. Each domain is its own grid (its personas differ) with its
own results store under ``results_dir/<domain>``. From the results it builds:

- ``table6_personas``: per model × domain × persona, the means over tasks of Task Score (%),
  Pass@1 (%), HIR (0–1), turns per task and agent clarification requests per task (Ask).
- ``table6``: per model × domain, the max–min range over the personas of each of those
  metrics, with the personas at the two ends and a 95% CI: a paired bootstrap over tasks
  of the difference between those two personas' means (the ends are chosen on the full
  sample; a CI reaching 0 says the gap could be chance).

Only tasks with a finished episode and defined metrics under every persona of their domain
count (the task count is reported), so each range is the difference of the per-persona
values beside it. Crashed episodes are counted in the notes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hasbench.agency import Setting
from hasbench.experiments.common import (
    DASH,
    N_RESAMPLES,
    UNDEFINED_MARK,
    fmt,
    fmt_ci,
    model_label,
    save_figure,
    usable,
)
from hasbench.experiments.defaults import OFFLINE_JUDGE, OFFLINE_USER
from hasbench.experiments.study import Analysis, Outputs, Study, Table
from hasbench.personas import domain_personas, get_persona
from hasbench.runner import Experiment

METRICS = {
    "task_score": ("TS", 1),
    "pass1": ("Pass@1", 1),
    "hir": ("HIR", 2),
    "turns": ("Turns", 1),
    "asks": ("Ask", 2),
}
"""Column -> (display name, decimals). TS and Pass@1 in percent, HIR on 0–1, the others
per task."""


RANGE_NOTE = (
    "Each range row gives max − min over the domain's personas, then in brackets the 95% "
    "bootstrap CI of the paired difference between the two personas at its ends (the "
    "highest minus the lowest, resampling tasks in pairs). The CI is of a difference, so it "
    "can reach below 0: then the gap between the two personas could be chance."
)


def persona_settings(domain: str) -> list[Setting]:
    """A3 under each persona of the domain.

    Raises:
        ValueError: the domain has fewer than two personas.
    """
    personas = domain_personas(domain)
    if len(personas) < 2:
        raise ValueError(f"RQ4: domain {domain!r} has {len(personas)} persona(s) in "
                         "data/personas.yaml; a range needs at least two")  # fmt: skip
    return [Setting(agency="A3", persona=p.persona_id) for p in personas]


def experiment(
    agent_models: Sequence[str],
    domain: str,
    user_model: str = OFFLINE_USER,
    judge_model: str = OFFLINE_JUDGE,
    max_tasks_per_domain: int | None = None,
    seed: int = 0,
) -> Experiment:
    """The persona grid of one domain: its tasks × agent models × A3 under each persona.

    Outcomes, HIR and counts only: the process is not judged.

    Raises:
        ValueError: the domain has fewer than two personas.
    """
    return STUDY.experiment(agent_models, user_model, judge_model, [domain], max_tasks_per_domain,
                            seed)  # fmt: skip


def _matrices(frame: pd.DataFrame) -> tuple[list[str], dict[str, np.ndarray], int]:
    """Per metric a tasks × personas matrix (seeds averaged), complete tasks only."""
    personas = sorted(frame["persona"].unique())
    values = frame.assign(
        pass1=frame["success"].astype(float) * 100,
        task_score=frame["task_score"] * 100,
        asks=pd.to_numeric(frame["cqs_events"], errors="coerce"),
    )
    tables = {
        metric: values.pivot_table(
            index="task_id", columns="persona", values=metric, aggfunc="mean", dropna=False
        ).reindex(columns=personas)
        for metric in METRICS
    }
    complete = np.ones(len(tables["task_score"]), dtype=bool)
    for table in tables.values():
        complete &= table.notna().all(axis=1).to_numpy()
    return (
        personas,
        {m: t.to_numpy(dtype=float)[complete] for m, t in tables.items()},
        int(complete.sum()),
    )


def _gap_ci(matrix: np.ndarray, high: int, low: int, seed: int) -> tuple[float, float]:
    """95% CI of mean(column high) - mean(column low), resampling tasks (rows) in pairs."""
    from hasbench.stats import bootstrap_ci

    def gap(rows: np.ndarray, axis: int = -1) -> np.ndarray:
        picked = matrix[rows.astype(int)]
        return picked[..., high].mean(axis=-1) - picked[..., low].mean(axis=-1)

    ci = bootstrap_ci(np.arange(len(matrix)), statistic=gap, n_resamples=N_RESAMPLES, seed=seed)
    return ci.low + 0.0, ci.high + 0.0


def tables(results: pd.DataFrame, seed: int = 0) -> dict[str, pd.DataFrame]:
    """``table6`` (ranges with CIs) and ``table6_personas`` (the per-persona values)."""
    frame = usable(results)
    frame = frame[frame["persona"].notna()]
    ranges, values = [], []
    for (model, domain), cell in frame.groupby(["agent_model", "domain"], sort=True):
        personas, matrices, tasks = _matrices(cell)
        label = model_label(model)
        for i, persona in enumerate(personas):
            row = {"model": label, "domain": domain, "persona": persona, "tasks": tasks}
            for metric, matrix in matrices.items():
                row[metric] = float(matrix[:, i].mean()) + 0.0 if tasks else math.nan
            values.append(row)
        row = {"model": label, "domain": domain, "personas": len(personas), "tasks": tasks}
        for metric, matrix in matrices.items():
            if tasks == 0:
                row.update({f"{metric}_range": math.nan, f"{metric}_low": math.nan,
                            f"{metric}_high": math.nan, f"{metric}_max_persona": None,
                            f"{metric}_min_persona": None})  # fmt: skip
                continue
            means = matrix.mean(axis=0)
            hi, lo = int(np.argmax(means)), int(np.argmin(means))
            low, high = _gap_ci(matrix, hi, lo, seed)
            row.update({
                f"{metric}_range": float(means[hi] - means[lo]) + 0.0,
                f"{metric}_low": low,
                f"{metric}_high": high,
                f"{metric}_max_persona": personas[hi],
                f"{metric}_min_persona": personas[lo],
            })  # fmt: skip
        ranges.append(row)
    range_columns = ["model", "domain", "personas", "tasks"] + [
        f"{m}_{part}" for m in METRICS
        for part in ("range", "low", "high", "max_persona", "min_persona")
    ]  # fmt: skip
    return {
        "table6": pd.DataFrame(ranges, columns=range_columns),
        "table6_personas": pd.DataFrame(
            values, columns=["model", "domain", "persona", "tasks", *METRICS]
        ),
    }


def display(table6: pd.DataFrame, personas: pd.DataFrame) -> pd.DataFrame:
    """Table 6 for reading: per domain its personas' values, then the range row with CIs."""
    rows = []
    for r in table6.itertuples():
        mine = personas[(personas["model"] == r.model) & (personas["domain"] == r.domain)]
        for p in mine.itertuples():
            row = {"Model": r.model, "Domain": r.domain, "Persona": p.persona}
            for metric, (name, digits) in METRICS.items():
                row[name] = fmt(getattr(p, metric), digits)
            rows.append(row)
        row = {"Model": r.model, "Domain": r.domain, "Persona": f"range (n={r.tasks} tasks)"}
        for metric, (name, digits) in METRICS.items():
            row[name] = fmt_ci(getattr(r, f"{metric}_range"), getattr(r, f"{metric}_low"),
                               getattr(r, f"{metric}_high"), digits)  # fmt: skip
        rows.append(row)
    names = [name for name, _ in METRICS.values()]
    return pd.DataFrame(rows, columns=["Model", "Domain", "Persona", *names])


def figure(table6: pd.DataFrame, personas: pd.DataFrame, output_dir: Path) -> list[Path]:
    """Per model and metric: each domain's persona values on a line spanning the range."""
    from matplotlib.figure import Figure

    models = list(dict.fromkeys(table6["model"]))
    rows_per_model = max(2, int(table6.groupby("model").size().max()) if len(table6) else 2)
    fig = Figure(figsize=(15, 2.4 + (0.9 + 0.5 * rows_per_model) * max(1, len(models))))
    axes = fig.subplots(max(1, len(models)), len(METRICS), squeeze=False)
    markers = ("o", "s", "^", "D", "v")
    legend: dict[str, Any] = {}  # "domain: persona name" -> its marker
    for row, model in enumerate(models):
        mine = personas[personas["model"] == model]
        domains = list(dict.fromkeys(mine["domain"]))
        for col, (metric, (name, _)) in enumerate(METRICS.items()):
            ax = axes[row, col]
            for y, domain in enumerate(domains):
                part = mine[mine["domain"] == domain]
                values = part[metric].to_numpy(dtype=float)
                if not np.isfinite(values).any():
                    ax.text(0.5, y, DASH, va="center", ha="center",
                            transform=ax.get_yaxis_transform(), **UNDEFINED_MARK)  # fmt: skip
                    continue
                ax.hlines(y, np.nanmin(values), np.nanmax(values), color="grey", linewidth=1)
                for i, (value, persona) in enumerate(zip(values, part["persona"], strict=True)):
                    (point,) = ax.plot(value, y, markers[i % len(markers)], color=f"C{i}")
                    legend.setdefault(f"{domain}: {persona_name(persona)}", point)
            ax.set_yticks(range(len(domains)), domains)
            ax.set_xlabel(name + (" (%)" if metric in ("task_score", "pass1") else ""))
            ax.set_ylabel("domain")
            ax.set_title(f"{name}: per persona", fontsize=9)
        axes[row, 0].set_title(f"{model}\nTS: per persona", fontsize=9)
    columns = max(1, int(personas.groupby("domain")["persona"].nunique().max()))
    rows = math.ceil(len(legend) / columns)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=columns, fontsize=8,
               title="personas (marker and colour per persona of each domain)")  # fmt: skip
    fig.suptitle("Persona sensitivity: values per persona; the line spans the max–min range")
    fig.tight_layout(rect=(0, min(0.5, 0.04 + 0.035 * rows), 1, 0.95))
    return save_figure(fig, output_dir, "table6")


def persona_name(persona_id: str) -> str:
    """A persona's name as data/personas.yaml gives it (its id when it has none there)."""
    from hasbench.personas import PersonaError

    try:
        return get_persona(persona_id).name or persona_id
    except PersonaError:
        return persona_id


def table6_notes(table6: pd.DataFrame) -> list[str]:
    """What Table 6's numbers are, and why a cell can be undefined."""
    notes = [RANGE_NOTE]
    if (table6["tasks"] == 0).any():
        notes.append(f"A domain with n=0 tasks has every value undefined ({DASH}): no task "
                     "finished with defined metrics under every persona.")  # fmt: skip
    return notes


def analyse(analysis: Analysis) -> Outputs:
    """Table 6 (ranges with paired CIs), the per-persona values, and the figure."""
    made = tables(analysis.results, seed=analysis.parameters.seed)
    table6, personas = made["table6"], made["table6_personas"]
    shown = display(table6, personas)
    personas_shown = personas.map(lambda v: fmt(v, 2) if isinstance(v, float) else str(v))
    outputs = {
        "table6": Table(table6, shown, 3, tuple(table6_notes(table6))),
        "table6_personas": Table(personas, personas_shown, 3),
    }
    written = figure(table6, personas, analysis.output_dir)
    headline = {"largest_ts_range": float(table6["task_score_range"].max())} if len(table6) else {}
    return Outputs(outputs, written[0], written[1:], headline)


STUDY = Study(name="rq4", title="RQ4", settings=persona_settings, judge_process=False,
              analyse=analyse, sweep=True)  # fmt: skip
"""The RQ4 study: A3 under each persona of each domain (one grid and store per domain)."""


plan = STUDY.plan
"""How much work :func:`run` is, before it runs: one plan per domain, each with its
episodes, those stored, and the time the rest should take (a few pending episodes timed)."""
run = STUDY.run
"""Run (or resume) the persona sweep of every domain (one results store per domain under
``RUNS_DIR/rq4``); write Table 6, its per-persona values, the figure and the manifest into
``FIGURES_DIR/rq4``. The result has ``summaries``, one per domain."""
