"""Step 6 of the construction pipeline: sampled human verification (HAS paper App. B.4.4).

:func:`stratified_sample` draws at least two tasks (all, if fewer) from every non-empty
stratum of domain x coordination mode x source benchmark. :func:`write_sheets` exports
them as review sheets: a CSV to fill in (one row per task, a 0-2 score per dimension, the
reviewer's name) and an HTML page with the rubric and every sampled task in full. People
fill copies of the CSV; :func:`agreement` reads the filled sheets and reports, per
dimension, the mean score and how far the reviewers agree (exact agreement, Fleiss'
kappa, and with exactly two reviewers the quadratic-weighted kappa).
"""

from __future__ import annotations

import csv
import html
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hasbench.build.builder import dump_tasks
from hasbench.scenario import Scenario
from hasbench.stats import category_counts, fleiss_kappa, weighted_kappa

RUBRIC: dict[str, tuple[str, str]] = {
    "D1": ("Schema completeness", "every required field present and well typed"),
    "D2": ("Topology consistency", "participants, edges and coordination mode agree"),
    "D3": ("Mode rationale", "the coordination mode matters for how the task is done"),
    "D4": ("Requestor legality", "each gold action is done by someone allowed and able to"),
    "D5": ("User design", "each human has a clear goal, a policy and a part that matters"),
    "D6": ("Evaluation adequacy", "the criteria tell success from failure reliably"),
    "D7": ("Cross-field coherence", "all fields describe one task without contradiction"),
    "W1": ("Scenario realism", "this could happen in the domain as described"),
    "W3": ("Need for human-agent collaboration", "the humans' part changes the outcome"),
    "W5": ("Experimental utility", "the task adds a reliable, distinctive signal"),
}
"""The dimensions people score: the seven structural ones and three of worthiness."""
SCALE = {0: "a substantive failure", 1: "acceptable, with minor issues", 2: "good"}
ID_COLUMNS = ("reviewer", "task_id", "domain", "coordination_mode", "source", "pattern")


class SheetError(ValueError):
    """A filled sheet that cannot be read; the message names file, row and column."""


def source_of(scenario: Scenario) -> str:
    """The source benchmark a task was built from."""
    adaptation = scenario.metadata.get("adaptation", {})
    return str(adaptation.get("source") or scenario.metadata.get("source") or "unknown")


def stratified_sample(
    tasks: Sequence[Scenario], per_stratum: int = 2, seed: int = 0
) -> list[Scenario]:
    """At least ``per_stratum`` tasks (or all) of every domain x mode x source stratum.

    The draw within a stratum is seeded; the result is in stratum order, then task id.
    """
    strata: dict[tuple[str, str, str], list[Scenario]] = defaultdict(list)
    for task in tasks:
        strata[(task.domain, task.coordination_mode, source_of(task))].append(task)
    rng = np.random.default_rng(seed)
    chosen: list[Scenario] = []
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda t: t.task_id)
        picks = rng.choice(len(members), size=min(per_stratum, len(members)), replace=False)
        chosen += sorted((members[int(i)] for i in picks), key=lambda t: t.task_id)
    return chosen


def write_sheets(sample: Sequence[Scenario], out_dir: str | Path) -> list[Path]:
    """Write ``review_sheet.csv`` (blank scores) and ``review_sheet.html``; returns both."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, html_path = out / "review_sheet.csv", out / "review_sheet.html"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*ID_COLUMNS, *RUBRIC, "comment"])
        for task in sample:
            writer.writerow(
                ["", task.task_id, task.domain, task.coordination_mode, source_of(task),
                 task.adaptation_pattern, *[""] * len(RUBRIC), ""]
            )  # fmt: skip
    rows = "".join(
        f"<tr><td>{d}</td><td>{html.escape(name)}</td><td>{html.escape(what)}</td></tr>"
        for d, (name, what) in RUBRIC.items()
    )
    scale = "".join(f"<li><b>{k}</b>: {html.escape(v)}</li>" for k, v in SCALE.items())
    tasks = "".join(
        f"<h2 id='{t.task_id}'>{t.task_id} <small>({t.domain}, {t.coordination_mode}, "
        f"{html.escape(source_of(t))}, pattern {t.adaptation_pattern})</small></h2>"
        f"<pre>{html.escape(dump_tasks([t]))}</pre>"
        for t in sample
    )
    html_path.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>HAS-Bench review sheet"
        "</title><style>body{font-family:sans-serif;max-width:70em;margin:auto}pre{background:"
        "#f4f4f4;padding:1em;white-space:pre-wrap}td{padding:.2em .6em;border-bottom:1px "
        "solid #ddd}</style></head><body><h1>HAS-Bench human verification</h1>"
        f"<p>{len(sample)} tasks. Score every dimension of every task 0, 1 or 2 in your copy "
        "of <code>review_sheet.csv</code>, put your name in the reviewer column, and return "
        "the file.</p>"
        f"<ul>{scale}</ul><table>{rows}</table>{tasks}</body></html>",
        encoding="utf-8",
    )
    return [csv_path, html_path]


def read_sheets(paths: Sequence[str | Path]) -> list[dict[str, object]]:
    """Every scored row of the filled sheets: ids, reviewer and a score per dimension.

    Raises:
        SheetError: a missing column, a blank reviewer, a score not 0, 1 or 2, or the same
            reviewer scoring a task twice.
    """
    rows: list[dict[str, object]] = []
    seen: dict[tuple[str, str], str] = {}
    for path in paths:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SheetError(f"{path}: cannot read: {exc.strerror or exc}") from None
        reader = csv.DictReader(text.splitlines())
        missing = [
            c for c in ("reviewer", "task_id", *RUBRIC) if c not in (reader.fieldnames or [])
        ]
        if missing:
            raise SheetError(f"{path}: missing columns: {', '.join(missing)}")
        for number, raw in enumerate(reader, start=2):
            where = f"{path}: row {number}"
            reviewer = (raw.get("reviewer") or "").strip()
            if not reviewer:
                raise SheetError(f"{where}: reviewer: empty (put the reviewer's name)")
            row: dict[str, object] = {"reviewer": reviewer, "task_id": raw["task_id"]}
            for dim in RUBRIC:
                value = (raw.get(dim) or "").strip()
                if value not in ("0", "1", "2"):
                    raise SheetError(f"{where}: {dim}: expected 0, 1 or 2, got {value!r}")
                row[dim] = int(value)
            key = (reviewer, raw["task_id"])
            if key in seen:
                raise SheetError(
                    f"{where}: {reviewer} already scored {raw['task_id']} ({seen[key]})"
                )
            seen[key] = where
            rows.append(row)
    if not rows:
        raise SheetError("no scored rows in the sheets")
    return rows


def agreement(rows: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """Per dimension: mean score, ratings, and agreement on the tasks every reviewer scored."""
    reviewers = sorted({str(r["reviewer"]) for r in rows})
    by_task: dict[str, dict[str, dict[str, object]]] = defaultdict(dict)
    for row in rows:
        by_task[str(row["task_id"])][str(row["reviewer"])] = row
    shared = sorted(t for t, scored in by_task.items() if len(scored) == len(reviewers))
    table = []
    for dim in RUBRIC:
        scores = [int(r[dim]) for r in rows]
        entry: dict[str, object] = {
            "dimension": dim,
            "name": RUBRIC[dim][0],
            "mean": float(np.mean(scores)),
            "ratings": len(scores),
            "reviewers": len(reviewers),
            "shared_tasks": len(shared),
            "exact_agreement": math.nan,
            "fleiss_kappa": math.nan,
            "weighted_kappa": math.nan,
        }
        if len(reviewers) >= 2 and shared:
            labels = [[int(by_task[t][r][dim]) for r in reviewers] for t in shared]
            entry["exact_agreement"] = float(np.mean([len(set(row)) == 1 for row in labels]))
            entry["fleiss_kappa"] = fleiss_kappa(category_counts(labels, [0, 1, 2])).kappa
            if len(reviewers) == 2:
                a, b = zip(*labels, strict=True)
                try:
                    entry["weighted_kappa"] = weighted_kappa(a, b, [0, 1, 2], n_resamples=200).kappa
                except ValueError:
                    pass  # both reviewers used one score: kappa is undefined
        table.append(entry)
    return table


def format_agreement(table: Sequence[dict[str, object]]) -> str:
    """The agreement table as Markdown."""
    lines = [
        "| dimension | name | mean (0-2) | ratings | exact agreement | Fleiss' kappa "
        "| weighted kappa |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in table:
        cells = [
            _fmt(e[k]) for k in ("mean", "ratings", "exact_agreement", "fleiss_kappa",
                                 "weighted_kappa")
        ]  # fmt: skip
        lines.append(f"| {e['dimension']} | {e['name']} | " + " | ".join(cells) + " |")
    first = table[0] if table else {}
    lines.append(
        f"\n{first.get('reviewers', 0)} reviewers; agreement over the "
        f"{first.get('shared_tasks', 0)} tasks every reviewer scored."
    )
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return str(value)
