"""Coding domain timings: sandboxed runs cold and warm, and the checks of every coding task.

1. Runs: for a spread of tasks, the runs an episode makes on the workspace the task's gold
   path produces: its hidden tests, its visible tests (``run_tests``) and a command
   (``run_command python -c ...``), each done cold (a new bubblewrap sandbox and
   interpreter per run, as every run was before warm sandboxes) and warm
   (:mod:`hasbench.envs.coding.warm`), alternated so that both see the same load, with no
   run cache. Printed: median milliseconds per run of each kind, cold / warm, the CPU time
   a warm run takes in its sandbox (read from ``/proc``: this process never reaps the
   sandboxes' processes, so its own CPU figures leave them out), and the ratio of the
   totals (the warm workers' start-up included). The verdicts and outputs of both are
   compared: they must be the same.
2. ``hasbench check data/tasks/coding.yaml``: wall seconds for the 115 tasks as the command
   runs them (warm, its default worker processes, fresh workers and no run cache);
   ``--cold-check`` also times it with cold runs and prints the ratio.
3. Sandbox overhead: an empty command under bubblewrap against the same command direct.

    .venv/bin/python benchmarks/coding.py [--tasks N] [--rounds N] [--cold-check] [--no-check]

:func:`coding_figures` returns the same figures for other scripts (``benchmarks/targets.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from hasbench.build.checks import check_file
from hasbench.envs.coding import CodingEnvironment, warm
from hasbench.envs.coding import environment as coding
from hasbench.envs.coding.sandbox import UNSAFE_ENV, Sandbox, sandbox_mode
from hasbench.evaluate import replay_gold
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks

CODING_TASKS = TASKS_DIR / "coding.yaml"
KINDS = ("hidden", "tests", "command")


@contextlib.contextmanager
def cold_runs() -> Iterator[None]:
    """Coding environments made inside run every command cold (a new sandbox each)."""
    before = CodingEnvironment.sandbox_type
    CodingEnvironment.sandbox_type = Sandbox
    try:
        yield
    finally:
        CodingEnvironment.sandbox_type = before


def _one_run(env: CodingEnvironment, kind: str) -> tuple[object, float]:
    """One run of a kind on the environment's workspace (no cache): (what it gave, seconds)."""
    coding.clear_run_cache()
    env._hidden = None
    start = time.perf_counter()
    if kind == "hidden":
        results = env.hidden_results()
        gave: object = (results.status, results.passed, results.lines)
    elif kind == "tests":
        gave = env.run_tests()
    else:
        gave = env.run_command("python -c \"print('hello')\"")
    return gave, time.perf_counter() - start


def sandbox_cpu() -> float:
    """CPU seconds used so far by this process's warm workers and the runs they ended.

    Read from ``/proc`` (the workers' processes are never reaped by this one, so
    :func:`resource.getrusage` does not count them): each process of a worker's tree with
    the children it reaped, which are the runs.
    """
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for worker in list(warm._ALL):
        pids = [worker.process.pid] if worker.process is not None else []
        while pids:
            pid = pids.pop()
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            pids += [int(child) for child in children]
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / tick


def run_costs(tasks: int = 12, rounds: int = 2) -> dict[str, float]:
    """Seconds per run cold and warm, alternated, over ``tasks`` tasks spread over the file.

    Returns:
        ``{kind}_cold`` and ``{kind}_warm`` (median seconds per run), ``{kind}_warm_cpu``
        (mean CPU seconds of a warm run in its sandbox, :func:`sandbox_cpu`, counted in
        clock ticks; the first run of a kind, which starts its worker, left out),
        ``cold_total`` and ``warm_total`` (seconds, worker start-up included), ``ratio``
        (cold / warm totals) and ``episode_ratio`` (the same for the hidden and visible
        tests only: the runs an offline coding episode makes).
    """
    scenarios = load_tasks(CODING_TASKS)
    chosen = scenarios[:: max(1, len(scenarios) // tasks)][:tasks]
    warm.stop_workers()
    ways = ("cold", "warm")
    times: dict[str, list[float]] = {f"{kind}_{way}": [] for kind in KINDS for way in ways}
    times |= {f"{kind}_warm_cpu": [] for kind in KINDS}
    for scenario in chosen:
        env, _ = replay_gold(scenario)
        for _ in range(rounds):
            for kind in KINDS:
                gave = {}
                for way, sandbox_type in (("cold", Sandbox), ("warm", warm.WarmSandbox)):
                    env.sandbox = sandbox_type(env.sandbox.limits)
                    cpu = sandbox_cpu()
                    gave[way], seconds = _one_run(env, kind)
                    times[f"{kind}_{way}"].append(seconds)
                    if way == "warm":
                        times[f"{kind}_warm_cpu"].append(sandbox_cpu() - cpu)
                if gave["cold"] != gave["warm"]:
                    raise AssertionError(f"{scenario.task_id} {kind}: warm and cold runs differ")
    figures = {name: statistics.median(values) for name, values in times.items()}
    for kind in KINDS:
        samples = times[f"{kind}_warm_cpu"]
        figures[f"{kind}_warm_cpu"] = statistics.mean(samples[1:] or samples)
    for way in ("cold", "warm"):
        figures[f"{way}_total"] = sum(sum(times[f"{kind}_{way}"]) for kind in KINDS)
        figures[f"{way}_episode"] = sum(sum(times[f"{kind}_{way}"]) for kind in KINDS[:2])
    figures["ratio"] = figures["cold_total"] / figures["warm_total"]
    figures["episode_ratio"] = figures["cold_episode"] / figures["warm_episode"]
    figures["runs"] = len(times["hidden_cold"])
    return figures


def check_seconds(cold: bool = False) -> float:
    """Wall seconds of the checks of every coding task (``hasbench check``'s defaults)."""
    coding.clear_run_cache()
    warm.stop_workers()
    with cold_runs() if cold else contextlib.nullcontext():
        start = time.perf_counter()
        rows = check_file(CODING_TASKS)
        seconds = time.perf_counter() - start
    failed = [row.task_id for row in rows if not row.passed]
    if failed:
        raise AssertionError(f"checks failed: {failed}")
    return seconds


def coding_figures(
    tasks: int = 12, rounds: int = 2, check: bool = True, cold_check: bool = False
) -> dict[str, float]:
    """The figures this script prints (see the module docstring), by name."""
    figures = {f"runs_{name}": value for name, value in run_costs(tasks, rounds).items()}
    if check:
        figures["check_seconds"] = check_seconds()
        figures["check_tasks"] = len(load_tasks(CODING_TASKS))
    if cold_check:
        figures["check_cold_seconds"] = check_seconds(cold=True)
    return figures


def sandbox_overhead(runs: int) -> tuple[float, float]:
    """Median seconds of a cold run of ``true``: under bubblewrap, and started directly."""
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
    return statistics.median(sandboxed), statistics.median(direct)


def main() -> None:
    """Print the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12, help="tasks whose runs are timed")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each kind per task")
    parser.add_argument("--overhead-runs", type=int, default=20, help="empty runs")
    parser.add_argument("--no-check", action="store_true", help="skip timing the checks")
    parser.add_argument("--cold-check", action="store_true", help="also time cold checks")
    args = parser.parse_args()
    print(f"sandbox: {sandbox_mode()}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs (a shared machine slows wall time)")  # fmt: skip
    sandboxed, direct = sandbox_overhead(args.overhead_runs)
    print(f"empty command: bubblewrap {1000 * sandboxed:.1f} ms, direct {1000 * direct:.1f} ms "
          f"(median of {args.overhead_runs})")  # fmt: skip
    figures = coding_figures(args.tasks, args.rounds, not args.no_check, args.cold_check)
    print(f"runs on the gold workspaces of {args.tasks} tasks, {figures['runs_runs']} of each "
          "kind, cold and warm alternated (same verdicts and outputs):")  # fmt: skip
    for kind in KINDS:
        cold, hot = figures[f"runs_{kind}_cold"], figures[f"runs_{kind}_warm"]
        print(f"  {kind:8s} cold {1000 * cold:7.1f} ms  warm {1000 * hot:7.1f} ms  "
              f"{cold / hot:.1f}x (median per run); a warm run's CPU in its sandbox "
              f"{1000 * figures[f'runs_{kind}_warm_cpu']:.1f} ms")  # fmt: skip
    print(f"  every run: cold {figures['runs_cold_total']:.1f} s, warm "
          f"{figures['runs_warm_total']:.1f} s with the workers' start: "
          f"{figures['runs_ratio']:.1f}x cheaper; an offline episode's runs (hidden and "
          f"visible tests) {figures['runs_episode_ratio']:.1f}x  [target >= 3x]")  # fmt: skip
    if "check_seconds" in figures:
        print(f"hasbench check {CODING_TASKS.name}: {figures['check_tasks']} tasks in "
              f"{figures['check_seconds']:.1f} s  [target <= 10 s on two quiet cores]")  # fmt: skip
    if "check_cold_seconds" in figures:
        print(f"  with cold runs: {figures['check_cold_seconds']:.1f} s, "
              f"{figures['check_cold_seconds'] / figures['check_seconds']:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
