"""Running project code contained: bubblewrap plus resource limits.

Every execution of a task's or an agent's code goes through :meth:`Sandbox.run`.
bubblewrap starts the command in fresh pid, network, ipc and uts namespaces (the network
namespace has nothing but its own loopback), on a root built from read-only binds of the
system (``/usr``) and of the Python installation, with a fresh ``/proc`` and ``/dev``, a
size-limited ``/tmp`` and the workspace bound at ``/workspace``, read-only or writable: it
is the only host path a run can write. Inside, ``prlimit`` caps CPU seconds, address space,
file size, open files and processes; the host side caps wall time and captured output. The
process group is killed when a run ends, however it ends, and the pid namespace with it.

When the caller is root, bubblewrap runs privileged (without a user namespace) and starts
the command through ``setpriv`` as an unprivileged user id of this process, because root is
exempt from the process limit; otherwise bubblewrap creates a user namespace.

A run may be given a private channel (``secret``): the secret arrives on its standard input
and it answers through a pipe of its own, named by :data:`CHANNEL_VARIABLE`, which the
caller reads apart from the run's output (:attr:`RunResult.channel`). The hidden tests report
their verdicts this way (:mod:`hasbench.envs.coding.hidden`).

bubblewrap 0.7 or newer is needed (for the size of ``/tmp``; Debian 12 ships 0.8). Without
a working bubblewrap nothing runs: :class:`SandboxUnavailable` says why and how to
fix it. Setting ``HASBENCH_UNSAFE_NO_SANDBOX=1`` (the CLI's ``--unsafe-no-sandbox``) runs
commands directly on the host with the same limits but no isolation; :func:`sandbox_mode`
reports which applies, and episodes record it in the trace header.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

UNSAFE_ENV = "HASBENCH_UNSAFE_NO_SANDBOX"
"""Environment variable that, set to 1, runs code without a sandbox (recorded in traces)."""
WORKSPACE = "/workspace"
"""Where the workspace appears inside the sandbox."""
CHANNEL_VARIABLE = "HASBENCH_RESULTS_FD"
"""Names the file descriptor of a run's private channel (when it was given a secret)."""
UID_BASE = 2_000_000
"""Root callers run sandboxed code as ``UID_BASE + pid % 1_000_000``: a user id no account
uses, so the process limit counts only this process's sandboxes."""

RunStatus = Literal[
    "ok", "failed", "timeout", "cpu_limit", "memory_limit", "process_limit",
    "output_limit", "file_size_limit", "killed",
]  # fmt: skip
LIMIT_STATUSES = frozenset(
    {"timeout", "cpu_limit", "memory_limit", "process_limit", "output_limit",
     "file_size_limit", "killed"}
)  # fmt: skip
"""Statuses of a run the sandbox stopped or starved (typed errors for the caller)."""


class SandboxUnavailable(RuntimeError):
    """Code cannot run: bubblewrap is missing or broken and the unsafe flag is not set."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run.

    Attributes:
        cpu_seconds: CPU time per process (SIGXCPU, then SIGKILL one second later).
        memory_bytes: address space per process.
        processes: processes (and threads) of the sandbox user.
        output_bytes: captured stdout and stderr; more kills the run.
        wall_seconds: real time before the run is killed.
        file_bytes: largest file a run may write.
        open_files: file descriptors per process.
        tmp_bytes: size of the run's private ``/tmp``.
    """

    cpu_seconds: int = 30
    memory_bytes: int = 1 << 30
    processes: int = 64
    output_bytes: int = 1 << 20
    wall_seconds: float = 60.0
    file_bytes: int = 16 << 20
    open_files: int = 256
    tmp_bytes: int = 64 << 20

    def describe(self, status: str) -> str:
        """The limit a status refers to, for error messages."""
        return {
            "timeout": f"the wall-time limit of {self.wall_seconds:g} s",
            "cpu_limit": f"the CPU limit of {self.cpu_seconds} s",
            "memory_limit": f"the memory limit of {self.memory_bytes >> 20} MiB",
            "process_limit": f"the process limit of {self.processes}",
            "output_limit": f"the output limit of {self.output_bytes >> 10} KiB",
            "file_size_limit": f"the file-size limit of {self.file_bytes >> 20} MiB",
            "killed": "a resource limit (the run was killed)",
        }.get(status, status)


@dataclass(frozen=True)
class RunResult:
    """What one run did.

    Attributes:
        status: "ok" (exit 0), "failed" (a nonzero exit of the program itself) or the
            limit that stopped it (see :data:`LIMIT_STATUSES`).
        exit_code: the command's exit status (128 + signal when a signal ended it), or
            None when the sandbox killed it.
        output: stdout and stderr interleaved, decoded as UTF-8, cut at the output limit.
        seconds: wall time of the run (never written into traces).
        channel: what the run wrote to its private channel (runs given a secret only).
    """

    status: RunStatus
    exit_code: int | None
    output: str
    seconds: float
    channel: str = ""


def unsafe_requested() -> bool:
    """Whether the user asked to run code without a sandbox."""
    return os.environ.get(UNSAFE_ENV, "") not in ("", "0")


def sandbox_mode() -> str:
    """``"bubblewrap"``, ``"unsafe: no sandbox"``, or ``"unavailable: <reason>"``."""
    if unsafe_requested():
        return f"unsafe: no sandbox ({UNSAFE_ENV}=1)"
    problem = bubblewrap_problem()
    return "bubblewrap" if problem is None else f"unavailable: {problem}"


@cache
def bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox runs on this machine, or None when it works."""
    missing = [tool for tool in ("bwrap", "prlimit", "setpriv") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not found on PATH"
    probe = _bwrap_argv(Path("/"), writable=False, binds={}, limits=Limits()) + ["true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not start: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return f"bwrap cannot create its namespaces here: {detail}"
    return None


def require_sandbox() -> None:
    """Raise :class:`SandboxUnavailable` unless runs are sandboxed or explicitly unsafe."""
    if unsafe_requested():
        return
    problem = bubblewrap_problem()
    if problem is not None:
        raise SandboxUnavailable(
            f"refusing to run code without a sandbox: {problem}. Install bubblewrap "
            f"(Debian/Ubuntu: apt-get install bubblewrap), or set {UNSAFE_ENV}=1 "
            "(hasbench --unsafe-no-sandbox) to run it unsandboxed; traces record that."
        )


def python_executable() -> str:
    """The interpreter runs use: this process's own (its packages, pytest included)."""
    return sys.executable


class Sandbox:
    """Runs commands under bubblewrap (or, when explicitly unsafe, directly).

    Args:
        limits: the resource limits of every run.
    """

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()

    def run(
        self,
        argv: list[str],
        workspace: Path,
        *,
        writable: bool,
        binds: dict[str, Path] | None = None,
        env: dict[str, str] | None = None,
        secret: bytes | None = None,
    ) -> RunResult:
        """Run ``argv`` in ``workspace`` (seen as ``/workspace``); never raises for the run.

        Args:
            argv: the command; paths under ``/workspace`` or a bind destination are
                translated when running unsandboxed.
            workspace: the host directory to mount.
            writable: whether the run may change the workspace.
            binds: extra read-only files or directories, destination -> host path.
            env: extra environment variables (they replace the defaults of the same name;
                an empty value removes one).
            secret: open a private channel: the secret is the run's standard input, and
                what it writes to the descriptor named by :data:`CHANNEL_VARIABLE` is
                returned as :attr:`RunResult.channel`.

        Raises:
            SandboxUnavailable: no working bubblewrap and no unsafe flag.
        """
        require_sandbox()
        binds = dict(binds or {})
        variables = run_env(env)
        limit_argv = _prlimit_argv(self.limits)
        channel = _Channel(secret) if secret is not None else None
        if channel is not None:
            variables[CHANNEL_VARIABLE] = str(channel.child_end)
        try:
            if unsafe_requested():
                mapping = {WORKSPACE: str(workspace), **{d: str(h) for d, h in binds.items()}}
                argv = [_translate(arg, mapping) for arg in argv]
                variables = {k: _translate(v, mapping) for k, v in variables.items()}
                with tempfile.TemporaryDirectory(prefix="hasbench-tmp-") as scratch:
                    variables["TMPDIR"] = variables["HOME"] = scratch
                    return _execute(
                        limit_argv + argv, variables, str(workspace), self.limits, channel
                    )
            if writable and os.geteuid() == 0:
                _chown_tree(workspace, _sandbox_uid())
            full = _bwrap_argv(workspace, writable, binds, self.limits)
            for key, value in sorted(variables.items()):
                full += ["--setenv", key, value]
            full += _drop_root_argv() + limit_argv + argv
            return _execute(full, {"PATH": "/usr/bin:/bin"}, None, self.limits, channel)
        finally:
            if channel is not None:
                channel.close()


class _Channel:
    """A run's private channel: its secret (standard input) and the pipe it answers on."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.parent_end, self.child_end = os.pipe()

    def close(self) -> None:
        for fd in (self.parent_end, self.child_end):
            try:
                os.close(fd)
            except OSError:
                pass


def run_env(env: dict[str, str] | None) -> dict[str, str]:
    """A run's environment: the defaults, replaced by ``env`` (an empty value removes one)."""
    return {k: v for k, v in (_base_env() | (env or {})).items() if v}


def _base_env() -> dict[str, str]:
    return {
        "PATH": f"{Path(python_executable()).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": WORKSPACE,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def _translate(value: str, mapping: dict[str, str]) -> str:
    for inside, host in sorted(mapping.items(), key=lambda kv: -len(kv[0])):
        value = value.replace(inside, host)
    return value


def _prlimit_argv(limits: Limits) -> list[str]:
    return [
        "prlimit",
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
        f"--nproc={limits.processes}",
        "--core=0",
        "--",
    ]


def _sandbox_uid() -> int:
    return UID_BASE + os.getpid() % 1_000_000


def _drop_root_argv(uid: int | None = None) -> list[str]:
    """``setpriv`` arguments that drop root to ``uid`` (default :func:`_sandbox_uid`)."""
    if os.geteuid() != 0:
        return []
    uid = _sandbox_uid() if uid is None else uid
    return [
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
    ]  # fmt: skip


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def _system_roots() -> list[tuple[str, str | None]]:
    """(path, symlink target or None) for the top-level system directories to expose."""
    roots = []
    for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            roots.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            roots.append((path, None))
    return roots


def _python_roots() -> list[str]:
    """Directories holding the interpreter and its packages (bound read-only)."""
    candidates = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parents[1])}
    roots: list[str] = []
    for path in sorted(candidates, key=len):
        if path.startswith("/usr/") or path == "/usr":
            continue
        if not any(path == r or path.startswith(r + "/") for r in roots):
            roots.append(path)
    return roots


def _bwrap_argv(
    workspace: Path, writable: bool, binds: dict[str, Path], limits: Limits
) -> list[str]:
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if os.geteuid() != 0:
        argv += ["--unshare-user"]
    bound: set[str] = set()
    created = {"/"}
    for path, target in _system_roots():
        argv += ["--symlink", target, path] if target else ["--ro-bind", path, path]
        bound.add(path)

    def parents(dest: str) -> list[str]:
        """``--dir`` arguments for the missing parents of a destination (mode 0755)."""
        out = []
        for parent in reversed(Path(dest).parents):
            text = str(parent)
            if text in created or any(text == b or text.startswith(b + "/") for b in bound):
                continue
            created.add(text)
            out += ["--perms", "0755", "--dir", text]
        return out

    # The fresh /tmp comes before the interpreter's binds: an interpreter under /tmp (a
    # checkout there) must stay visible, not be covered by the empty tmpfs.
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
    created.add("/tmp")
    for root in _python_roots():
        argv += parents(root) + ["--ro-bind", root, root]
        bound.add(root)
    argv += ["--bind" if writable else "--ro-bind", str(workspace), WORKSPACE]
    bound.add(WORKSPACE)
    for dest, host in sorted(binds.items()):
        argv += parents(dest) + ["--ro-bind", str(host), dest]
    argv += ["--chdir", WORKSPACE, "--clearenv"]
    return argv


def _execute(
    argv: list[str],
    env: dict[str, str],
    cwd: str | None,
    limits: Limits,
    channel: _Channel | None = None,
) -> RunResult:
    """Start, watch and finally kill one run; classify how it ended."""
    start = time.monotonic()
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE if channel else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd,
            start_new_session=True, pass_fds=(channel.child_end,) if channel else (),
        )  # fmt: skip
    except OSError as exc:
        raise SandboxUnavailable(f"cannot start {argv[0]}: {exc}") from exc
    assert process.stdout is not None
    out = process.stdout.fileno()
    streams = {out: bytearray()}
    if channel is not None:
        os.close(channel.child_end)  # only the run holds the writing end now
        channel.child_end = -1
        streams[channel.parent_end] = bytearray()
        assert process.stdin is not None
        try:
            process.stdin.write(channel.secret)
            process.stdin.close()
        except BrokenPipeError:
            pass  # the run ended before reading it
    stopped = _collect(process, streams, start + limits.wall_seconds, limits.output_bytes)
    _kill_group(process)
    try:
        returncode = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        returncode = None
    process.stdout.close()
    seconds = time.monotonic() - start
    output = bytes(streams[out])[: limits.output_bytes]
    text = output.decode("utf-8", errors="replace")
    said = bytes(streams[channel.parent_end]).decode("utf-8", "replace") if channel else ""
    if stopped is not None:
        return RunResult(stopped, None, text, seconds, said)
    return RunResult(_classify(returncode, text), returncode, text, seconds, said)


def _collect(
    process: subprocess.Popen, streams: dict[int, bytearray], deadline: float, most: int
) -> RunStatus | None:
    """Read the run's streams until they close, the run ends or a limit stops it."""
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready = selector.select(timeout=min(remaining, 0.5))
            if not ready:
                if process.poll() is not None and not _has_data(list(selector.get_map())):
                    return None
                continue
            for key, _ in ready:
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fd)
                    continue
                streams[key.fd] += data
                if sum(len(chunk) for chunk in streams.values()) > most:
                    return "output_limit"
    return None


def _has_data(fds: list[int]) -> bool:
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        return bool(selector.select(timeout=0))


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_FORK_FAILURE = ("BlockingIOError: [Errno 11]", "Resource temporarily unavailable")


def _classify(returncode: int | None, output: str) -> RunStatus:
    """How a run that ended by itself ended (exit status, then its last words)."""
    if returncode == 0:
        return "ok"
    if returncode is None:
        return "killed"
    signum = returncode - 128 if returncode > 128 else -returncode if returncode < 0 else 0
    if signum == signal.SIGXCPU:
        return "cpu_limit"
    if signum == signal.SIGXFSZ:
        return "file_size_limit"
    if signum == signal.SIGKILL:
        return "killed"
    tail = output[-4000:]
    if "MemoryError" in tail:
        return "memory_limit"
    if any(marker in tail for marker in _FORK_FAILURE):
        return "process_limit"
    return "failed"
