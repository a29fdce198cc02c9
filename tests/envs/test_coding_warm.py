"""Warm sandboxes: a run in a warm worker gives what a cold run gives, is held to the same
limits, and nothing it does reaches the worker or the next run."""

import sys
import textwrap
from pathlib import Path

import pytest

from hasbench.envs.coding import CodingEnvironment
from hasbench.envs.coding import warm as warm_workers
from hasbench.envs.coding.sandbox import Limits, Sandbox
from hasbench.envs.coding.warm import WarmSandbox
from tests.pieces import needs_bwrap

pytestmark = needs_bwrap

FAST = Limits(cpu_seconds=2, wall_seconds=8, output_bytes=1 << 20, processes=32)
REPO = {
    "pkg/__init__.py": "from pkg.core import add\n",
    "pkg/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": (
        "import sys\n\nfrom pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_wrong():\n    assert add(1, 1) == 3\n\n\n"
        "def test_path():\n    print(sys.path[:2])\n    assert sys.path[0] == '/workspace'\n"
    ),
}
HIDDEN = "from pkg.core import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    for path, text in REPO.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


PYTEST = [sys.executable, "-m", "pytest", "-q", "-rfE", "--tb=short", "-p", "no:cacheprovider",
          "--no-header", "--color=no", "tests"]  # fmt: skip
NESTED = (
    "import pytest\n\n\ndef test_nested(pytestconfig, tmp_path):\n"
    "    print(pytestconfig.invocation_params.args, pytestconfig.invocation_params.dir)\n"
    "    (tmp_path / 'test_inner.py').write_text('def test_inner():\\n    assert False\\n')\n"
    "    assert pytest.main(['-q', '-p', 'no:cacheprovider', str(tmp_path)]) == 1\n"
)
"""A session that starts another: the outer one takes the worker's prepared configuration,
the inner one builds its own (both as in a new interpreter)."""


@pytest.mark.parametrize(
    "argv",
    [PYTEST, [*PYTEST[:-1], "tests/test_core.py::test_add"], ["ls", "-R"],
     python("import sys; print(sys.argv, sorted(sys.path)[:1]); sys.exit(3)"),
     [*PYTEST[:-1], "-p", "no:warnings", "-W", "error", "tests"],
     [*PYTEST[:-1], "--lf", "tests"], [*PYTEST[:-1], "--no-such-option", "tests"],
     [*PYTEST[:-1], "-s", "tests/test_nested.py"], [*PYTEST[:-1], "--co", "tests"]],
    ids=["pytest", "pytest-node", "ls", "python", "other-plugins", "blocked-plugin-option",
         "usage-error", "nested-session", "collect-only"],
)  # fmt: skip
def test_a_warm_run_gives_what_a_cold_run_gives(workspace, argv):
    (workspace / "tests" / "test_nested.py").write_text(NESTED)
    cold = Sandbox(FAST).run(argv, workspace, writable=False)
    warm = [WarmSandbox(FAST).run(argv, workspace, writable=False) for _ in range(2)]
    for run in warm:
        assert (run.status, run.exit_code, _timeless(run.output)) == (
            cold.status, cold.exit_code, _timeless(cold.output)
        )  # fmt: skip


def test_the_hidden_tests_give_the_same_verdicts_warm_and_cold():
    env = CodingEnvironment({p: t.encode() for p, t in REPO.items()}, HIDDEN, limits=FAST)
    warm = env.hidden_results()
    env.sandbox, env._hidden = Sandbox(FAST), None
    env.workspace.write("pkg/extra.py", b"x = 1\n")  # another state: not cached
    cold = env.hidden_results()
    assert warm.status == cold.status == "ran"
    assert warm.passed == cold.passed == {"test_add": True}
    assert warm.lines == cold.lines


def test_each_run_sees_exactly_its_own_files_and_modes(tmp_path):
    states = [
        {"a/b.py": ("one", 0o644), "c.py": ("two", 0o644)},
        {"a": ("a file where a folder was", 0o644), "d/e/f.py": ("deep", 0o755),
         "c.py": ("two", 0o755)},
        {"a/b.py": ("one again", 0o644), "c.py": ("changed", 0o644)},
        {},
    ]  # fmt: skip
    folders = []
    for number, files in enumerate(states):
        folder = tmp_path / str(number)
        folder.mkdir(mode=0o755)
        for path, (text, mode) in files.items():
            (folder / path).parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            (folder / path).write_text(text)
            (folder / path).chmod(mode)
        folders.append(folder)
    listing = python(
        """
        import os
        for root, dirs, files in sorted(os.walk(".")):
            for name in sorted(dirs + files):
                path = os.path.join(root, name)
                kind = "folder" if os.path.isdir(path) else open(path).read()
                print(path, oct(os.stat(path).st_mode & 0o777), kind)
        """
    )
    sandbox = WarmSandbox(FAST)
    sandbox.run(["true"], folders[0], writable=False)
    workers = list(warm_workers._ALL)
    for folder in [*folders, *folders]:
        hot = sandbox.run(listing, folder, writable=False)
        cold = Sandbox(FAST).run(listing, folder, writable=False)
        assert hot.status == cold.status == "ok"
        assert hot.output == cold.output
    assert warm_workers._ALL == workers  # every run was warm, in the same worker


def test_a_writable_run_changes_the_workspace_and_a_read_only_one_cannot(workspace):
    sandbox = WarmSandbox(FAST)
    wrote = sandbox.run(python("open('new.txt', 'w').write('made')"), workspace, writable=True)
    assert wrote.status == "ok" and (workspace / "new.txt").read_text() == "made"
    assert (workspace / "pkg" / "core.py").read_text() == REPO["pkg/core.py"]
    refused = sandbox.run(python("open('x.txt', 'w').write('no')"), workspace, writable=False)
    assert refused.status == "failed" and "Read-only file system" in refused.output
    assert not (workspace / "x.txt").exists()


def test_nothing_a_run_leaves_behind_reaches_the_next_run(workspace):
    sandbox = WarmSandbox(FAST)
    leave = python(
        """
        import os, time
        open("/tmp/left.txt", "w").write("left")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(30)
            os._exit(0)
        print("left a process behind")
        """
    )
    assert sandbox.run(leave, workspace, writable=False).status == "ok"
    look = python(
        """
        import os
        mine = {1, os.getpid(), os.getppid()}
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine))
        print(os.listdir("/tmp"))
        """
    )
    seen = sandbox.run(look, workspace, writable=False)
    assert seen.status == "ok" and seen.output.splitlines() == ["[]", "[]"]


def test_a_run_cannot_reach_the_workers_memory_or_descriptors(workspace):
    probe = python(
        """
        import os
        try:
            open(f"/proc/{os.getppid()}/mem", "rb").read(1)
            print("read the worker's memory")
        except OSError as exc:
            print("memory:", type(exc).__name__)
        open_fds = []
        for fd in range(3, 256):
            try:
                os.fstat(fd)
                open_fds.append(fd)
            except OSError:
                pass
        print("descriptors:", open_fds)
        """
    )
    result = WarmSandbox(FAST).run(probe, workspace, writable=False)
    assert result.output.splitlines() == ["memory: PermissionError", "descriptors: []"]


def test_a_run_that_kills_its_worker_is_done_cold(workspace):
    kill = python("import os, signal; os.kill(os.getppid(), signal.SIGKILL); print('after')")
    warm = WarmSandbox(FAST).run(kill, workspace, writable=False)
    cold = Sandbox(FAST).run(kill, workspace, writable=False)
    assert (warm.status, warm.output) == (cold.status, cold.output)
    assert WarmSandbox(FAST).run(["true"], workspace, writable=False).status == "ok"


@pytest.mark.parametrize(
    ("code", "status"),  # the statuses that may end the run
    [
        ("import os\nwhile True:\n    os.fork()", ["process_limit"]),
        ("block = bytearray(4 * 1024**3)", ["memory_limit"]),
        ("while True:\n    pass", ["cpu_limit", "timeout"]),  # timeout: on a loaded machine
        ("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 2**20)", ["output_limit"]),
        ("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=2)", ["failed"]),
        ("open('/usr/escape.txt', 'w').write('no')", ["failed"]),
    ],
    ids=["fork-bomb", "memory", "cpu", "output", "network", "system-write"],
)
def test_a_warm_run_is_held_to_the_same_limits(workspace, code, status):
    result = WarmSandbox(FAST).run(python(code), workspace, writable=True)
    assert result.status in status, result.output[-500:]
    assert not Path("/usr/escape.txt").exists()
    after = WarmSandbox(FAST).run(["true"], workspace, writable=False)
    assert after.status == "ok"


def test_a_test_that_loops_is_stopped_in_the_warm_interpreter(workspace):
    loop = "def test_loop():\n    while True:\n        pass\n"
    (workspace / "tests" / "test_loop.py").write_text(loop)
    result = WarmSandbox(FAST).run([*PYTEST[:-1], "tests/test_loop.py"], workspace, writable=False)
    assert result.status in ("cpu_limit", "timeout")


def _timeless(text: str) -> str:
    from hasbench.envs.coding.environment import normalize_output

    return normalize_output(text)
