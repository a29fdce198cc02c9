import re
import subprocess
import sys

import nbformat
import pandas as pd
import papermill
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from hasbench.experiments.common import model_label
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.paths import REPO_ROOT
from hasbench.runner import ExperimentError, registered_notebooks, run_notebook

NOTEBOOK = REPO_ROOT / "notebooks" / "rq1_value_of_participation.ipynb"


@pytest.fixture(scope="module", autouse=True)
def hasbench_kernel():
    if "hasbench" not in KernelSpecManager().find_kernel_specs():
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "hasbench"],
            check=True,
        )


def test_committed_notebook_is_thin_and_stripped():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    for name in ("agent_models", "user_model", "judge_model", "domains",
                 "max_tasks_per_domain", "seed", "output_dir", "results_dir"):  # fmt: skip
        assert f"{name} =" in code[0].source
    assert all(not c.outputs and c.execution_count is None for c in code)
    assert sum(len(c.source.splitlines()) for c in code) < 40  # logic lives in hasbench
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "**Figure.**" in markdown  # a caption cell under the figure
    assert "report.glossary(" in code[-1].source


@pytest.mark.parametrize("name", sorted(registered_notebooks()))
def test_every_parameter_of_the_parameters_cell_is_seen_by_papermill(name):
    path = registered_notebooks()[name]
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assigned = re.findall(r"^(\w+) =", cell.source, flags=re.MULTILINE)
    assert list(papermill.inspect_notebook(str(path))) == assigned


def test_an_unknown_parameter_is_an_error_naming_the_known_ones(tmp_path):
    with pytest.raises(ExperimentError, match="no parameter 'max_tasks'.*max_tasks_per_domain"):
        run_notebook("rq1", {"max_tasks": 2}, output_dir=tmp_path)


@pytest.mark.slow
def test_hasbench_notebook_shows_progress_and_writes_a_readable_report(tmp_path):
    out, results, executed_dir = tmp_path / "figures", tmp_path / "results", tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "hasbench.cli", "notebook", "rq1",
         "-p", "domains", "[mock, retail]", "-p", "max_tasks_per_domain", "4",
         "-p", "output_dir", str(out), "-p", "results_dir", str(results),
         "--output-dir", str(executed_dir)],
        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    terminal = done.stderr
    assert "cell 1 of 10: agent_models" in terminal and "cell 10 of 10: report.glossary" in terminal
    agents = len(OFFLINE_AGENTS)  # the plan times two tasks of each domain whole: 8 episodes
    timed = ", ".join(rf"{re.escape(m)} \d+ ms over 8 episodes" for m in OFFLINE_AGENTS)
    assert re.search(rf"Plan\. rq1: {16 * agents} episodes \(8 tasks × {agents} agent backends × "
                     rf"2 settings × 1 seed\); 0 already in the results store\. Timed episodes "
                     rf"per backend \({timed}\): the other {8 * agents} should "
                     r"take about", terminal)  # fmt: skip
    left = 8 * agents
    assert "rq1: 100%" in terminal and f"{left}/{left}" in terminal  # the live bar of the run
    assert re.search(rf"rq1: ran {left} episodes in [\d.]+ m?s \(the plan estimated ", terminal)
    executed = executed_dir / NOTEBOOK.name
    assert f"executed notebook: {executed}" in done.stdout
    for name in ("table4", "macro_deltas", "safety_c", "rescue"):
        for ext in ("csv", "md", "tex"):
            assert (out / f"{name}.{ext}").stat().st_size > 0, f"{name}.{ext}"
    for ext in ("png", "pdf", "csv"):
        assert (out / f"rq1_deltas.{ext}").exists()
    table4 = pd.read_csv(out / "table4.csv")
    assert set(table4["domain"]) == {"mock", "retail"}
    assert set(table4["model"]) == {model_label(m) for m in OFFLINE_AGENTS}
    episodes = len(OFFLINE_AGENTS) * 2 * 4 * 2  # agents × domains × tasks × {A1, A3}
    assert len(list((results / "episodes").glob("*.json"))) == episodes
    nb = nbformat.read(executed, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    plain = "\n".join(str(o.get("text", "")) + o.get("data", {}).get("text/plain", "")
                      for o in outputs)  # fmt: skip
    assert "standing in for language models" in plain
    assert f"rq1: {left} of {left} episodes in" in plain  # the progress line's final state
    assert f"Ran {left} of {2 * left} episodes; {left} were already in the results store" in plain
    assert re.search(r"They took [\d.]+ m?s; the plan estimated ", plain)
    assert not re.search(r" at 0x[0-9a-f]+>|RunSummary\(|Plan\(", plain)  # no raw reprs
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    tables = [h for h in html if "<table" in h]
    # the episodes in error (none here: only headings), then the four result tables
    assert len(tables) == 5 and all("blank level0" not in t for t in tables)  # no index
    assert ">error_kind</th>" in tables[0] and "<td" not in tables[0]
    assert any("data:image/png;base64," in h for h in html)  # the figure, embedded
    report = executed.with_suffix(".html").read_text(encoding="utf-8")
    assert "Table 4" in report and "data:image/png;base64," in report


def table_files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.suffix in (".csv", ".md", ".tex")}  # fmt: skip


@pytest.mark.slow
def test_a_second_grid_in_the_same_results_folder_never_enters_the_first_ones_tables(tmp_path):
    """The notebook, then again with fewer tasks, another simulator and another seed into
    the same results folder: the second run's tables and manifest are exactly its own grid's;
    the first grid again gives its tables back byte for byte without running an episode."""
    import json

    from hasbench.experiments import rq1

    results = tmp_path / "results"
    guarded = "scripted:user-guarded"

    def notebook(name, **parameters):
        out = tmp_path / name
        parameters = {"domains": ["mock"], **parameters, "output_dir": str(out),
                      "results_dir": str(results)}  # fmt: skip
        run_notebook("rq1", parameters, output_dir=tmp_path / f"executed-{name}", progress=False)
        return out, json.loads((out / "manifest.json").read_text())

    first, _ = notebook("first", max_tasks_per_domain=4)
    second, manifest = notebook("second", max_tasks_per_domain=2, user_model=guarded, seed=1)
    alone = rq1.run(domains=["mock"], max_tasks_per_domain=2, user_model=guarded, seed=1,
                    output_dir=tmp_path / "alone", results_dir=tmp_path / "fresh",
                    progress=False)  # fmt: skip
    assert table_files(second) == table_files(tmp_path / "alone")
    assert pd.read_csv(second / "table4.csv")["tasks"].tolist() == [2] * len(OFFLINE_AGENTS)
    assert manifest["episodes"] == len(alone["results"]) == 2 * 2 * len(OFFLINE_AGENTS)
    assert manifest["episode_keys"] == sorted(alone["results"]["key"])
    assert manifest["backends"]["user"] == [guarded]
    assert manifest["parameters"]["user_model"] == guarded and manifest["parameters"]["seed"] == 1
    records = sorted((results / "episodes").glob("*.json"))
    again, manifest = notebook("again", max_tasks_per_domain=4)
    assert table_files(again) == table_files(first)
    assert sorted((results / "episodes").glob("*.json")) == records  # not a single new one
    assert manifest["episodes_run"] == 0


@pytest.mark.slow
def test_a_bad_parameter_value_is_one_line_naming_notebook_parameter_and_value(tmp_path, capsys):
    from hasbench.cli import main

    status = main(["notebook", "rq1", "-p", "max_tasks_per_domain", "0",
                   "-p", "results_dir", str(tmp_path / "runs"),
                   "-p", "output_dir", str(tmp_path / "out"),
                   "--output-dir", str(tmp_path / "executed"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1
    assert "rq1: parameter max_tasks_per_domain = 0: expected a whole number" in err
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_a_benchmark_that_is_not_a_built_folder_is_one_line_naming_it(tmp_path, capsys):
    from hasbench.cli import main

    status = main(["notebook", "rq1", "-p", "benchmark", str(tmp_path / "nowhere"),
                   "-p", "results_dir", str(tmp_path / "runs"),
                   "--output-dir", str(tmp_path / "executed"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1
    assert f"rq1: parameter benchmark = '{tmp_path / 'nowhere'}': " in err
    assert "no such folder" in err and not (tmp_path / "runs").exists()
