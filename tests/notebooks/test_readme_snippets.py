"""The README's notebook examples run in a real kernel started in notebooks/."""

import re
import subprocess
import sys

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

from hasbench.paths import REPO_ROOT

WIDGET = "application/vnd.jupyter.widget-view+json"


def readme_cells() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python notebook\n(.*?)```", text, re.DOTALL)


@pytest.fixture(scope="module", autouse=True)
def hasbench_kernel():
    if "hasbench" not in KernelSpecManager().find_kernel_specs():
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "hasbench"],
            check=True,
        )


def test_readme_has_notebook_examples():
    assert len(readme_cells()) >= 3


@pytest.mark.slow
def test_readme_notebook_examples_run_from_the_notebooks_folder():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in readme_cells()])
    client = NotebookClient(
        nb, kernel_name="hasbench", timeout=300,
        resources={"metadata": {"path": str(REPO_ROOT / "notebooks")}},
    )  # fmt: skip
    client.execute()  # raises CellExecutionError on the first failing cell
    first, second, third = (cell.outputs for cell in nb.cells[:3])
    html = "".join(o.get("data", {}).get("text/html", "") for o in first)
    assert "<table" in html and "channel_request" in html  # the trace as a table
    (shown,) = [o for o in second if WIDGET in o.get("data", {})]
    assert shown["data"]["text/plain"].startswith("EpisodeView(children=(TraceViewer(")
    (console,) = [o for o in third if WIDGET in o.get("data", {})]
    assert console["data"]["text/plain"].startswith("HumanConsole(")  # waiting for the person
