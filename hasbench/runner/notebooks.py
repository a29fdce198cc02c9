"""The figure and exploration notebooks, found by their registered name, and their runs.

A notebook under ``notebooks/`` is registered by a name in its own metadata::

    "metadata": {"hasbench": {"name": "rq1"}, ...}

so that ``hasbench notebook rq1`` (and :func:`run_notebook`) finds it whatever its file
is called. Notebooks without a name are not run by name.

A run writes the executed notebook and, beside it, an HTML export with the widgets' state
saved, which opens in a browser without a kernel. While it runs, the terminal shows which
cell runs and the live progress the notebook reports (:mod:`hasbench.runner.progress`).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hasbench.paths import REPO_ROOT, RUNS_DIR
from hasbench.runner.experiment import ExperimentError
from hasbench.runner.progress import Relay

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
KERNEL = "hasbench"
METADATA_KEY = "hasbench"
"""The notebook metadata entry that holds ``{"name": ...}``."""


def registered_notebooks(directory: Path | None = None) -> dict[str, Path]:
    """Registered name -> notebook file, for every named notebook in ``directory``.

    Args:
        directory: where to look (default :data:`NOTEBOOKS_DIR`).

    Raises:
        ExperimentError: a notebook that cannot be read, or two notebooks with one name.
    """
    found: dict[str, Path] = {}
    for path in sorted((directory or NOTEBOOKS_DIR).glob("*.ipynb")):
        try:
            metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata") or {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ExperimentError(f"{path}: not a readable notebook: {exc}") from None
        name = (metadata.get(METADATA_KEY) or {}).get("name")
        if name is None:
            continue
        if name in found:
            raise ExperimentError(
                f"{path}: metadata.{METADATA_KEY}.name: {name!r} is also the name of "
                f"{found[name].name}"
            )
        found[name] = path
    return found


@dataclass(frozen=True)
class FigureNotebook:
    """A registered notebook that writes paper tables and figures.

    Declared in its metadata: ``{"hasbench": {"name": ..., "figures": {"order": 1,
    "title": ..., "folder": ...}}}``.

    Attributes:
        name: its registered name.
        title: what it reproduces.
        folder: its folder under the figures directory (its ``output_dir``).
        order: its place in ``hasbench notebook all`` and the index page.
    """

    name: str
    title: str
    folder: str
    order: int


def figure_notebooks(directory: Path | None = None) -> list[FigureNotebook]:
    """Every registered notebook that declares figures, in its declared order."""
    found = []
    for name, path in registered_notebooks(directory).items():
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"][METADATA_KEY]
        figures = metadata.get("figures")
        if figures is not None:
            found.append(
                FigureNotebook(name, figures["title"], figures["folder"], figures["order"])
            )
    return sorted(found, key=lambda notebook: notebook.order)


def find_notebook(name: str) -> Path:
    """The notebook registered as ``name``; the error lists the registered names."""
    registered = registered_notebooks()
    if name not in registered:
        known = ", ".join(f"{n} ({p.name})" for n, p in sorted(registered.items())) or "none"
        raise ExperimentError(f"no notebook named {name!r} in {NOTEBOOKS_DIR} (known: {known})")
    return registered[name]


def run_notebook(
    name: str,
    parameters: dict[str, Any] | None = None,
    output_dir: str | Path | None = None,
    progress: bool = True,
) -> Path:
    """Execute the notebook registered as ``name`` with papermill on the ``hasbench`` kernel.

    Writes the executed copy and its HTML export (same name, ``.html``) into the output
    folder.

    Args:
        name: the notebook's registered name (``rq1``, ``explore_traces``, ...).
        parameters: values for the notebook's ``parameters`` cell.
        output_dir: where the executed copy goes (default ``RUNS_DIR/notebooks``).
        progress: show on the terminal which cell runs and the notebook's live progress.

    Returns:
        The path of the executed notebook.

    Raises:
        ExperimentError: an unknown notebook, a parameter its parameters cell does not
            have, or no ``hasbench`` kernel.
    """
    import papermill
    from jupyter_client.kernelspec import KernelSpecManager

    source = find_notebook(name)
    known = papermill.inspect_notebook(str(source))
    unknown = sorted(set(parameters or {}) - set(known))
    if unknown:
        raise ExperimentError(
            f"{source}: no parameter {', '.join(map(repr, unknown))} "
            f"(its parameters: {', '.join(known) or 'none'})"
        )
    if KERNEL not in KernelSpecManager().find_kernel_specs():
        raise ExperimentError(
            f"Jupyter kernel {KERNEL!r} is not installed; run `make setup` or "
            f"`python -m ipykernel install --sys-prefix --name {KERNEL}`"
        )
    target_dir = Path(output_dir) if output_dir is not None else RUNS_DIR / "notebooks"
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / source.name
    options: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        if progress:
            relay = stack.enter_context(Relay(target.with_suffix(".progress")))
            cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
            order = [c.get("id") for c in cells if c["cell_type"] == "code"]

            def announce(cell: Any, cell_index: int) -> None:
                if cell.get("id") in order:  # not the parameters papermill injects
                    relay.cell(1 + order.index(cell.get("id")), len(order), cell.source)

            options["on_cell_start"] = announce
        papermill.execute_notebook(
            str(source),
            str(target),
            parameters=parameters or {},
            kernel_name=KERNEL,
            cwd=str(REPO_ROOT),
            progress_bar=False,
            **options,
        )
    export_html(target)
    return target


def export_html(notebook: Path) -> Path:
    """Write an executed notebook as HTML beside it, with its saved widget state.

    The widgets render from that state in a browser without a kernel (their scripts load
    from a CDN, so this needs network access); the other outputs are plain HTML.
    """
    import nbformat
    from nbconvert import HTMLExporter

    node = nbformat.read(notebook, as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(node)
    path = notebook.with_suffix(".html")
    path.write_text(body, encoding="utf-8")
    return path
