"""An episode's copy of a repository: files in memory, mirrored to a temporary directory.

The workspace is a tree ``path -> digest`` over a store of file contents by digest, so a
snapshot is a small dict and any earlier state can be put back. A temporary directory
mirrors the tree only when code has to run (:meth:`Workspace.directory`); after a run that
may write, :meth:`Workspace.rescan` reads the directory back. The directory is removed when
the workspace is garbage-collected, and a pickled workspace carries its files, not the
directory (a copy in another process makes its own). Paths are relative POSIX paths inside
the repository; symlinks and special files are not allowed in a workspace.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import weakref
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from hasbench.paths import SCRATCH_BASE

IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
"""Directories a run may create that are not part of the workspace."""
MAX_FILES = 500
MAX_BYTES = 16 << 20


class WorkspaceError(ValueError):
    """A path or a directory state the workspace cannot accept."""


def digest(data: bytes) -> str:
    """The content id of a file: its SHA-256 (first 16 hex digits)."""
    return hashlib.sha256(data).hexdigest()[:16]


def clean_path(raw: str) -> str:
    """A normalized relative path inside the repository.

    Raises:
        WorkspaceError: absolute, empty, leaving the repository, or inside ``.git``.
    """
    text = raw.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    path = PurePosixPath(text)
    if not text or path.is_absolute():
        raise WorkspaceError(f"{raw!r} is not a relative path inside the repository")
    if any(part in ("..", "") for part in path.parts) or path.parts[0] == ".git":
        raise WorkspaceError(f"{raw!r} leaves the repository")
    return str(path)


@lru_cache(maxsize=4096)
def _entry(raw: str, data: bytes) -> tuple[str, str]:
    """A file's clean path and digest (cached: each episode builds its task's repository anew)."""
    return clean_path(raw), digest(data)


class Workspace:
    """The files of one repository, with a lazily created directory mirror.

    Args:
        files: path -> content of the initial files.
    """

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.blobs: dict[str, bytes] = {}
        self.tree: dict[str, str] = {}
        for raw, data in files.items():
            path, key = _entry(raw, data)
            self.tree[path] = key
            self.blobs.setdefault(key, data)
        self._root: Path | None = None
        self._on_disk: dict[str, str] = {}

    # -- contents ------------------------------------------------------------------

    def store(self, data: bytes) -> str:
        """Keep a content in the store; return its digest."""
        key = digest(data)
        self.blobs.setdefault(key, data)
        return key

    def read(self, path: str) -> bytes:
        """The content of a file (KeyError when absent)."""
        return self.blobs[self.tree[path]]

    def text(self, path: str) -> str:
        """A file as text (KeyError when absent, UnicodeDecodeError when binary)."""
        return self.read(path).decode("utf-8")

    def texts(self) -> dict[str, str]:
        """Every text file as path -> text (binary files are left out)."""
        out = {}
        for path in self.tree:
            try:
                out[path] = self.text(path)
            except UnicodeDecodeError:
                continue
        return out

    def files(self) -> dict[str, bytes]:
        """Every file as path -> content."""
        return {path: self.blobs[key] for path, key in self.tree.items()}

    def write(self, path: str, data: bytes) -> None:
        """Create or replace a file."""
        if any(p.startswith(path + "/") for p in self.tree):
            raise WorkspaceError(f"{path!r} is a directory")
        parts = PurePosixPath(path).parents
        if any(str(parent) in self.tree for parent in parts):
            raise WorkspaceError(f"a parent of {path!r} is a file")
        self.tree[path] = self.store(data)

    def delete(self, path: str) -> None:
        """Remove a file (KeyError when absent)."""
        del self.tree[path]

    def checkout(self, tree: Mapping[str, str]) -> None:
        """Put back a tree taken from :attr:`tree` earlier (its contents are in the store)."""
        missing = [p for p, key in tree.items() if key not in self.blobs]
        if missing:
            raise WorkspaceError(f"cannot restore {missing[0]!r}: its content is unknown")
        self.tree = dict(tree)

    # -- the directory mirror --------------------------------------------------------

    def directory(self) -> Path:
        """The temporary directory, made to mirror the tree (created on first use)."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="hasbench-ws-", dir=SCRATCH_BASE))
            os.chmod(self._root, 0o755)
            weakref.finalize(self, shutil.rmtree, self._root, True)
            self._on_disk = {}
        for path in list(self._on_disk):
            if path not in self.tree:
                (self._root / path).unlink(missing_ok=True)
                del self._on_disk[path]
        for path, key in self.tree.items():
            if self._on_disk.get(path) != key:
                target = self._root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_symlink() or target.exists():
                    target.unlink()
                target.write_bytes(self.blobs[key])
                os.chmod(target, 0o644)
                self._on_disk[path] = key
        _prune_empty_dirs(self._root)
        return self._root

    def rescan(self) -> list[str]:
        """Read the directory back into the tree after a run that could write.

        Returns:
            The paths whose content changed, appeared or disappeared.

        Raises:
            WorkspaceError: the run left a symlink or special file, or more files or bytes
                than a workspace may hold; the tree is left as it was.
        """
        if self._root is None:
            return []
        found: dict[str, bytes] = {}
        total = 0
        for folder, dirs, files in os.walk(self._root):
            dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
            for name in dirs:
                if os.path.islink(os.path.join(folder, name)):
                    raise WorkspaceError(f"the run created a symlink {name!r}")
            for name in files:
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, self._root).replace(os.sep, "/")
                mode = os.lstat(full).st_mode
                if not stat.S_ISREG(mode):
                    raise WorkspaceError(f"the run created {rel!r}, which is not a regular file")
                if name.endswith((".pyc", ".pyo")):
                    continue
                data = Path(full).read_bytes()
                total += len(data)
                found[rel] = data
                if len(found) > MAX_FILES or total > MAX_BYTES:
                    raise WorkspaceError(
                        f"the run left more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB"
                    )
        new_tree = {path: self.store(data) for path, data in sorted(found.items())}
        paths = set(new_tree) | set(self.tree)
        changed = sorted(p for p in paths if new_tree.get(p) != self.tree.get(p))
        self.tree = new_tree
        self._on_disk = dict(new_tree)
        return changed

    def discard_directory(self) -> None:
        """Forget the on-disk mirror's contents so the next use rewrites it fully."""
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            self._on_disk = {}

    # -- pickling ------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        reachable = set(self.tree.values())
        return {"blobs": {k: v for k, v in self.blobs.items() if k in reachable}, "tree": self.tree}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.blobs = dict(state["blobs"])
        self.tree = dict(state["tree"])
        self._root = None
        self._on_disk = {}


def _prune_empty_dirs(root: Path) -> None:
    for folder, _, _ in os.walk(root, topdown=False):
        if folder != str(root) and not os.listdir(folder):
            os.rmdir(folder)
