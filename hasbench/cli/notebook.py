"""``hasbench notebook``: execute a registered notebook, every figure notebook, or a sweep."""

from __future__ import annotations

import argparse
from typing import Any

from hasbench.cli.options import number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``notebook`` command."""
    p = sub.add_parser(
        "notebook", help="execute a registered notebook with papermill; also write it as HTML"
    )
    p.add_argument(
        "name", metavar="NAME",
        help="the notebook's registered name, e.g. rq1; 'all' runs every figure notebook and "
        "writes figures/index.html",
    )  # fmt: skip
    p.add_argument(
        "-p", "--parameter", nargs=2, action="append", metavar=("KEY", "VALUE"),
        help="notebook parameter (VALUE is read as YAML); repeatable",
    )  # fmt: skip
    p.add_argument(
        "--output-dir", metavar="D",
        help="where the executed copy goes (with --grid: the sweep's folder, default "
        "runs/sweeps/NAME-GRID)",
    )  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no cell and progress lines")
    p.add_argument(
        "--grid", metavar="FILE",
        help="run once per parameter set of FILE (YAML: fixed, vary, sets), in parallel, "
        "each in its own folder; a rerun skips finished sets",
    )  # fmt: skip
    p.add_argument(
        "--workers", type=number(int, least=1), metavar="N",
        help="with --grid: worker processes (default: one per CPU)",
    )  # fmt: skip
    p.add_argument(
        "--cluster", metavar="ADDRESS",
        help="with --grid: run the sets on a Dask cluster (scheduler address, or local:N)",
    )  # fmt: skip
    p.set_defaults(func=cmd_notebook)


def cmd_notebook(args: argparse.Namespace) -> int:
    """Execute a notebook (or, for ``all``, every figure notebook and the index) with papermill.

    Prints where the executed copy and its HTML export are (for ``all``, the index page).
    """
    import yaml

    from hasbench.runner import run_notebook

    parameters = {key: yaml.safe_load(value) for key, value in args.parameter or []}
    if args.grid is not None:
        return notebook_sweep(args, parameters)
    if args.workers is not None or args.cluster is not None:
        raise ValueError("--workers and --cluster run a sweep: give the parameter sets with --grid")
    if args.name == "all":
        from hasbench.experiments.figures_index import run_all

        print(run_all(parameters, args.output_dir, progress=not args.quiet))
        return 0
    executed = run_notebook(args.name, parameters, args.output_dir, progress=not args.quiet)
    print(f"executed notebook: {executed}")
    print(f"HTML report (opens without a kernel): {executed.with_suffix('.html')}")
    return 0


def notebook_sweep(args: argparse.Namespace, parameters: dict[str, Any]) -> int:
    """Run ``hasbench notebook NAME --grid FILE``; exit status 1 when a parameter set failed."""
    from hasbench.runner.notebooks import run_sweep

    if args.name == "all":
        raise ValueError("--grid sweeps one notebook: name it instead of 'all'")
    if parameters:
        raise ValueError("-p does not combine with --grid: put the values under the grid's fixed")
    sweep = run_sweep(
        args.name, args.grid, args.output_dir, args.workers, args.cluster, not args.quiet
    )
    failed = sweep.failed
    print(
        f"sweep of {args.name}: {len(sweep.rows)} parameter set(s), ran {sweep.ran}, "
        f"skipped {sweep.skipped} finished earlier, {len(failed)} failed"
    )
    for row in failed:
        print(f"  failed {row['directory']}: {row['error']}")
    print(f"summary: {sweep.directory / 'summary.csv'}")
    return 1 if failed else 0
