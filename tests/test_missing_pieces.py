"""A missing optional piece makes the tests that need it skip, never fail; CI
(HASBENCH_REQUIRE_ALL=1) turns any skip into a failed run."""

import os
import re
import subprocess
import sys

from pieces import path_without

from hasbench.paths import REPO_ROOT

PLAYBOOKS = "tests/participants/playbooks/test_marble_playbooks.py"


def pytest_run(tmp_path, *args, require_all=False):
    env = {**os.environ, "PATH": path_without("bwrap", tmp_path)}
    env.pop("HASBENCH_REQUIRE_ALL", None)
    if require_all:
        env["HASBENCH_REQUIRE_ALL"] = "1"
    argv = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args]
    return subprocess.run(argv, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)


def test_the_coding_playbook_tests_skip_without_bubblewrap(tmp_path):
    done = pytest_run(tmp_path, PLAYBOOKS, "-k", "coding")
    assert done.returncode == 0, done.stdout[-3000:]
    counts = dict(
        (kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|skipped|failed)", done.stdout)
    )
    assert counts == {"passed": 4, "skipped": 6}, done.stdout[-3000:]
    assert done.stdout.count("bubblewrap cannot sandbox here: bwrap not found on PATH") == 6


def test_under_require_all_a_skip_fails_the_run(tmp_path):
    done = pytest_run(
        tmp_path, PLAYBOOKS, "-k", "registers_its_playbook and coding or sensitive_changes_desc",
        require_all=True,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    assert "HASBENCH_REQUIRE_ALL=1 but 1 test(s) skipped:" in done.stdout
    assert "sensitive_changes_described_in_the_task_succeed_without_people: " in done.stdout
