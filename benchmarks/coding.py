"""Coding domain timings: sandbox overhead, hidden-test runs, oracle episodes per second.

1. Sandbox overhead: wall time from starting bubblewrap to its exit for an empty command
   (``true``), against the same command started directly (with the same ``prlimit``).
2. Hidden tests: per task, the time to run its hidden acceptance suite on the workspace
   the reference patch produces (no run cache).
3. Oracle throughput: ``scripted:oracle`` episodes under A3 over the domain, per second,
   simulation alone and simulation plus evaluation (cold run cache).

    .venv/bin/python benchmarks/coding.py [--runs N] [--tasks N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from hasbench.agency import Setting
from hasbench.build.builder import replay_gold
from hasbench.envs.coding import environment as coding
from hasbench.envs.coding.sandbox import UNSAFE_ENV, Sandbox, sandbox_mode
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, run_episode


def sandbox_overhead(runs: int) -> tuple[list[float], list[float]]:
    """Seconds per run of ``true``: under bubblewrap, and started directly (unsafe mode)."""
    sandbox = Sandbox()
    sandboxed, direct = [], []
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        workspace.chmod(0o755)
        for _ in range(runs):
            start = time.perf_counter()
            result = sandbox.run(["true"], workspace, writable=False)
            sandboxed.append(time.perf_counter() - start)
            assert result.status == "ok", result
            os.environ[UNSAFE_ENV] = "1"  # the same run without bubblewrap
            try:
                start = time.perf_counter()
                sandbox.run(["true"], workspace, writable=False)
                direct.append(time.perf_counter() - start)
            finally:
                del os.environ[UNSAFE_ENV]
    return sandboxed, direct


def hidden_times(tasks) -> list[tuple[str, float, int, int]]:
    """(task, seconds, passed, total) of each task's hidden suite on the gold workspace."""
    rows = []
    for scenario in tasks:
        env = replay_gold(scenario)
        coding.clear_run_cache()
        start = time.perf_counter()
        results = env.hidden_results()
        seconds = time.perf_counter() - start
        rows.append((scenario.task_id, seconds, sum(results.passed.values()), len(results.passed)))
    return rows


def oracle_rate(tasks) -> tuple[float, float, int]:
    """(episodes/s simulated, episodes/s simulated and evaluated, successes)."""
    setting, backends = Setting(agency="A3", persona="default"), Backends()
    judge = make_judge("rule")
    coding.clear_run_cache()
    start = time.perf_counter()
    traces = [run_episode(s, setting, backends) for s in tasks]
    simulated = time.perf_counter() - start
    coding.clear_run_cache()
    start = time.perf_counter()
    successes = 0
    for scenario in tasks:
        trace = run_episode(scenario, setting, backends)
        successes += asyncio.run(evaluate(scenario, trace, judge)).success
    both = time.perf_counter() - start
    assert len(traces) == len(tasks)
    return len(tasks) / simulated, len(tasks) / both, successes


def main() -> None:
    """Print the three measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="empty runs for the overhead")
    parser.add_argument("--tasks", type=int, default=0, help="first N tasks (0: all)")
    args = parser.parse_args()
    print(f"sandbox: {sandbox_mode()}")
    sandboxed, direct = sandbox_overhead(args.runs)
    print(
        f"empty command, {args.runs} runs: bubblewrap {1000 * statistics.median(sandboxed):.1f} ms "
        f"median ({1000 * statistics.mean(sandboxed):.1f} mean), direct "
        f"{1000 * statistics.median(direct):.1f} ms median; sandbox overhead "
        f"{1000 * (statistics.median(sandboxed) - statistics.median(direct)):.1f} ms per run"
    )
    tasks = load_tasks(TASKS_DIR / "coding.yaml")
    if args.tasks:
        tasks = tasks[: args.tasks]
    rows = hidden_times(tasks)
    seconds = [row[1] for row in rows]
    passed = sum(row[2] == row[3] for row in rows)
    slowest = max(rows, key=lambda row: row[1])
    print(
        f"hidden tests, {len(rows)} tasks: {statistics.median(seconds):.3f} s median, "
        f"{statistics.mean(seconds):.3f} s mean, {slowest[1]:.3f} s max ({slowest[0]}); "
        f"{passed}/{len(rows)} gold workspaces pass every hidden test"
    )
    simulated, evaluated, successes = oracle_rate(tasks)
    print(
        f"oracle episodes (A3), {len(tasks)} tasks: {simulated:.2f} episodes/s simulated, "
        f"{evaluated:.2f} episodes/s simulated + evaluated; {successes}/{len(tasks)} succeed"
    )


if __name__ == "__main__":
    main()
