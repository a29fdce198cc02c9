"""What notebooks show: readable tables, figures that survive the HTML export, glossaries."""

import math
from pathlib import Path

import pandas as pd
import pytest

from hasbench import report
from hasbench.runner import RunSummary


def test_a_table_has_no_index_rounded_numbers_and_readable_cells():
    frame = pd.DataFrame(
        {"agent_model": ["a", "b"], "hir": [0.123456, math.nan], "safe": [True, False]},
        index=[7, 9],
    )
    shown = report.show(frame, digits=2, labels={"agent_model": "Agent", "hir": "HIR"})
    assert shown.text.splitlines() == [
        "Agent  HIR safe",
        "    a 0.12  yes",
        "    b    –   no",
    ]
    assert "blank level0" not in shown.html and ">7<" not in shown.html  # no index
    assert ">Agent</th>" in shown.html and ">0.12</td>" in shown.html


def test_table_text_is_escaped_and_its_marked_best_value_is_bold():
    frame = pd.DataFrame({"<setting>": ["**0.5** [0.1, 0.9]", "a < b"]})
    html = report.show(frame).html
    assert "&lt;setting&gt;" in html and "a &lt; b" in html
    assert "<strong>0.5</strong> [0.1, 0.9]" in html and "**" not in html


def test_a_figure_is_embedded_so_the_html_export_keeps_it(tmp_path):
    png = tmp_path / "f.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    shown = report.figure(png)
    assert shown.html.startswith("<img src='data:image/png;base64,iVBORw0KGgpmYWtl'")
    assert str(shown) == f"[figure: {png}]"


def test_the_glossary_links_each_metric_to_its_definition():
    text = report.glossary("hir", "hir_a3", "success").markdown
    assert text.count("Human Intervention Rate") == 1  # one entry per term
    assert "(../docs/metrics.md#human-intervention-rate-hir-hir_a3)" in text
    with pytest.raises(KeyError, match="no_such_metric"):
        report.glossary("no_such_metric")


def test_a_run_is_told_in_one_sentence():
    summary = RunSummary(Path("runs/x"), total=10, skipped=4, ran=6, failed=1,
                         model_calls=5, cache_hits=2)  # fmt: skip
    shown = report.describe_run(summary)
    assert str(shown) == (
        "Ran 6 of 10 episodes (1 failed, see the notes); 4 were already in the results store "
        "runs/x; 5 model calls (2 answered from the cache)."
    )
    assert "`runs/x`" in shown.markdown
    spent = "the run's budget of 100 model calls is spent"
    cut = RunSummary(Path("runs/x"), total=10, skipped=0, ran=2, failed=0, model_calls=2,
                     cache_hits=0, not_started=8, budget=spent,
                     quarantined=["runs/x/records/a.json"])  # fmt: skip
    assert str(report.describe_run(cut)).endswith(
        "1 damaged file(s) were moved to quarantine/ and their episodes run again. Stopped "
        "early: the run's budget of 100 model calls is spent. 8 episode(s) not started: run "
        "again to go on."
    )


def test_names_read_from_the_left_and_numbers_from_the_right():
    frame = pd.DataFrame({"Model": ["scripted:strong"], "TS": ["**80.0** [70.0, 90.0]"],
                          "n": [3]})  # fmt: skip
    html = report.show(frame).html
    assert ".col0 {\n  text-align: left;" in html
    assert ".col1 {" not in html and ".col2 {" not in html
    empty = report.show(frame.iloc[:0]).html
    assert ">Model</th>" in empty and "<td" not in empty  # the headings of an empty table


def test_a_run_gives_its_time_beside_the_plans_estimate():
    summary = RunSummary(Path("runs/x"), total=10, skipped=0, ran=10, failed=0,
                         model_calls=0, cache_hits=0, seconds=12.0, estimate=10.0)  # fmt: skip
    assert str(report.describe_run(summary)).endswith(
        "no model calls. They took 12 s; the plan estimated 10 s."
    )
