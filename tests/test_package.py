import subprocess
import sys

import pytest


def test_import_makes_no_network_connection():
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise RuntimeError('network access during import')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "import hasbench, hasbench.scenario, hasbench.trace, hasbench.envs.base\n"
        "print(hasbench.__version__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_environment_yml_declares_the_same_dependencies_as_pyproject():
    import re
    import tomllib
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["dev"]
    env = yaml.safe_load((root / "environment.yml").read_text())["dependencies"]
    conda = [d for d in env if isinstance(d, str)]
    pip = next(d["pip"] for d in env if isinstance(d, dict))

    def name(spec):
        return re.split(r"[<>=!]", spec, maxsplit=1)[0].strip().lower()

    declared = {
        name(d): d.replace(" ", "") for d in conda + pip if name(d) not in {"python", "pip"}
    }
    assert declared == {name(d): d.replace(" ", "") for d in wanted}


def test_the_notebook_api_exports_what_a_notebook_needs():
    import hasbench as hb

    for name in ("load_task", "Setting", "Backends", "run_episode", "run_experiment",
                 "load_results", "TraceViewer", "GraphViewer", "RunBrowser"):  # fmt: skip
        assert name in hb.__all__ and getattr(hb, name) is not None
    with pytest.raises(AttributeError):
        hb.no_such_name  # noqa: B018


def test_task_paths_relative_to_the_repository_work_from_any_directory(tmp_path, monkeypatch):
    import hasbench as hb

    monkeypatch.chdir(tmp_path)
    assert hb.load_task("data/tasks/examples.yaml", "mock_A_001").task_id == "mock_A_001"
    with pytest.raises(KeyError, match="no task 'mock_Z_999'"):
        hb.load_task("data/tasks/examples.yaml", "mock_Z_999")


def test_run_episode_works_inside_a_running_event_loop():
    import asyncio

    import hasbench as hb

    task = hb.load_task("data/tasks/examples.yaml", "mock_C_001")

    async def in_a_notebook_cell():
        return hb.run_episode(task, hb.Setting(agency="A3"), seed=0)

    inside = asyncio.run(in_a_notebook_cell())
    outside = hb.run_episode(task, hb.Setting(agency="A3"), seed=0)
    assert inside.termination.reason == "agent_done"
    assert inside.to_jsonl() == outside.to_jsonl()


def test_running_a_notebook_does_not_build_the_iri_grammar():
    """papermill and nbconvert load jsonschema; the IRI grammar it would build costs seconds
    in every process that runs or exports a notebook. Notebook files still validate, and
    the grammar still imports for code that asks for it."""
    code = (
        "import sys\n"
        "from hasbench.runner.notebooks import find_notebook, notebook_parameters\n"
        "source = find_notebook('rq1')\n"
        "assert notebook_parameters(source)\n"
        "import nbformat\n"
        "nbformat.validate(nbformat.read(source, as_version=4))\n"
        "assert 'rfc3987_syntax' not in sys.modules, 'the IRI grammar was built'\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('rfc3987_syntax'):\n"
        "    import rfc3987_syntax\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
