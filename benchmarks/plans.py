"""How well each figure notebook's plan predicts its run (issue 25: within 1.5x).

For every offline grid of ``hasbench notebook all`` (RQ1-RQ4 and the simulator study, with
the notebooks' default parameters), in a fresh results store and a fresh process (as each
notebook runs in its own kernel): the plan cell's estimate of the episodes it leaves to run
(``study.plan``), then the run (``study.run``), and the run's time beside the estimate. The
ratio is actual / estimate; the target is 1/1.5 to 1.5.

    .venv/bin/python benchmarks/plans.py [--only rq1 rq3] [--max-tasks N]

``--max-tasks`` caps the tasks per domain (smaller grids, a quicker look); without it the
grids are the notebooks' own.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hasbench.experiments import robustness, rq1, rq2, rq3, rq4
from hasbench.runner.notebooks import figure_notebooks, notebook_parameters
from hasbench.runner.progress import duration

STUDIES = {"rq1": rq1, "rq2": rq2, "rq3": rq3, "rq4": rq4, "robustness": robustness}
TOLERANCE = 1.5


def defaults(name: str) -> dict:
    """The notebook's parameters cell, as the study functions take them."""
    import papermill

    from hasbench.runner.notebooks import find_notebook

    found = papermill.inspect_notebook(str(find_notebook(name)))
    assert set(found) >= set(notebook_parameters(find_notebook(name)))
    values = {key: eval(spec["default"]) for key, spec in found.items()}  # noqa: S307 - our own cells
    return {k: v for k, v in values.items() if k not in ("output_dir", "results_dir")}


def measure(name: str, max_tasks: int | None, root: Path) -> float:
    """Plan and run one study into a fresh store; print the estimate and the actual time."""
    module = STUDIES[name]
    parameters = defaults(name)
    if max_tasks is not None:
        parameters["max_tasks_per_domain"] = max_tasks
    results, output = root / name / "runs", root / name / "figures"
    began = time.perf_counter()
    plans = module.plan(**parameters, results_dir=results)
    planned = time.perf_counter() - began
    estimate = sum(plan.seconds for plan in plans)
    began = time.perf_counter()
    done = module.run(**parameters, output_dir=output, results_dir=results, progress=False)
    whole = time.perf_counter() - began
    actual = sum(summary.seconds for summary in done["summaries"])
    episodes = sum(summary.ran for summary in done["summaries"])
    ratio = actual / estimate if estimate else float("nan")
    verdict = "ok" if 1 / TOLERANCE <= ratio <= TOLERANCE else "MISSED"
    if not episodes:
        verdict = "the plan timed the whole grid"
    print(
        f"{name:<11} {sum(p.total for p in plans):>5} episodes: plan {duration(planned)} "
        f"(timed {sum(sum(p.timed.values()) for p in plans)}); the other {episodes} estimated "
        f"{duration(estimate)}, ran in {duration(actual)}: ratio {ratio:.2f} "
        f"[target {1 / TOLERANCE:.2f}-{TOLERANCE}: {verdict}]; tables and figures "
        f"{duration(whole - actual)}",
        flush=True,
    )
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(STUDIES), default=None)
    parser.add_argument("--max-tasks", type=int, default=None, help="tasks per domain")
    parser.add_argument("--here", metavar="DIR", help=argparse.SUPPRESS)  # one study, in DIR
    args = parser.parse_args()
    if args.here is not None:
        (name,) = args.only
        measure(name, args.max_tasks, Path(args.here))
        return
    names = [n.name for n in figure_notebooks() if n.name in STUDIES]
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or names:
            extra = [] if args.max_tasks is None else ["--max-tasks", str(args.max_tasks)]
            subprocess.run([sys.executable, __file__, "--only", name, "--here", tmp, *extra],
                           check=True, stderr=subprocess.DEVNULL)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
