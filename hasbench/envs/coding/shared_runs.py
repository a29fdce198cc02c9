"""Results of read-only sandboxed runs shared between processes, on the host only.

The figure notebooks run the same coding tasks with the same stand-in agent in different
processes (one kernel per notebook, worker processes per grid), so most workspace states
they test were already tested by another process: RQ3's, RQ4's and the simulator study's
runs are, but for a handful, RQ1's. A process that is told a folder (:func:`share`) keeps
there the outcome of each run of the visible tests and each verdict of the hidden tests,
and takes it from there instead of running the sandbox again.

An entry is found only under a key that hashes everything the run's outcome depends on
(:func:`key`): what ran (the command, its environment, the hidden tests' text), the full
SHA-256 of every workspace file with its path, the sandbox mode and limits, the
interpreter (executable, version, every installed distribution and its version) and the
source of this package (sandbox, warm worker, hidden-test runner). Runs stopped at a
limit (time, memory, ...) depend on the machine's load and are never shared. Hidden
verdicts are shared as this process read them from its keyed channel, never as raw output.

The folder is on the host and never bound into a sandbox: :func:`share` refuses one that
lies under a directory the sandbox binds (the system and the Python installation), so no
run can read or change what another run's outcome is taken from.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

from hasbench.envs.coding.hidden import HiddenResults
from hasbench.envs.coding.sandbox import (
    LIMIT_STATUSES,
    RunResult,
    Sandbox,
    _python_roots,
    _system_roots,
    sandbox_mode,
)

_FOLDER: list[Path] = []
"""The shared folder of this process (empty: runs are not shared)."""


def share(folder: Path | None) -> bool:
    """Share runs through ``folder`` from now on (None: stop sharing).

    Returns:
        Whether runs are shared: False for None, and for a folder a sandbox could see.
    """
    _FOLDER.clear()
    if folder is None:
        return False
    folder = Path(folder).resolve()
    if any(folder == root or root in folder.parents for root in _bound_roots()):
        return False
    _FOLDER.append(folder)
    return True


def sharing() -> bool:
    """Whether this process shares runs."""
    return bool(_FOLDER)


def key(what: dict[str, Any], files: dict[str, bytes], sandbox: Sandbox) -> str:
    """The key of a run: a SHA-256 of everything its outcome depends on.

    Args:
        what: what runs (command, environment, hidden tests' text).
        files: the workspace, path -> content.
        sandbox: what runs it (its mode, limits and kind count).
    """
    contents = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    described = {"mode": sandbox_mode(), "limits": asdict(sandbox.limits),
                 "type": type(sandbox).__name__}  # fmt: skip
    identity = {"what": what, "files": contents, "sandbox": described,
                "interpreter": _interpreter(), "code": _code()}  # fmt: skip
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def load_run(name: str) -> RunResult | None:
    """The run stored under ``name``, or None."""
    entry = _load(name)
    if entry is None:
        return None
    return RunResult(entry["status"], entry["exit_code"], entry["output"], entry["seconds"])


def save_run(name: str, result: RunResult) -> None:
    """Store a run under ``name``, unless a limit stopped it (that depends on the load)."""
    if result.status not in LIMIT_STATUSES:
        _save(name, {"status": result.status, "exit_code": result.exit_code,
                     "output": result.output, "seconds": result.seconds})  # fmt: skip


def load_verdicts(name: str) -> HiddenResults | None:
    """The hidden tests' verdicts stored under ``name``, or None."""
    entry = _load(name)
    if entry is None:
        return None
    passed = {test: bool(ok) for test, ok in entry["passed"]}
    return HiddenResults(entry["status"], passed, entry["lines"])


def save_verdicts(name: str, results: HiddenResults) -> None:
    """Store the verdicts read from a hidden-test run (not stopped at a limit) under ``name``."""
    passed = [[test, ok] for test, ok in results.passed.items()]
    _save(name, {"status": results.status, "passed": passed, "lines": results.lines})


def _load(name: str) -> dict[str, Any] | None:
    """The entry stored under ``name``, or None (not sharing, none, or unreadable)."""
    if not _FOLDER:
        return None
    try:
        entry = json.loads((_FOLDER[0] / name[:2] / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("key") == name else None


def _save(name: str, entry: dict[str, Any]) -> None:
    """Store ``entry`` under ``name`` (whole or not at all: written aside, then renamed)."""
    if not _FOLDER:
        return
    folder = _FOLDER[0] / name[:2]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(dir=folder, prefix=".entry-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({**entry, "key": name}, out)
        os.replace(scratch, folder / f"{name}.json")
    except OSError:
        return  # not shared; the run's outcome stands


def _bound_roots() -> list[Path]:
    """The host directories every sandbox binds (read-only)."""
    roots = [path for path, target in _system_roots() if target is None]
    return [Path(root).resolve() for root in [*roots, *_python_roots()]]


@cache
def _interpreter() -> dict[str, Any]:
    """The interpreter runs use, and every distribution installed for it, with versions."""
    from importlib import metadata

    installed = sorted({(d.metadata["Name"] or "", d.version) for d in metadata.distributions()})
    return {"executable": sys.executable, "version": sys.version, "installed": installed}


@cache
def _code() -> str:
    """A hash of this package's source: how runs are built, sandboxed, run and read."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
