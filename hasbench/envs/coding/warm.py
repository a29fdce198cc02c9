"""Warm sandboxes: a bubblewrap sandbox and an interpreter kept running, a fresh child per run.

A cold run (:meth:`Sandbox.run <hasbench.envs.coding.sandbox.Sandbox.run>`) starts
bubblewrap, an interpreter and pytest for every hidden-test or workspace run; most of its
time is importing pytest. :class:`WarmSandbox` runs the same commands in a worker
(:mod:`hasbench.envs.coding.warm_worker`) started once per process and kind of run: a
bubblewrap sandbox built exactly like a cold run's (same namespaces, read-only system and
interpreter, same user id, no new privileges), holding an interpreter that has imported
pytest and nothing else, and built the configuration pytest sessions start from (which
reads no file). For each run the host copies the workspace (and the run's
read-only folders, e.g. the hidden tests and their runner) into the worker's own folders,
bound at the same places as a cold run binds them, and the worker forks a child that sets
the run's limits, environment and streams and runs the command. When the child ends, the
worker kills whatever the run left behind and empties ``/tmp``; a writable run's folder
is moved back into the workspace directory for the caller to read back.

What a run could do to the next one is closed off: the worker never loads a file of a
workspace, it is non-dumpable (a run cannot trace it or read its memory), no process of a
run outlives it, and the folders a run sees are read-only to it (a writable run's folder
is emptied after it), so they hold what the host last wrote there; before each run the
host rewrites the files that differ. A worker that dies (code of a run can kill it: it
shares the run's user id) or misbehaves is discarded and the run is done cold, so the
result never depends on it. Commands other than ``python -m pytest`` and ``python -s -P
SCRIPT`` are executed in the child (the sandbox stays warm, the interpreter does not).
Unsandboxed (unsafe) runs are always cold.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from hasbench.envs.coding import sandbox
from hasbench.envs.coding.sandbox import (
    WORKSPACE,
    Limits,
    RunResult,
    Sandbox,
    _bwrap_argv,
    _chown_tree,
    _classify,
    _drop_root_argv,
    _kill_group,
    _python_roots,
    _sandbox_uid,
    python_executable,
    run_env,
)
from hasbench.envs.coding.tampering import RUNNER_MODULES, takeover
from hasbench.paths import SCRATCH_BASE, at_process_exit

WORKER_SOURCE = Path(__file__).with_name("warm_worker.py")
WORKER_DIR = "/warm"
"""Where the worker script appears in its sandbox."""
START_SECONDS = 60.0
"""How long a worker may take to start (import pytest) before runs go cold."""
IDLE_WORKERS = 2
"""Idle workers kept per kind of run."""
UID_OFFSET = 1_000_000
"""Root callers run warm workers as their cold runs' user id plus this: the workers and
their runs are counted apart from cold runs, and a cold run never sees them."""


class WorkerGone(RuntimeError):
    """The worker could not start or died during a run (the run is then done cold)."""


class WarmSandbox(Sandbox):
    """A :class:`Sandbox` whose runs reuse a warm worker; a cold run where none can serve."""

    def run(
        self,
        argv: list[str],
        workspace: Path | Mapping[str, bytes],
        *,
        writable: bool,
        binds: dict[str, Path] | None = None,
        env: dict[str, str] | None = None,
        secret: bytes | None = None,
    ) -> RunResult:
        """Like :meth:`Sandbox.run`, in a warm worker when bubblewrap sandboxes runs.

        Args:
            argv: the command (as for :meth:`Sandbox.run`).
            workspace: the directory to mount, or (read-only runs) its files as relative
                path -> content, which then never have to be written to a directory of
                their own.
            writable: whether the run may change the workspace.
            binds: extra read-only directories, destination -> host path.
            env: extra environment variables (as for :meth:`Sandbox.run`).
            secret: opens the run's private channel (as for :meth:`Sandbox.run`).
        """
        binds = dict(binds or {})
        key = (self.limits, writable, tuple(sorted(binds)), tuple(_python_roots()))
        cold = sandbox.unsafe_requested() or sandbox.bubblewrap_problem() is not None
        beside = not isinstance(workspace, Path) or _beside_workers(workspace)
        cold = cold or (writable and not beside)
        if cold or key in _FAILED or not all(Path(host).is_dir() for host in binds.values()):
            return self._cold(argv, workspace, writable, binds, env, secret)
        worker = None
        try:
            worker = _take(key) or _start(key, self.limits, writable, sorted(binds))
            files = worker.fill(worker.slot, workspace)
            for dest, host in binds.items():
                worker.fill(worker.folders[dest], host)
            if writable and os.geteuid() == 0:
                _chown_tree(worker.slot, _warm_uid())
            result = worker.run(argv, run_env(env), secret, shadowed=_shadows(files))
        except (WorkerGone, OSError):
            if worker is not None:
                worker.close()
            return self._cold(argv, workspace, writable, binds, env, secret)
        if writable and worker.alive:  # a run stopped at a limit is discarded by the caller
            _empty(workspace)
            for name in os.listdir(worker.slot):
                os.rename(worker.slot / name, workspace / name)
            worker.held[worker.slot] = {}
        _give(key, worker)
        return result

    def _cold(
        self,
        argv: list[str],
        workspace: Path | Mapping[str, bytes],
        writable: bool,
        binds: dict[str, Path],
        env: dict[str, str] | None,
        secret: bytes | None,
    ) -> RunResult:
        """The run done by :meth:`Sandbox.run` (files given as a mapping written out first)."""
        if isinstance(workspace, Path):
            return super().run(argv, workspace, writable=writable, binds=binds, env=env,
                               secret=secret)  # fmt: skip
        if writable:
            raise TypeError("a writable run needs the workspace directory")
        with tempfile.TemporaryDirectory(prefix="hasbench-ws-", dir=SCRATCH_BASE) as scratch:
            folder = Path(scratch)
            folder.chmod(0o755)
            _fill(folder, workspace, {})
            return super().run(argv, folder, writable=False, binds=binds, env=env,
                               secret=secret)  # fmt: skip


def _beside_workers(folder: Path) -> bool:
    """Whether ``folder`` is on the file system of the workers' folders.

    A writable run's files are moved from its worker's folder into the workspace folder
    (renamed, never copied: copying what a run left, a named pipe say, could block).
    """
    return os.stat(folder).st_dev == os.stat(SCRATCH_BASE or tempfile.gettempdir()).st_dev


class _Worker:
    """One warm worker: its sandbox process, control socket and folders."""

    def __init__(self, limits: Limits, writable: bool, dests: list[str]) -> None:
        self.limits = limits
        self.home = Path(tempfile.mkdtemp(prefix="hasbench-warm-", dir=SCRATCH_BASE))
        self.home.chmod(0o755)
        self.slot = self.home / "workspace"
        self.folders = {dest: self.home / f"bind{i}" for i, dest in enumerate(dests)}
        self.held: dict[Path, dict[str, tuple[bytes, int]]] = {
            folder: {} for folder in (self.slot, *self.folders.values())
        }
        """What each folder a run sees holds: relative path -> (content, mode)."""
        code = self.home / "code"
        for folder in (self.slot, code, *self.folders.values()):
            folder.mkdir(mode=0o755)
            folder.chmod(0o755)
        shutil.copyfile(WORKER_SOURCE, code / WORKER_SOURCE.name)
        (code / WORKER_SOURCE.name).chmod(0o644)
        self.control, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        binds = {**self.folders, WORKER_DIR: code}
        argv = _bwrap_argv(self.slot, writable, binds, limits)
        for name, value in sorted(_worker_env().items()):
            argv += ["--setenv", name, value]
        script = f"{WORKER_DIR}/{WORKER_SOURCE.name}"
        argv += _drop_root_argv(_warm_uid())
        argv += [python_executable(), "-s", "-P", script, str(inside.fileno())]
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin"},
                start_new_session=True, pass_fds=(inside.fileno(),),
            )  # fmt: skip
        except OSError as exc:
            self.close()
            raise WorkerGone(f"cannot start the worker: {exc}") from exc
        finally:
            inside.close()
        self.control.settimeout(START_SECONDS)
        try:
            ready = self.control.recv(4096)
        except OSError:
            ready = b""
        self.control.settimeout(None)
        if not ready:
            self.close()
            raise WorkerGone("the worker did not start")
        _ALL.append(self)

    def fill(self, folder: Path, source: Path | Mapping[str, bytes]) -> list[str]:
        """Make one of the worker's folders hold ``source``'s files (see :func:`_fill`)."""
        return _fill(folder, source, self.held[folder])

    def run(
        self, argv: list[str], variables: dict[str, str], secret: bytes | None, shadowed: bool
    ) -> RunResult:
        """Run one command in a fresh child of the worker; the worker answers when done.

        Args:
            argv: the command.
            variables: its whole environment.
            secret: the run's secret (opens its private channel), or None.
            shadowed: the workspace has a file that could change how an interpreter with
                it on its path starts (then ``python -m pytest`` starts a new interpreter).
        """
        out_read, out_write = os.pipe()
        fds, streams = [out_write], {out_read: bytearray()}
        channel = None
        if secret is not None:
            channel, channel_write = os.pipe()
            fds.append(channel_write)
            streams[channel] = bytearray()
        limits = self.limits
        request = {
            "argv": argv, "env": variables, "cwd": WORKSPACE,
            "mode": _mode(argv, variables, shadowed), "secret": (secret or b"").decode(),
            "limits": {"cpu": [limits.cpu_seconds, limits.cpu_seconds + 1],
                       "as": [limits.memory_bytes] * 2, "fsize": [limits.file_bytes] * 2,
                       "nofile": [limits.open_files] * 2, "nproc": [limits.processes] * 2,
                       "core": [0, 0]},
        }  # fmt: skip
        start = time.monotonic()
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
        except OSError as exc:
            self._abandon(streams)
            raise WorkerGone(f"the worker is gone: {exc}") from exc
        finally:
            for fd in fds:
                os.close(fd)
        try:
            stopped, code = self._collect(streams, start + limits.wall_seconds)
        except WorkerGone:
            self._abandon(streams)
            raise
        if stopped is not None:
            self.close()
        for fd in streams:
            os.close(fd)
        output = bytes(streams[out_read])[: limits.output_bytes].decode("utf-8", "replace")
        said = bytes(streams[channel]).decode("utf-8", "replace") if channel else ""
        seconds = time.monotonic() - start
        if stopped is not None:
            return RunResult(stopped, None, output, seconds, said)
        return RunResult(_classify(code, output), code, output, seconds, said)

    def _collect(self, streams: dict[int, bytearray], deadline: float) -> tuple[str | None, int]:
        """Read the run's pipes until the worker says it ended and they close (or a limit)."""
        code: int | None = None
        with selectors.DefaultSelector() as selector:
            for fd in [*streams, self.control.fileno()]:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return "timeout", -1
                for key, _ in selector.select(timeout=min(remaining, 0.5)):
                    if key.fd == self.control.fileno():
                        answer = self.control.recv(4096)
                        if not answer:
                            raise WorkerGone("the worker died during the run")
                        code = int(json.loads(answer)["exit"])
                        selector.unregister(key.fd)
                        continue
                    data = os.read(key.fd, 65536)
                    if not data:
                        selector.unregister(key.fd)
                        continue
                    streams[key.fd] += data
                    if sum(len(chunk) for chunk in streams.values()) > self.limits.output_bytes:
                        return "output_limit", -1
        assert code is not None
        return None, code

    def _abandon(self, streams: dict[int, bytearray]) -> None:
        for fd in streams:
            os.close(fd)
        self.close()

    def close(self) -> None:
        """Stop the worker and remove its folders."""
        process = getattr(self, "process", None)
        if process is not None:
            _kill_group(process)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            self.process = None
        self.control.close()
        shutil.rmtree(self.home, ignore_errors=True)
        if self in _ALL:
            _ALL.remove(self)

    @property
    def alive(self) -> bool:
        """Whether the worker still runs."""
        return self.process is not None and self.process.poll() is None


def _warm_uid() -> int:
    return _sandbox_uid() + UID_OFFSET


def _worker_env() -> dict[str, str]:
    """The worker's environment: a run's, without the workspace on the import path."""
    return {k: v for k, v in run_env(None).items() if k != "PYTHONPATH"}


def _mode(argv: list[str], variables: dict[str, str], shadowed: bool) -> str:
    """The run's mode: "pytest" or "script" (in the warm interpreter), or "exec".

    The warm interpreter serves a run only when a new interpreter would have started the
    same way: the same executable and start-up variables (hash seed, ...), and for
    ``-m pytest`` (which has the workspace on its path from the start) no file of the
    workspace that a new interpreter would load in place of what the worker loaded.
    A ``-s -P`` script has no workspace on its path at start-up.
    """
    startup = {k: v for k, v in variables.items() if k.startswith("PYTHON") and k != "PYTHONPATH"}
    wanted = {k: v for k, v in _worker_env().items() if k.startswith("PYTHON")}
    if not argv or argv[0] != python_executable() or startup != wanted:
        return "exec"
    if argv[1:3] == ["-m", "pytest"]:
        return "exec" if shadowed else "pytest"
    if argv[1:3] == ["-s", "-P"] and len(argv) > 3 and argv[3].endswith(".py"):
        return "script"
    return "exec"


def _shadows(paths: list[str]) -> bool:
    """Whether a file could stand in for a module the worker loaded or a start-up file.

    That is, for an interpreter with the workspace on its path: a file
    :func:`~.tampering.takeover` names, or any module (compiled or not) named like one of
    the standard library or the test runner.
    """
    for path in paths:
        top = path.split("/", 1)[0].split(".", 1)[0]
        if takeover(path) is not None or top in RUNNER_MODULES or top in sys.stdlib_module_names:
            return True
    return False


def _fill(
    folder: Path, source: Path | Mapping[str, bytes], held: dict[str, tuple[bytes, int]]
) -> list[str]:
    """Make ``folder`` hold ``source``'s files, and nothing else.

    ``source`` is a directory (its regular files and directories) or files given as
    relative path -> content (mode 0644). ``held`` is what the folder holds (relative path
    -> (content, mode)), as the host last filled it, and is updated: runs see the folders
    read-only, and a writable run's folder is emptied after it, so nothing else changes
    them. Only what differs is written, so a worker that serves runs of the same
    repository rewrites only what changed.

    Returns:
        The relative paths of the files.
    """
    wanted = _wanted(source)
    dirs_wanted, dirs_held = _parents(wanted), _parents(held)
    for rel in held.keys() - wanted.keys():
        os.unlink(folder / rel)
    for rel in sorted(dirs_held - dirs_wanted, key=len, reverse=True):
        os.rmdir(folder / rel)
    for rel in sorted(dirs_wanted - dirs_held):
        (folder / rel).mkdir(mode=0o755)
    for rel, (data, mode) in wanted.items():
        if held.get(rel) != (data, mode):
            target = folder / rel
            target.write_bytes(data)
            target.chmod(mode)
    held.clear()
    held.update(wanted)
    return sorted(wanted)


def _parents(files: Mapping[str, object]) -> set[str]:
    """The folders (relative paths) the files are in, the top one left out."""
    found: set[str] = set()
    for rel in files:
        folder = rel.rpartition("/")[0]
        while folder and folder not in found:
            found.add(folder)
            folder = folder.rpartition("/")[0]
    return found


def _wanted(source: Path | Mapping[str, bytes]) -> dict[str, tuple[bytes, int]]:
    """Relative path -> (content, mode) of the files to put in a worker's folder."""
    if not isinstance(source, Path):
        return {path: (data, 0o644) for path, data in source.items()}
    wanted = {}
    for root, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in files:
            path = os.path.join(root, name)
            if _is_file(path):
                rel = os.path.relpath(path, source).replace(os.sep, "/")
                wanted[rel] = (Path(path).read_bytes(), os.stat(path).st_mode & 0o777)
    return wanted


def _is_file(path: str) -> bool:
    return os.path.isfile(path) and not os.path.islink(path)


def _empty(folder: Path) -> None:
    for entry in os.scandir(folder):
        _remove(entry.path)


def _remove(path: str) -> None:
    """Remove a file or a tree, folders a run made unreadable included.

    The worker, a script of its own, does the same inside its sandbox.
    """
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        for entry in os.scandir(path):
            _remove(entry.path)
        os.rmdir(path)
    else:
        os.unlink(path)


def _start(key: tuple, limits: Limits, writable: bool, dests: list[str]) -> _Worker:
    """A new worker; a kind whose worker cannot start is run cold from then on."""
    try:
        return _Worker(limits, writable, dests)
    except WorkerGone:
        _FAILED.add(key)
        raise


_FAILED: set[tuple] = set()
_ALL: list[_Worker] = []
_IDLE: dict[tuple, list[_Worker]] = {}
_LOCK = threading.Lock()
_OWNER = [os.getpid()]


def _take(key: tuple) -> _Worker | None:
    """An idle worker of this kind started by this process, if any."""
    with _LOCK:
        if _OWNER[0] != os.getpid():  # a forked copy: the workers belong to the parent
            for worker in _ALL:
                worker.control.close()
            _ALL.clear()
            _IDLE.clear()
            _OWNER[0] = os.getpid()
            at_process_exit(stop_workers)
        idle = _IDLE.get(key, [])
        while idle:
            worker = idle.pop()
            if worker.alive:
                return worker
            worker.close()
        return None


def _give(key: tuple, worker: _Worker) -> None:
    with _LOCK:
        idle = _IDLE.setdefault(key, [])
        if worker.alive and len(idle) < IDLE_WORKERS:
            idle.append(worker)
            return
    worker.close()


def stop_workers() -> None:
    """Stop every warm worker of this process."""
    with _LOCK:
        workers = list(_ALL) if _OWNER[0] == os.getpid() else []
        _IDLE.clear()
    for worker in workers:
        worker.close()


at_process_exit(stop_workers)
