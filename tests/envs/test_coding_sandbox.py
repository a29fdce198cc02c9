"""The bubblewrap sandbox: hostile code is contained, reported by type, and leaves the host
as it was; without bubblewrap nothing runs unless the unsafe flag says so."""

import os
import socket
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from hasbench.envs.coding import sandbox as sb
from hasbench.envs.coding.sandbox import LIMIT_STATUSES, Limits, Sandbox, SandboxUnavailable

pytestmark = pytest.mark.skipif(
    sb.bubblewrap_problem() is not None,
    reason=f"bubblewrap cannot sandbox here: {sb.bubblewrap_problem()}",
)

FAST = Limits(cpu_seconds=2, wall_seconds=6, output_bytes=1 << 20, processes=32)


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    folder.chmod(0o755)
    return folder


def run_python(code: str, workspace: Path, writable: bool = True, limits: Limits = FAST):
    return Sandbox(limits).run(
        [sys.executable, "-c", textwrap.dedent(code)], workspace, writable=writable
    )


def test_a_run_sees_the_workspace_and_can_write_only_there(workspace, tmp_path):
    outside = tmp_path / f"escape-{uuid.uuid4().hex}.txt"
    result = run_python(
        f"""
        import os
        open("inside.txt", "w").write("ok")
        print(os.getcwd())
        try:
            open({str(outside)!r}, "w").write("escaped")
        except OSError as exc:
            print("denied:", type(exc).__name__)
        """,
        workspace,
    )
    assert result.status == "ok", result.output
    assert result.output.splitlines()[0] == "/workspace"
    assert "denied:" in result.output
    assert (workspace / "inside.txt").read_text() == "ok"
    assert not outside.exists()


def test_an_interpreter_installed_under_tmp_stays_visible(workspace, tmp_path, monkeypatch):
    # A checkout under /tmp has its .venv there; the sandbox's fresh /tmp must not hide it.
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "marker.txt").write_text("visible")
    real_roots = sb._python_roots
    monkeypatch.setattr(sb, "_python_roots", lambda: [*real_roots(), str(venv)])
    result = run_python(f"print(open({str(venv / 'marker.txt')!r}).read())", workspace)
    assert result.status == "ok", result.output
    assert result.output.strip() == "visible"


def test_a_read_only_run_cannot_write_the_workspace(workspace):
    result = run_python('open("x.txt", "w").write("no")', workspace, writable=False)
    assert result.status == "failed"
    assert "Read-only file system" in result.output
    assert not (workspace / "x.txt").exists()


def test_writing_system_paths_fails(workspace):
    result = run_python('open("/usr/escape.txt", "w").write("no")', workspace)
    assert result.status == "failed"
    assert not Path("/usr/escape.txt").exists()


def test_the_users_home_is_not_visible(workspace):
    home = Path.home()
    canary = home / f".hasbench-canary-{uuid.uuid4().hex}"
    canary.write_text("secret")
    try:
        result = run_python(
            f"""
            import os
            print(sorted(os.listdir({str(home)!r})) if os.path.isdir({str(home)!r}) else "no home")
            print(open({str(canary)!r}).read())
            """,
            workspace,
        )
    finally:
        canary.unlink()
    assert result.status == "failed"
    listing = result.output.splitlines()[0]
    assert canary.name not in listing
    assert "secret" not in result.output
    assert "FileNotFoundError" in result.output


def test_no_network_even_to_the_hosts_loopback(workspace):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted = []

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    result = run_python(
        f"""
        import socket
        socket.create_connection(("127.0.0.1", {port}), timeout=2)
        print("connected")
        """,
        workspace,
    )
    thread.join()
    server.close()
    assert result.status == "failed"
    assert "connected" not in result.output
    assert "ConnectionRefusedError" in result.output
    assert accepted == []


def test_a_fork_bomb_hits_the_process_limit(workspace):
    result = run_python(
        """
        import os
        while True:
            os.fork()
        """,
        workspace,
    )
    assert result.status == "process_limit", result.output[-500:]
    assert result.status in LIMIT_STATUSES
    assert _sandbox_processes() == []


def test_allocating_4_gb_hits_the_memory_limit(workspace):
    result = run_python("block = bytearray(4 * 1024**3)", workspace)
    assert result.status == "memory_limit"


def test_an_endless_loop_is_stopped(workspace):
    limits = Limits(cpu_seconds=1, wall_seconds=3)
    result = run_python("while True:\n    pass", workspace, limits=limits)
    assert result.status in ("cpu_limit", "timeout")
    assert _sandbox_processes() == []


def test_a_sleeping_process_is_killed_at_the_wall_time_limit(workspace):
    limits = Limits(wall_seconds=1)
    result = run_python("import time\nprint('start', flush=True)\ntime.sleep(60)", workspace,
                        limits=limits)  # fmt: skip
    assert result.status == "timeout"
    assert result.exit_code is None
    assert "start" in result.output
    assert result.seconds < 10


def test_printing_100_mb_is_cut_at_the_output_limit(workspace):
    limits = Limits(output_bytes=64 << 10)
    result = run_python(
        "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))", workspace,
        limits=limits,
    )  # fmt: skip
    assert result.status == "output_limit"
    assert len(result.output) == 64 << 10


def test_without_bubblewrap_code_does_not_run(monkeypatch, workspace):
    monkeypatch.setattr(sb, "bubblewrap_problem", lambda: "bwrap not found on PATH")
    monkeypatch.delenv(sb.UNSAFE_ENV, raising=False)
    with pytest.raises(SandboxUnavailable, match="refusing to run code without a sandbox"):
        run_python("open('ran.txt', 'w')", workspace)
    assert not (workspace / "ran.txt").exists()
    assert sb.sandbox_mode().startswith("unavailable: bwrap not found")


def test_the_unsafe_flag_runs_unsandboxed_and_says_so(monkeypatch, workspace):
    monkeypatch.setattr(sb, "bubblewrap_problem", lambda: "bwrap not found on PATH")
    monkeypatch.setenv(sb.UNSAFE_ENV, "1")
    result = run_python("import os; print(os.getcwd())", workspace)
    assert result.status == "ok"
    assert result.output.strip() == str(workspace)
    assert sb.sandbox_mode() == f"unsafe: no sandbox ({sb.UNSAFE_ENV}=1)"


def _sandbox_processes(wait: float = 3.0) -> list[int]:
    """Processes of this process's sandbox user id (root callers) still alive after the
    kernel had up to ``wait`` seconds to finish tearing down the killed pid namespace."""
    if os.geteuid() != 0:
        return []
    uid = sb.UID_BASE + os.getpid() % 1_000_000
    deadline = time.monotonic() + wait
    while True:
        alive = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and entry.stat().st_uid == uid:
                    alive.append(int(entry.name))
            except FileNotFoundError:
                continue
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)
