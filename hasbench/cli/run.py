"""``hasbench run`` and ``results``: experiment grids run or resumed, and their summary tables."""

from __future__ import annotations

import argparse

from hasbench.cli.options import add_endpoint_options, apply_endpoints, endpoint_overrides, number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` and ``results`` commands."""
    p = sub.add_parser("run", help="run or resume an experiment grid (EXPERIMENT.yaml)")
    p.add_argument("experiment", metavar="EXPERIMENT.yaml", help="an experiment file")
    p.add_argument("--out", metavar="DIR", help="results directory (default: runs/<name>)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--workers", type=number(int, least=1), metavar="N",
        help="worker processes for offline (CPU-bound) episodes (default: one per CPU; 1: none)",
    )  # fmt: skip
    p.add_argument(
        "--cluster", metavar="ADDRESS",
        help="run the episodes on a Dask cluster (scheduler address, or local:N to start one)",
    )  # fmt: skip
    p.add_argument(
        "--max-calls", type=number(int, least=1), metavar="N", help="stop after N model calls"
    )
    p.add_argument(
        "--max-cost", type=number(float, above=0), metavar="USD", help="stop after spending USD"
    )
    add_endpoint_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("results", help="print the summary table of a results directory")
    p.add_argument("directory", metavar="DIR", help="a results directory")
    p.add_argument(
        "--experiment",
        metavar="KEY",
        help="which experiment of the store (key or name; default: the one run last)",
    )
    p.set_defaults(func=cmd_results)


def cmd_run(args: argparse.Namespace) -> int:
    """Run (or resume) an experiment grid into its results store.

    Exits 0 when every episode has a result, 1 when any ended in error or a backend was
    stopped, 3 when the budget stopped the run early (run again to go on).
    """
    from hasbench.runner import RunBudget, load_experiment, run_experiment
    from hasbench.sync import run_sync

    experiment = load_experiment(args.experiment)
    overrides = endpoint_overrides(args)
    changes: dict[str, object] = {}
    if overrides:
        changes["backends"] = [apply_endpoints(b, overrides) for b in experiment.backends]
    if args.max_calls is not None or args.max_cost is not None:
        budget = experiment.budget.model_dump() if experiment.budget else {}
        for name in ("max_calls", "max_cost"):
            if getattr(args, name) is not None:
                budget[name] = getattr(args, name)
        changes["budget"] = RunBudget.model_validate(budget)
    experiment = experiment.model_copy(update=changes)
    done = run_sync(
        run_experiment(
            experiment,
            args.out,
            progress=not args.quiet,
            workers=args.workers,
            cluster=args.cluster,
        )
    )
    cost = f", ${done.cost:.4f}" if done.cost else ""
    print(
        f"{done.directory}: {done.total} episodes, {done.ran} run, {done.skipped} already "
        f"done, {done.failed} ended in error, {done.not_started} not started; "
        f"{done.model_calls} model calls, {done.cache_hits} cache hits{cost}"
    )
    for item in done.quarantined:
        print(f"quarantined (run again): {item}")
    if done.failed:
        print(
            f"{done.failed} episode(s) ended in error (left out of every number; the next "
            f"run retries them): hasbench results {done.directory} lists them"
        )
    if done.stopped:
        print(f"{len(done.stopped)} backend(s) stopped (see the message above)")
    if done.budget:
        print(f"stopped early: {done.budget}; run again to go on")
    if done.failed or done.stopped:
        return 1
    return 3 if done.not_started else 0


def cmd_results(args: argparse.Namespace) -> int:
    """Print one experiment of a results store; exit 1 when damaged files were skipped."""
    from hasbench.report import results_report

    text, status = results_report(args.directory, args.experiment)
    print(text)
    return status
