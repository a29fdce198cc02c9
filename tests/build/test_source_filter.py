"""Step 1 filtering on the real source files (HAS paper App. B.2, Table 11)."""

import csv

import pytest
from tau2_reference import MARBLE, TAU2

from hasbench.build.source_filter import (
    SourceFilterError,
    filter_marble,
    filter_tau2,
    read_marble,
    read_tau2,
    run_filter,
)
from hasbench.cli import main

PAPER = {"airline": 50, "retail": 62, "coding": 85, "research": 16, "bargaining": 25}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if not (TAU2.is_dir() and MARBLE.is_dir()):
        pytest.skip(f"source benchmarks not found at {TAU2.parent} (../shared/sources)")
    out = tmp_path_factory.mktemp("filter")
    return out, run_filter(TAU2, MARBLE, out)


@pytest.mark.parametrize(("domain", "kept"), PAPER.items())
def test_keeps_table_11s_counts(results, domain, kept):
    rows = results[1][domain]
    assert sum(r.verdict == "keep" for r in rows) == kept
    assert all(r.rank >= 1 for r in rows if r.verdict == "keep")


def test_telecom_standard_set_keeps_every_service_task_and_two_per_other_bucket(results):
    rows = filter_tau2("telecom", read_tau2(TAU2, "telecom", TAU2 / "telecom" / "tasks.json"))
    kept = [r for r in rows if r.verdict == "keep"]
    service = [r for r in rows if r.bucket.startswith("service_issue")]
    assert all(r.verdict == "keep" for r in service) and len(service) == 29
    others = {r.bucket for r in rows} - {r.bucket for r in service}
    assert len(kept) == len(service) + 2 * len(others) == 45


def test_telecom_full_set_gives_the_papers_63(results):
    rows = results[1]["telecom"]  # run_filter reads τ²'s full generated set
    assert len(rows) == 2285
    assert sum(r.bucket.startswith("service_issue") for r in rows) == 47
    assert sum(r.verdict == "keep" for r in rows) == 63


def test_ineligible_and_flagged_tasks_say_why(results):
    retail = {r.source_id: r for r in results[1]["retail"]}
    assert retail["57"].verdict == "drop" and "no checkable criterion" in retail["57"].reason
    flagged = {r.source_id for r in results[1]["airline"] if r.flags}
    change_nothing = {"0", "10", "26", "28", "31", "34", "46"}  # gold: no action at all
    assert change_nothing <= flagged and len(flagged) == 19  # 12 more only read or transfer
    assert all(r.verdict == "keep" for r in results[1]["airline"])
    research = {r.source_id: r for r in results[1]["research"]}
    assert "fewer than 3" in research["17"].reason
    assert "same introduction" in research["91"].reason


def test_report_has_a_row_per_task_and_the_paper_counts(results):
    out, by_domain = results
    with (out / "filter.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == sum(len(r) for r in by_domain.values()) == 2749  # Table 11's raw
    assert {"domain", "source_id", "bucket", "rank", "verdict", "reason"} <= set(rows[0])
    report = (out / "filter.md").read_text()
    assert "| retail | 114 | 62 | 114 | 62 |" in report
    assert "| telecom | 2285 | 63 | 2285 | 63 |" in report


def test_filtering_is_deterministic_and_ignores_file_order(results):
    records = read_marble(MARBLE, "bargaining")
    forward = filter_marble("bargaining", records)
    backward = filter_marble("bargaining", records[::-1])
    assert {r.source_id for r in forward if r.verdict == "keep"} == {
        r.source_id for r in backward if r.verdict == "keep"
    }


def test_cli_writes_the_report(results, tmp_path, capsys):
    assert main(["build", "filter", "--tau2", str(TAU2), "--marble", str(MARBLE),
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    assert "retail: kept 62 of 114" in capsys.readouterr().out
    assert (tmp_path / "filter.md").is_file()


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(SourceFilterError, match="source folder not found"):
        run_filter(tmp_path / "nope", tmp_path, tmp_path / "out")
    (tmp_path / "coding").mkdir()
    (tmp_path / "coding" / "coding_main.jsonl").write_text("{not json\n")
    with pytest.raises(SourceFilterError, match="coding_main.jsonl: line 1"):
        read_marble(tmp_path, "coding")
