"""The figure and exploration notebooks, found by their registered name, and their runs.

A notebook under ``notebooks/`` is registered by a name in its own metadata::

    "metadata": {"hasbench": {"name": "rq1"}, ...}

so that ``hasbench notebook rq1`` (and :func:`run_notebook`) finds it whatever its file
is called. Notebooks without a name are not run by name.

A run writes the executed notebook and, beside it, an HTML export with the widgets' state
saved, which opens in a browser without a kernel or a network
(:mod:`hasbench.runner.html_export`). While it runs, the terminal shows which
cell runs and the live progress the notebook reports (:mod:`hasbench.runner.progress`).

A sweep (:func:`run_sweep`, ``hasbench notebook NAME --grid FILE``) runs a notebook once
per parameter set of a grid file, in parallel worker processes or on a Dask cluster, each
run in its own folder; a summary lists every set's status, and a rerun skips the sets that
finished.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hasbench.paths import REPO_ROOT, RUNS_DIR, read_yaml
from hasbench.runner.experiment import ExperimentError
from hasbench.runner.html_export import export_html, load_jsonschema
from hasbench.runner.progress import Relay

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
KERNEL = "hasbench"
METADATA_KEY = "hasbench"
"""The notebook metadata entry that holds ``{"name": ...}``."""


class NotebookError(ExperimentError):
    """A notebook that stopped with an error: one line naming it and what went wrong.

    Attributes:
        executed: the executed copy, with the error's traceback in its failing cell.
    """

    def __init__(self, message: str, executed: Path) -> None:
        super().__init__(message)
        self.executed = executed


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
    "title": ..., "folder": ..., "runs_long": true}}}`` (``runs_long`` optional).

    Attributes:
        name: its registered name.
        title: what it reproduces.
        folder: its folder under the figures directory (its ``output_dir``).
        order: its place on the index page, and in ``hasbench notebook all``'s queue among
            notebooks alike (see :func:`hasbench.experiments.figures_index.run_all`).
        runs_long: it takes longer than the others together, so ``hasbench notebook all``
            starts it first, beside them.
    """

    name: str
    title: str
    folder: str
    order: int
    runs_long: bool = False


def figure_notebooks(directory: Path | None = None) -> list[FigureNotebook]:
    """Every registered notebook that declares figures, in its declared order."""
    found = []
    for name, path in registered_notebooks(directory).items():
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"][METADATA_KEY]
        figures = metadata.get("figures")
        if figures is not None:
            found.append(
                FigureNotebook(
                    name,
                    figures["title"],
                    figures["folder"],
                    figures["order"],
                    bool(figures.get("runs_long", False)),
                )  # fmt: skip
            )
    return sorted(found, key=lambda notebook: notebook.order)


def find_notebook(name: str) -> Path:
    """The notebook registered as ``name``; the error lists the registered names."""
    registered = registered_notebooks()
    if name not in registered:
        known = ", ".join(f"{n} ({p.name})" for n, p in sorted(registered.items())) or "none"
        raise ExperimentError(f"no notebook named {name!r} in {NOTEBOOKS_DIR} (known: {known})")
    return registered[name]


def notebook_parameters(source: Path) -> list[str]:
    """The names in a notebook's ``parameters`` cell, as papermill reads them."""
    load_jsonschema()
    import papermill

    return list(papermill.inspect_notebook(str(source)))


def require_kernel() -> None:
    """Raise :class:`ExperimentError` unless the ``hasbench`` Jupyter kernel is installed."""
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL not in KernelSpecManager().find_kernel_specs():
        raise ExperimentError(
            f"Jupyter kernel {KERNEL!r} is not installed; run `make setup` or "
            f"`python -m ipykernel install --sys-prefix --name {KERNEL}`"
        )


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
        NotebookError: the notebook stopped with an error (its executed copy and HTML
            export are still written, the traceback in the failing cell).
    """
    load_jsonschema()
    import papermill

    source = find_notebook(name)
    known = notebook_parameters(source)
    unknown = sorted(set(parameters or {}) - set(known))
    if unknown:
        raise ExperimentError(
            f"{source}: no parameter {', '.join(map(repr, unknown))} "
            f"(its parameters: {', '.join(known) or 'none'})"
        )
    require_kernel()
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
        try:
            papermill.execute_notebook(
                str(source),
                str(target),
                parameters=parameters or {},
                kernel_name=KERNEL,
                cwd=str(REPO_ROOT),
                progress_bar=False,
                **options,
            )
        except papermill.PapermillExecutionError as failure:
            export_html(target)
            reason = " ".join(line.strip() for line in str(failure.evalue).splitlines())
            raise NotebookError(
                f"{name} ({source.name}): {failure.ename}: {reason} (traceback: {target})", target
            ) from None
    export_html(target)
    return target


@dataclass(frozen=True)
class NotebookRun:
    """One notebook run by :func:`run_side_by_side`.

    Attributes:
        name: its registered name.
        executed: its executed copy (with the traceback in the failing cell on an error).
        error: why it failed (:class:`NotebookError`'s message), or None.
        seconds: wall-clock seconds it took.
        cpu: CPU seconds of its kernel and of every process the kernel waited for.
    """

    name: str
    executed: Path
    error: str | None
    seconds: float
    cpu: float


def run_side_by_side(
    runs: list[tuple[str, dict[str, Any]]],
    output_dir: str | Path | None = None,
    workers: int | None = None,
) -> Iterator[NotebookRun]:
    """Run notebooks ``(name, parameters)`` a few at a time; yield each as it ends.

    Each runs in a worker process of its own (default: one per CPU), taking the next
    notebook in ``runs``' order when it is free, so a notebook that waits on one core
    (a local model answering one request after another) leaves the other to the rest.
    No cell progress is shown (several would interleave on one terminal).

    Raises:
        ExperimentError: an unknown notebook or parameter, or no ``hasbench`` kernel.
    """
    from concurrent.futures import as_completed

    from hasbench.runner.pool import machine_workers, worker_pool

    for name, parameters in runs:  # a bad name or parameter fails before any runs
        source = find_notebook(name)
        unknown = sorted(set(parameters) - set(notebook_parameters(source)))
        if unknown:
            raise ExperimentError(f"{source}: no parameter {', '.join(map(repr, unknown))}")
    require_kernel()
    with worker_pool(max(1, min(workers or machine_workers(), len(runs)))) as pool:
        futures = [pool.submit(_run_measured, name, p, output_dir) for name, p in runs]
        for future in as_completed(futures):
            yield future.result()


def _run_measured(
    name: str, parameters: dict[str, Any], output_dir: str | Path | None
) -> NotebookRun:
    """:func:`run_notebook` in a worker, timed with the CPU of every process it started.

    The worker adopts the processes its kernel leaves behind (a local model's process ends
    shortly after the kernel that started it) and waits for them, so their CPU counts.
    """
    import resource

    def children_cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    adopt_orphans()
    began, cpu, error = time.monotonic(), children_cpu(), None
    try:
        executed = run_notebook(name, parameters, output_dir, progress=False)
    except NotebookError as failure:
        executed, error = failure.executed, str(failure)
    seconds = time.monotonic() - began
    reap_children(patience=ORPHAN_PATIENCE)
    return NotebookRun(name, executed, error, seconds, children_cpu() - cpu)


ORPHAN_PATIENCE = 10.0
"""Seconds a side-by-side worker waits for what its notebook's kernel left running."""


def adopt_orphans() -> None:
    """Make this process the reaper of its descendants' orphans (Linux; elsewhere nothing)."""
    import ctypes

    pr_set_child_subreaper = 36
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)


def reap_children(patience: float) -> None:
    """Wait (up to ``patience`` seconds) for every child and adopted process to end."""
    end = time.monotonic() + patience
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


GRID_KEYS = ("fixed", "vary", "sets")
"""The keys of a sweep's grid file."""
RUN_PLACES = {
    "output_dir": "outputs",
    "results_dir": "results",
    "out_dir": "results",
    "log_path": "session.jsonl",
}
"""Parameters that say where a notebook writes -> that place inside each sweep run's folder."""
RUN_RECORD = "run.json"
"""Each sweep run's record in its folder: parameters, status, seconds, error, headline."""
MANIFEST = "manifest.json"
"""What a figure notebook writes beside its tables: what they rest on, and its headline
numbers (``hasbench.experiments.study.write_manifest``)."""


@dataclass(frozen=True)
class SweepRun:
    """One parameter set of a sweep and the folder it runs in.

    Attributes:
        index: its place in the grid, from 0.
        parameters: the notebook parameters the grid gives it.
        directory: its own folder, ``NNN-HASH`` (index and a hash of the parameters).
    """

    index: int
    parameters: dict[str, Any]
    directory: Path


@dataclass(frozen=True)
class SweepSummary:
    """What a sweep did, and where its summary is.

    Attributes:
        directory: the sweep's folder (``summary.csv``, ``summary.json``, one folder per set).
        rows: one record per parameter set, in grid order (the summary's rows).
        ran: parameter sets run this time.
        skipped: parameter sets a previous run of the sweep had finished.
    """

    directory: Path
    rows: list[dict[str, Any]]
    ran: int
    skipped: int

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of the parameter sets that failed."""
        return [row for row in self.rows if row["status"] != "ok"]


def load_grid(path: str | Path, known: list[str] | None = None) -> list[dict[str, Any]]:
    """The parameter sets of a sweep's grid file, in order.

    A grid is a YAML mapping with ``fixed`` (parameters every set has), ``vary``
    (parameter -> list of values; every combination is one set, the last parameter
    changing fastest) and ``sets`` (a list of explicit sets, after the combinations).
    Values of ``vary`` and ``sets`` replace those of ``fixed``.

    Args:
        path: the grid file.
        known: the notebook's parameter names (None: names are not checked).

    Raises:
        ExperimentError: naming the file, the entry and the field.
    """
    data = read_yaml(Path(path), ExperimentError)
    if not isinstance(data, dict):
        raise ExperimentError(
            f"{path}: expected a mapping with {', '.join(GRID_KEYS)}, got {type(data).__name__}"
        )
    for key in data:
        if key not in GRID_KEYS:
            raise ExperimentError(
                f"{path}: unknown key {key!r} (a grid has {', '.join(GRID_KEYS)})"
            )
    fixed = _parameter_mapping(path, "fixed", data.get("fixed") or {}, known)
    vary = _parameter_mapping(path, "vary", data.get("vary") or {}, known)
    for name, values in vary.items():
        if not isinstance(values, list) or not values:
            raise ExperimentError(
                f"{path}: vary.{name}: expected a non-empty list of values, got {values!r}"
            )
    entries = data.get("sets") or []
    if not isinstance(entries, list):
        raise ExperimentError(f"{path}: sets: expected a list of parameter mappings")
    labelled = [
        (f"vary combination {i}", dict(zip(vary, values, strict=True)))
        for i, values in enumerate(itertools.product(*vary.values()) if vary else [])
    ]
    labelled += [
        (f"sets[{i}]", _parameter_mapping(path, f"sets[{i}]", entry, known))
        for i, entry in enumerate(entries)
    ]
    if not labelled:
        raise ExperimentError(f"{path}: no parameter sets (give vary, sets or both)")
    seen: dict[str, str] = {}
    chosen = []
    for label, values in labelled:
        parameters = {**fixed, **values}
        digest = parameters_hash(parameters)
        if digest in seen:
            raise ExperimentError(f"{path}: {label}: the same parameters as {seen[digest]}")
        seen[digest] = label
        chosen.append(parameters)
    return chosen


def _parameter_mapping(
    path: str | Path, label: str, values: Any, known: list[str] | None
) -> dict[str, Any]:
    """A grid entry checked to be a mapping of notebook parameters the sweep may set."""
    if not isinstance(values, dict):
        raise ExperimentError(
            f"{path}: {label}: expected a mapping of parameter -> value, got {values!r}"
        )
    for name in values:
        if name in RUN_PLACES:
            raise ExperimentError(
                f"{path}: {label}.{name}: set by the sweep (every run writes into its own folder)"
            )
        if known is not None and name not in known:
            raise ExperimentError(
                f"{path}: {label}.{name}: the notebook has no such parameter "
                f"(its parameters: {', '.join(known) or 'none'})"
            )
    return dict(values)


def parameters_hash(parameters: dict[str, Any]) -> str:
    """A short hash of a parameter set (canonical JSON), for its folder's name."""
    text = json.dumps(parameters, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def sweep_runs(sets: list[dict[str, Any]], directory: Path) -> list[SweepRun]:
    """Each parameter set with its folder ``directory/NNN-HASH``."""
    return [
        SweepRun(i, parameters, directory / f"{i:03d}-{parameters_hash(parameters)}")
        for i, parameters in enumerate(sets)
    ]


def run_sweep(
    name: str,
    grid: str | Path,
    output_dir: str | Path | None = None,
    workers: int | None = None,
    cluster: str | None = None,
    progress: bool = True,
) -> SweepSummary:
    """Run a notebook once per parameter set of a grid file, in parallel; resume on rerun.

    Each set runs with papermill in its own folder ``NNN-HASH``: the executed copy, its
    HTML export, ``run.json`` and, for the notebook's output parameters (``output_dir``,
    ``results_dir``, ...; :data:`RUN_PLACES`), their places inside the folder, so parallel
    runs never share an output. The sets run in a pool of worker processes, or on the
    Dask cluster at ``cluster`` (``local:N`` starts a local one; the workers must see this
    machine's file system). A failed set is recorded with its reason and the others go
    on; a rerun skips the sets that finished. ``summary.csv`` and ``summary.json`` list
    every set: parameters, folder, status, seconds, error, and the headline numbers of its
    manifest (episodes, errors, Pass@1, Task Score and the notebook's own).

    Args:
        name: the notebook's registered name.
        grid: the grid file (:func:`load_grid`).
        output_dir: the sweep's folder (default ``RUNS_DIR/sweeps/<name>-<grid file stem>``).
        workers: worker processes for a local sweep (default: one per CPU, at most one per
            set to run).
        cluster: a Dask scheduler address or ``local:N``, instead of local processes.
        progress: print a line as each set ends.

    Raises:
        ExperimentError: an unknown notebook, a bad grid file or no ``hasbench`` kernel.
        ClusterError: a malformed cluster address or no dask extra.
        ValueError: ``workers`` below 1.
    """
    from hasbench.runner.cluster import local_workers

    if workers is not None and workers < 1:
        raise ValueError(f"workers: must be at least 1, got {workers}")
    source = find_notebook(name)
    known = notebook_parameters(source)
    sets = load_grid(grid, known)
    if cluster is None or local_workers(cluster) is not None:
        require_kernel()  # a remote cluster's workers check their own
    directory = Path(output_dir or RUNS_DIR / "sweeps" / f"{name}-{Path(grid).stem}").resolve()
    runs = sweep_runs(sets, directory)
    records = {run.index: _finished(run) for run in runs}
    pending = [run for run in runs if records[run.index] is None]
    places = {parameter: place for parameter, place in RUN_PLACES.items() if parameter in known}
    calls = [
        (run, (name, {**run.parameters, **_places(run, places)}, str(run.directory)))
        for run in pending
    ]
    for done, (run, outcome) in enumerate(_outcomes(calls, workers, cluster), start=1):
        record = {
            "index": run.index,
            "directory": run.directory.name,
            "parameters": run.parameters,
            **outcome,
            "headline": _headline(run, places) if outcome["status"] == "ok" else {},
        }
        run.directory.mkdir(parents=True, exist_ok=True)
        (run.directory / RUN_RECORD).write_text(json.dumps(record, indent=2), encoding="utf-8")
        records[run.index] = record
        if progress:
            reason = f": {outcome['error']}" if outcome["error"] else ""
            print(
                f"[{done}/{len(pending)}] {run.directory.name} {outcome['status']} "
                f"after {outcome['seconds'] or 0:.1f} s{reason}",
                flush=True,
            )
    rows = [records[run.index] for run in runs]
    _write_summary(directory, rows)
    return SweepSummary(directory, rows, ran=len(pending), skipped=len(runs) - len(pending))


def execute_set(name: str, parameters: dict[str, Any], directory: str) -> dict[str, Any]:
    """Run one parameter set into ``directory`` (in a worker); return status, seconds, error."""
    start = time.perf_counter()
    error = None
    try:
        run_notebook(name, parameters, directory, progress=False)
    except NotebookError as failure:
        error = str(failure)
    except Exception as failure:  # a failed set is recorded; the sweep goes on
        error = f"{type(failure).__name__}: {failure}"
    return {
        "status": "ok" if error is None else "failed",
        "seconds": round(time.perf_counter() - start, 3),
        "error": error,
    }


def _places(run: SweepRun, places: dict[str, str]) -> dict[str, str]:
    """The notebook's output parameters pointed into the run's own folder."""
    return {parameter: str(run.directory / place) for parameter, place in places.items()}


def _headline(run: SweepRun, places: dict[str, str]) -> dict[str, Any]:
    """The headline numbers of a set's manifest (none when the notebook writes no manifest)."""
    if "output_dir" not in places:
        return {}
    path = run.directory / places["output_dir"] / MANIFEST
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")).get("headline") or {})
    except (OSError, json.JSONDecodeError):
        return {}


def _finished(run: SweepRun) -> dict[str, Any] | None:
    """The run's record when an earlier sweep finished it with the same parameters."""
    path = run.directory / RUN_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    done = record.get("status") == "ok" and record.get("parameters") == run.parameters
    return record if done else None


def _outcomes(
    calls: list[tuple[SweepRun, tuple[Any, ...]]], workers: int | None, cluster: str | None
) -> Iterator[tuple[SweepRun, dict[str, Any]]]:
    """Run :func:`execute_set` for every call; yield each run with its outcome as it ends."""
    if not calls:
        return
    if cluster is None:
        from concurrent.futures import as_completed

        from hasbench.runner.pool import machine_workers, worker_pool

        with worker_pool(min(workers or machine_workers(), len(calls))) as pool:
            futures = {pool.submit(execute_set, *arguments): run for run, arguments in calls}
            for future in as_completed(futures):
                yield futures[future], _outcome(future)
    else:
        from distributed import as_completed

        from hasbench.runner.cluster import dask_client

        with dask_client(cluster) as client:
            futures = {
                client.submit(execute_set, *arguments, pure=False): run for run, arguments in calls
            }
            for future in as_completed(futures):
                yield futures[future], _outcome(future)


def _outcome(future: Any) -> dict[str, Any]:
    """A finished future's outcome; a lost worker or process is a failed set."""
    try:
        return future.result()
    except Exception as failure:
        return {
            "status": "failed",
            "seconds": None,
            "error": f"{type(failure).__name__}: {failure}",
        }


def _write_summary(directory: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``summary.json`` and ``summary.csv`` into ``directory``.

    The CSV has one row per set: its index, folder, status, seconds, error, parameters (as
    JSON), then one column per headline number of the sets' manifests (``episodes``,
    ``errors``, ``pass1``, ``task_score`` and the notebook's own).
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    headline = list(dict.fromkeys(name for row in rows for name in row.get("headline") or {}))
    fields = ["index", "directory", "status", "seconds", "error", "parameters", *headline]
    with (directory / "summary.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fields, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            numbers = {name: _csv_value(v) for name, v in (row.get("headline") or {}).items()}
            parameters = json.dumps(row["parameters"], sort_keys=True)
            writer.writerow({**row, "parameters": parameters, **numbers})


def _csv_value(value: Any) -> Any:
    """A headline number as the CSV shows it (four decimals for a fraction)."""
    return round(value, 4) if isinstance(value, float) else value
