"""Which benchmark a task folder holds: its name, what it was made from, its task files.

Two benchmarks live in the project, and a result must say which one it comes from:

- ``hasbench-generated``: the project's own tasks in ``data/tasks``, made by its seeded
  generators (``hasbench build tasks``); their customers, orders and repositories are the
  project's own, sized like the HAS paper's Table 3;
- ``HAS-Bench``: the benchmark as the paper built it from τ²-bench and MultiAgentBench
  (``hasbench build has-bench``), in the build's output folder, with the releases of the
  sources it was built from.

A build writes a manifest (:data:`MANIFEST`) beside its task files: the name, the sources
(release, where they were read from, the SHA-256 of every file) and the SHA-256 of every
task file. :func:`identify` reads a folder's manifest and checks the task files against
it; ``data/tasks`` is the generated benchmark; any other folder of task files is reported
by its folder name as an unnamed task set.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from hasbench.paths import TASKS_DIR

MANIFEST = "benchmark.json"
BUILT = "HAS-Bench"
GENERATED = "hasbench-generated"
DOMAINS = ("retail", "telecom", "airline", "coding", "research", "bargaining")
"""HAS-Bench's six domains (HAS paper §4.2), in the paper's order."""


class BenchmarkError(ValueError):
    """A folder whose manifest or task files cannot be read; the message names the file."""


class Benchmark(BaseModel):
    """A benchmark's identity: what tables and figures name and what a run records."""

    name: str
    """``HAS-Bench``, ``hasbench-generated``, or the folder's name for any other task set."""
    kind: Literal["built", "generated", "other"]
    label: str
    """One line naming the benchmark and its sources, for table captions and figures."""
    folder: Path
    task_files: list[Path]
    """The benchmark's task files, in the paper's domain order."""
    task_hashes: dict[str, str] = Field(default_factory=dict)
    """Task file name -> SHA-256 of its content (now, not as recorded)."""
    sources: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Source benchmark -> its release, origin and file hashes (built benchmarks)."""
    modified: list[str] = Field(default_factory=list)
    """Task files whose content differs from the manifest's record (edited after the build)."""
    built_with: dict[str, Any] = Field(default_factory=dict)
    """The package version and build settings (built benchmarks)."""

    def versions(self) -> dict[str, str]:
        """Source benchmark -> release (empty for the generated benchmark)."""
        return {name: str(source.get("release")) for name, source in self.sources.items()}


def identify(folder: str | Path = TASKS_DIR) -> Benchmark:
    """The benchmark in a folder: a build's output (or its ``tasks/``), or ``data/tasks``.

    Any other folder of task files is an unnamed task set named by the folder.

    Raises:
        BenchmarkError: the folder does not exist, holds no task files, or its manifest
            cannot be read.
    """
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise BenchmarkError(f"{folder}: no such folder")
    built_tasks = folder.name == "tasks" and (folder.parent / MANIFEST).is_file()
    root = folder.parent if built_tasks else folder
    if (root / MANIFEST).is_file():
        return _built(root)
    files = _task_files(folder)
    if not files:
        raise BenchmarkError(f"{folder}: no task files (*.yaml) here or in tasks/")
    hashes = {f.name: _sha256(f) for f in files}
    if folder == TASKS_DIR.resolve():
        label = "hasbench-generated (the project's own tasks from its seeded generators)"
        return Benchmark(name=GENERATED, kind="generated", label=label, folder=folder,
                         task_files=files, task_hashes=hashes)  # fmt: skip
    label = f"{folder.name} (task files without a benchmark manifest)"
    return Benchmark(name=folder.name, kind="other", label=label, folder=folder,
                     task_files=files, task_hashes=hashes)  # fmt: skip


def write_manifest(
    folder: str | Path,
    task_files: list[Path],
    sources: dict[str, dict[str, Any]],
    built_with: dict[str, Any],
) -> Path:
    """Write a build's manifest into ``folder`` (its output folder); returns its path.

    Args:
        folder: the build's output folder (task files under it).
        task_files: the task files written.
        sources: source benchmark -> its identity (release, origin, file hashes).
        built_with: the package version and the build's settings.
    """
    folder = Path(folder)
    manifest = {
        "name": BUILT,
        "sources": sources,
        "tasks": {
            Path(f).resolve().relative_to(folder.resolve()).as_posix(): _sha256(Path(f))
            for f in task_files
        },
        "built_with": built_with,
    }
    path = folder / MANIFEST
    path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def label_of(sources: dict[str, dict[str, Any]]) -> str:
    """``HAS-Bench (τ²-bench v0.1.3 from ..., MultiAgentBench 9d6efe6 from ...)``."""
    parts = [
        f"{source.get('release', name)} from {source.get('origin', '?')}"
        if source.get("release") != "unrecognized"
        else f"{name} (unrecognized files) from {source.get('origin', '?')}"
        for name, source in sources.items()
    ]
    return f"{BUILT} ({'; '.join(parts)})"


def _built(root: Path) -> Benchmark:
    path = root / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        recorded: dict[str, str] = manifest["tasks"]
        sources = manifest["sources"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise BenchmarkError(f"{path}: not a benchmark manifest ({exc})") from None
    files = _task_files(root)
    hashes = {f.name: _sha256(f) for f in files}
    now = {f.relative_to(root).as_posix(): hashes[f.name] for f in files}
    modified = sorted(
        name for name in set(recorded) | set(now) if recorded.get(name) != now.get(name)
    )
    return Benchmark(
        name=str(manifest.get("name", BUILT)),
        kind="built",
        label=label_of(sources),
        folder=root,
        task_files=files,
        task_hashes=hashes,
        sources=sources,
        modified=modified,
        built_with=manifest.get("built_with", {}),
    )


def _task_files(folder: Path) -> list[Path]:
    """The task files of a folder (or its ``tasks/``): the six domains first, in order."""
    where = folder / "tasks" if (folder / "tasks").is_dir() else folder
    if where.resolve() == TASKS_DIR.resolve():
        return [where / f"{d}.yaml" for d in DOMAINS if (where / f"{d}.yaml").is_file()]
    files = sorted(where.glob("*.yaml"))
    order = {f"{d}.yaml": i for i, d in enumerate(DOMAINS)}
    return sorted(files, key=lambda f: (order.get(f.name, len(order)), f.name))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
