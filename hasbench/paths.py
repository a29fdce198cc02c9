"""Where the workbench reads data and writes outputs (overridable by environment variables)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("HASBENCH_DATA", REPO_ROOT / "data"))
TASKS_DIR = DATA_DIR / "tasks"
POLICIES_DIR = DATA_DIR / "policies"
FIGURES_DIR = Path(os.environ.get("HASBENCH_FIGURES", REPO_ROOT / "figures"))
RUNS_DIR = Path(os.environ.get("HASBENCH_RUNS", REPO_ROOT / "runs"))
CACHE_DIR = Path(os.environ.get("HASBENCH_CACHE", REPO_ROOT / ".cache"))


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
