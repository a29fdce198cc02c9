"""Step 6, human verification: the stratified sample, the review sheets and the agreement
of filled sheets (tasks of the project's own generated task files)."""

import csv

import pytest

from hasbench.build.verification import (
    RUBRIC,
    SheetError,
    agreement,
    read_sheets,
    stratified_sample,
    write_sheets,
)
from hasbench.cli import main
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks


def pool():
    tasks = load_tasks(TASKS_DIR / "retail.yaml")[:7] + load_tasks(TASKS_DIR / "airline.yaml")[:3]
    one_graph = tasks[0].model_copy(update={"metadata": {"adaptation": {"source": "marble"}}})
    return [*tasks, one_graph.model_copy(update={"task_id": "retail_A_999"})]


def test_every_non_empty_stratum_gets_two_tasks_or_all_it_has():
    sample = stratified_sample(pool(), per_stratum=2, seed=3)
    strata = {}
    for task in sample:
        key = (
            task.domain,
            task.coordination_mode,
            task.metadata.get("adaptation", {}).get("source", "unknown"),
        )
        strata[key] = strata.get(key, 0) + 1
    assert strata == {
        ("airline", "star", "unknown"): 2,
        ("retail", "star", "unknown"): 2,
        ("retail", "star", "marble"): 1,  # the stratum has one task
    }
    assert [t.task_id for t in sample] == [
        t.task_id for t in stratified_sample(pool(), per_stratum=2, seed=3)
    ]


def fill(path, reviewer, scores):
    """A copy of the blank sheet with one reviewer's scores (task -> score for every dim)."""
    rows = list(csv.DictReader(path.open()))
    out = path.with_name(f"{reviewer}.csv")
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            row["reviewer"] = reviewer
            row.update({d: str(scores[row["task_id"]][d]) for d in RUBRIC})
            writer.writerow(row)
    return out


def test_sheets_and_agreement(tmp_path, capsys):
    sample = stratified_sample(pool())
    csv_path, html_path = write_sheets(sample, tmp_path)
    header = next(csv.reader(csv_path.open()))
    assert header[:6] == ["reviewer", "task_id", "domain", "coordination_mode", "source", "pattern"]
    assert (
        header[6:16] == list(RUBRIC) and len(list(csv.reader(csv_path.open()))) == len(sample) + 1
    )
    page = html_path.read_text()
    assert "Need for human-agent collaboration" in page and sample[0].task_id in page
    ids = [t.task_id for t in sample]
    same = {t: dict.fromkeys(RUBRIC, 2) for t in ids}
    other = {t: dict.fromkeys(RUBRIC, 2) for t in ids}
    other[ids[0]]["D3"] = 1
    other[ids[1]]["D3"] = 0
    sheets = [fill(csv_path, "ana", same), fill(csv_path, "ben", other)]
    table = {e["dimension"]: e for e in agreement(read_sheets(sheets))}
    assert table["D1"]["mean"] == 2.0 and table["D1"]["exact_agreement"] == 1.0
    assert table["D3"]["mean"] == pytest.approx((2 * len(ids) * 2 - 1 - 2) / (2 * len(ids)))
    assert table["D3"]["exact_agreement"] == pytest.approx((len(ids) - 2) / len(ids))
    assert (
        table["D3"]["fleiss_kappa"] < 0
    )  # one reviewer always gives 2: no agreement beyond chance
    assert main(["build", "agreement", *map(str, sheets), "--out", str(tmp_path / "a.md")]) == 0
    assert "| D3 | Mode rationale |" in capsys.readouterr().out and (tmp_path / "a.md").exists()


def test_bad_sheets_name_file_row_and_column(tmp_path):
    csv_path, _ = write_sheets(stratified_sample(pool()), tmp_path)
    with pytest.raises(SheetError, match=r"review_sheet.csv: row 2: reviewer: empty"):
        read_sheets([csv_path])
    scores = {t.task_id: dict.fromkeys(RUBRIC, 1) for t in stratified_sample(pool())}
    first = next(iter(scores))
    scores[first]["W3"] = 3
    with pytest.raises(SheetError, match=r"ana.csv: row 2: W3: expected 0, 1 or 2, got '3'"):
        read_sheets([fill(csv_path, "ana", scores)])
    scores[first]["W3"] = 1
    good = fill(csv_path, "ana", scores)
    with pytest.raises(SheetError, match="ana already scored"):
        read_sheets([good, good])
