"""Sandboxed runs shared between processes: taken only for the very same run, never for a
run stopped at a limit, and from a folder no sandbox can see."""

import sys
from pathlib import Path

import pytest
from pieces import needs_bwrap

from hasbench.envs.coding import CodingEnvironment, shared_runs
from hasbench.envs.coding import environment as coding
from hasbench.envs.coding.sandbox import Limits
from hasbench.envs.coding.warm import WarmSandbox
from hasbench.runner import execution

REPO = {
    "pkg/__init__.py": "from pkg.core import add\n",
    "pkg/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
HIDDEN = """\
from pkg.core import add


def test_add():
    assert add(2, 2) == 4


def test_sub():
    from pkg.core import sub

    assert sub(3, 1) == 2
"""


@pytest.fixture
def folder(tmp_path):
    """Share runs through a fresh folder; forget every run before and after."""
    coding.clear_run_cache()
    assert shared_runs.share(tmp_path / "runs")
    yield tmp_path / "runs"
    shared_runs.share(None)
    coding.clear_run_cache()


@pytest.fixture
def runs(monkeypatch):
    """Counts the sandbox runs made from now on."""
    made: list[list[str]] = []
    run = WarmSandbox.run

    def counted(self, argv, workspace, **options):
        made.append(argv)
        return run(self, argv, workspace, **options)

    monkeypatch.setattr(WarmSandbox, "run", counted)
    return made


def fresh(files=REPO, hidden=HIDDEN, limits=None):
    return CodingEnvironment({p: t.encode() for p, t in files.items()}, hidden, limits=limits)


def outcome(env):
    hidden = env.hidden_results()
    return env.run_tests(), hidden.status, list(hidden.passed.items()), hidden.lines


@needs_bwrap
def test_another_process_takes_the_same_runs_from_the_folder(folder, runs):
    first = outcome(fresh())
    assert len(runs) == 2 and first[1] == "ran" and "1 passed" in first[0]
    coding.clear_run_cache()  # as in another process
    assert outcome(fresh()) == first
    assert len(runs) == 2  # neither suite ran again


@needs_bwrap
def test_a_changed_file_or_other_hidden_tests_run_again(folder, runs):
    outcome(fresh())
    coding.clear_run_cache()
    changed = fresh(
        {**REPO, "pkg/core.py": REPO["pkg/core.py"] + "\n\ndef sub(a, b):\n    return a - b\n"}
    )
    assert outcome(changed)[2] == [("test_add", True), ("test_sub", True)]
    more = HIDDEN + "\n\ndef test_more():\n    assert add(0, 0) == 0\n"
    assert outcome(fresh(hidden=more))[2] == [("test_add", True), ("test_sub", False),
                                              ("test_more", True)]  # fmt: skip
    assert len(runs) == 5  # the visible tests of the unchanged workspace were shared


@needs_bwrap
def test_a_run_stopped_at_a_limit_is_not_shared(folder, runs):
    spin = {**REPO, "tests/test_core.py": "def test_spin():\n    while True:\n        pass\n"}
    env = fresh(spin, limits=Limits(cpu_seconds=1, wall_seconds=20))
    with pytest.raises(Exception, match="CPU limit"):
        env.run_tests()
    assert not list(folder.rglob("*.json"))
    coding.clear_run_cache()
    with pytest.raises(Exception, match="CPU limit"):
        fresh(spin, limits=Limits(cpu_seconds=1, wall_seconds=20)).run_tests()
    assert len(runs) == 2


def test_a_folder_the_sandbox_binds_is_never_shared(tmp_path):
    try:
        assert not shared_runs.share(Path(sys.prefix) / "hasbench-runs")
        assert not shared_runs.sharing()
        assert shared_runs.share(tmp_path)
    finally:
        shared_runs.share(None)


@needs_bwrap
def test_no_run_can_see_the_shared_runs(folder):
    outcome(fresh())
    entry = next(folder.rglob("*.json"))
    env = fresh()
    for command in (f"ls {folder}", f"cat {entry}"):
        assert "exit code 0" not in env.run_command(command)


def test_episodes_run_for_a_store_share_their_runs_under_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "CACHE_DIR", tmp_path)
    execution._share_sandbox_runs.cache_clear()
    try:
        execution._share_sandbox_runs()
        assert shared_runs._FOLDER == [(tmp_path / execution.SHARED_RUNS).resolve()]
    finally:
        execution._share_sandbox_runs.cache_clear()
        shared_runs.share(None)
