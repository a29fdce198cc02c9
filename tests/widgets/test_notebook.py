"""The exploration notebook: thin, stripped, and runs offline on its own small run."""

from pathlib import Path

import nbformat
import papermill
import pytest

from hasbench.runner import load_results

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "explore_traces.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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


@pytest.mark.slow
def test_notebook_runs_offline_and_shows_the_three_widgets(tmp_path, hasbench_kernel):
    store = tmp_path / "store"
    out = papermill.execute_notebook(
        str(NOTEBOOK), str(tmp_path / "out.ipynb"), kernel_name=hasbench_kernel,
        parameters={"task_ids": ["mock_C_001"], "agents": ["scripted:strong"],
                    "results_dir": str(store)},
        cwd=str(NOTEBOOK.parent), progress_bar=False,
    )  # fmt: skip
    results = load_results(store)
    assert sorted(results["setting"]) == ["A1/full", "A3/full"]
    assert results["error"].isna().all()
    shown = [
        output["data"]["text/plain"]
        for cell in out["cells"]
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]
    assert len(shown) == 2
    assert shown[0].startswith("HBox(children=(TraceViewer(")  # with its GraphViewer
    assert shown[1].startswith("RunBrowser(")
