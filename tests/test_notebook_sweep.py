"""Notebook sweeps: ``hasbench notebook NAME --grid FILE`` runs one papermill run per
parameter set, each in its own folder, locally or on a Dask cluster, and resumes."""

import csv
import json
import re
import subprocess
import sys

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from hasbench.cli import main
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.paths import REPO_ROOT
from hasbench.runner.experiment import ExperimentError
from hasbench.runner.notebooks import find_notebook, load_grid, notebook_parameters

GRID = """\
fixed:
  domains: [mock]
vary:
  max_tasks_per_domain: [1, 2]
"""
FAILING = "sets:\n  - {domains: [nosuchdomain], max_tasks_per_domain: 1}\n"
"""A set whose notebook fails: no tasks to run."""
TABLES = ("table4.csv", "macro_deltas.csv", "safety_c.csv")


def summary(directory):
    with (directory / "summary.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Sweep rq1 over two tiny sets and one failing set with two local processes."""
    if "hasbench" not in KernelSpecManager().find_kernel_specs():
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "hasbench"],
            check=True,
        )
    root = tmp_path_factory.mktemp("sweep")
    grid = root / "grid.yaml"
    grid.write_text(GRID + FAILING, encoding="utf-8")
    status = main(["notebook", "rq1", "--grid", str(grid), "--output-dir", str(root / "local"),
                   "--workers", "2", "--quiet"])  # fmt: skip
    return {"root": root, "grid": grid, "local": root / "local", "status": status}


@pytest.mark.slow
def test_a_grid_runs_every_set_into_its_own_folder_and_writes_a_summary(swept, capsys):
    rows = summary(swept["local"])
    assert [(r["index"], r["status"]) for r in rows] == [("0", "ok"), ("1", "ok"), ("2", "failed")]
    assert swept["status"] == 1  # a failed set makes the sweep's exit status 1
    for row, tasks in zip(rows[:2], (1, 2), strict=True):
        assert json.loads(row["parameters"]) == {"domains": ["mock"], "max_tasks_per_domain": tasks}
        assert row["directory"].startswith(f"00{row['index']}-") and float(row["seconds"]) > 0
        folder = swept["local"] / row["directory"]
        assert (folder / "rq1_value_of_participation.ipynb").exists()
        assert (folder / "rq1_value_of_participation.html").exists()
        manifest = json.loads((folder / "outputs" / "manifest.json").read_text())
        assert manifest["parameters"]["max_tasks_per_domain"] == tasks  # its own outputs
        # the set's headline numbers, as its manifest gives them
        episodes = len(OFFLINE_AGENTS) * 2 * tasks  # agents × A1/A3 × tasks
        assert int(row["episodes"]) == manifest["episodes"] == episodes
        for name in ("pass1", "task_score", "pass1_delta", "ts_delta"):
            assert float(row[name]) == pytest.approx(manifest["headline"][name], abs=1e-4)
        assert (folder / "results").is_dir() and (folder / "outputs" / "table4.csv").exists()
    failed = rows[2]  # recorded with its reason (the notebook's exception), the others ran
    record = json.loads((swept["local"] / failed["directory"] / "run.json").read_text())
    assert failed["error"] and record["error"] == failed["error"] and ": " in failed["error"]
    assert not (swept["local"] / failed["directory"] / "outputs" / "table4.csv").exists()
    assert failed["pass1"] == ""  # a failed set has no numbers
    assert json.loads((swept["local"] / "summary.json").read_text())[2]["status"] == "failed"


@pytest.mark.slow
def test_a_rerun_skips_the_finished_sets_and_retries_the_failed_one(swept, capsys):
    rows = summary(swept["local"])
    records = {r["directory"]: (swept["local"] / r["directory"] / "run.json").read_text()
               for r in rows[:2]}  # fmt: skip
    capsys.readouterr()
    status = main(["notebook", "rq1", "--grid", str(swept["grid"]),
                   "--output-dir", str(swept["local"]), "--quiet"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1 and "ran 1, skipped 2 finished earlier, 1 failed" in out
    for directory, record in records.items():  # untouched: not run again
        assert (swept["local"] / directory / "run.json").read_text() == record
    assert summary(swept["local"])[:2] == rows[:2]


@pytest.mark.slow
def test_a_local_dask_cluster_sweep_gives_the_same_tables_as_the_local_one(swept):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    grid = swept["root"] / "ok.yaml"
    grid.write_text(GRID, encoding="utf-8")
    cluster = swept["root"] / "cluster"
    status = main(["notebook", "rq1", "--grid", str(grid), "--output-dir", str(cluster),
                   "--cluster", "local:2", "--quiet"])  # fmt: skip
    assert status == 0
    rows = summary(cluster)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    local = summary(swept["local"])[:2]
    assert [r["directory"] for r in rows] == [r["directory"] for r in local]  # same names
    for row in rows:
        for table in TABLES:
            ours = (cluster / row["directory"] / "outputs" / table).read_text()
            assert ours == (swept["local"] / row["directory"] / "outputs" / table).read_text()


@pytest.fixture(scope="module")
def rq1_parameters():
    return notebook_parameters(find_notebook("rq1"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("vary:\n  seed: [0]\nsets:\n  - {seed: 1}\n  - {sed: 2}\n",
         "sets[1].sed: the notebook has no such parameter (its parameters: agent_models,"),
        ("fixed:\n  domain: [mock]\nvary:\n  seed: [0, 1]\n", "fixed.domain: the notebook has no"),
        ("vary:\n  seed: 3\n", "vary.seed: expected a non-empty list of values, got 3"),
        ("vary:\n  seed: []\n", "vary.seed: expected a non-empty list"),
        ("sets:\n  - {seed: 1, output_dir: figures/x}\n",
         "sets[0].output_dir: set by the sweep (every run writes into its own folder)"),
        ("sets:\n  - seed\n", "sets[0]: expected a mapping of parameter -> value, got 'seed'"),
        ("sets: {seed: 1}\n", "sets: expected a list of parameter mappings"),
        ("vary:\n  seed: [0, 1]\nsets:\n  - {seed: 1}\n",
         "sets[0]: the same parameters as vary combination 1"),
        ("variations:\n  seed: [0]\n", "unknown key 'variations' (a grid has fixed, vary, sets)"),
        ("fixed:\n  seed: 1\n", "no parameter sets (give vary, sets or both)"),
        ("- {seed: 1}\n", "expected a mapping with fixed, vary, sets, got list"),
        ("vary: [seed\n", "not valid YAML"),
    ],
)  # fmt: skip
def test_a_bad_grid_is_an_error_naming_file_entry_and_field(tmp_path, rq1_parameters, text,
                                                            message):  # fmt: skip
    grid = tmp_path / "grid.yaml"
    grid.write_text(text, encoding="utf-8")
    with pytest.raises(ExperimentError) as caught:
        load_grid(grid, rq1_parameters)
    assert str(caught.value).startswith(f"{grid}: ") and message in str(caught.value)


def test_the_cli_reports_a_bad_grid_entry_before_running_anything(tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text("vary:\n  max_tasks: [1, 2]\n", encoding="utf-8")
    status = main(["notebook", "rq1", "--grid", str(grid), "--output-dir", str(tmp_path / "o")])
    assert status == 2
    assert f"{grid}: vary.max_tasks: the notebook has no such parameter" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_grid_that_expands_in_order_with_fixed_values_under_the_varied_ones(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("fixed: {seed: 0, domains: [mock]}\nvary: {seed: [1, 2], max_tasks_per_domain:"
                    " [3, 4]}\nsets:\n  - {domains: [retail]}\n", encoding="utf-8")  # fmt: skip
    assert load_grid(grid) == [
        {"seed": 1, "domains": ["mock"], "max_tasks_per_domain": 3},
        {"seed": 1, "domains": ["mock"], "max_tasks_per_domain": 4},
        {"seed": 2, "domains": ["mock"], "max_tasks_per_domain": 3},
        {"seed": 2, "domains": ["mock"], "max_tasks_per_domain": 4},
        {"seed": 0, "domains": ["retail"]},
    ]


def test_workers_and_cluster_need_a_grid(capsys):
    assert main(["notebook", "rq1", "--cluster", "local:2"]) == 2
    assert "--grid" in capsys.readouterr().err


def test_the_readme_grid_example_is_a_valid_rq1_grid(tmp_path, rq1_parameters):
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```yaml\n(# sweep\.yaml\n.*?)```", text, re.DOTALL)
    grid = tmp_path / "sweep.yaml"
    grid.write_text(example, encoding="utf-8")
    sets = load_grid(grid, rq1_parameters)
    assert len(sets) == 3 * 2 + 1 and all(s["domains"] == ["retail", "airline"] for s in sets)
