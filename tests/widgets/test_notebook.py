"""The exploration notebook: thin, stripped, runs offline, and its executed copy is a report."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from hasbench.runner import load_results, run_notebook

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "explore_traces.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_notebook_is_thin_and_stripped():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    for name in ("task_ids", "agents", "agency_levels", "seed", "results_dir = None"):
        assert name in params[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    assert sum(len(c.source.splitlines()) for c in code) <= 25
    assert nb.metadata["kernelspec"]["name"] == "hasbench"
    intro = nb.cells[0].source
    assert "HTML export" in intro and "without a kernel" in intro  # says how to see widgets


@pytest.mark.slow
def test_notebook_runs_offline_and_its_executed_copy_is_a_report(tmp_path, hasbench_kernel):
    store = tmp_path / "store"
    executed = run_notebook(
        "explore_traces",
        {"task_ids": ["mock_C_001"], "agents": ["scripted:strong"], "results_dir": str(store)},
        output_dir=tmp_path / "out",
        progress=False,
    )
    results = load_results(store)
    assert sorted(results["setting"]) == ["A1/full", "A3/full"]
    assert results["error"].isna().all()
    out = nbformat.read(executed, as_version=4)
    outputs = [o for cell in out.cells for o in cell.get("outputs", [])]
    shown = [o["data"]["text/plain"] for o in outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(shown) == 2
    assert shown[0].startswith("EpisodeView(children=(TraceViewer(")  # with its GraphViewer
    assert shown[1].startswith("RunBrowser(")
    plain = [o.get("data", {}).get("text/plain", "") for o in outputs]
    assert not [p for p in plain if re.search(r" at 0x[0-9a-f]+>", p)]  # no stale reprs
    html_outputs = [o["data"].get("text/html", "") for o in outputs if "data" in o]
    table = next(h for h in html_outputs if "<table" in h)
    assert "Agent backend" in table and "Task Score" in table and '<th class="blank' not in table
    assert "**Glossary**" in json.dumps(outputs)
    states = out.metadata["widgets"][WIDGET_STATE]["state"]
    assert len(states) > 20  # the widgets' state is saved with the notebook
    html = executed.with_suffix(".html").read_text(encoding="utf-8")
    assert WIDGET_STATE in html and WIDGET_VIEW in html  # widgets render without a kernel
    assert "hb-graph-figure" in html and "<svg" in html
