"""How much work a grid is before it runs: episodes to run, and a measured time estimate.

:func:`estimate` counts the grid's episodes and those already in the results store, then
times pending episodes (they are stored, so nothing is wasted) and extrapolates. Episodes
of one domain under one agency level take alike, those of different domains or levels do
not (a coding episode under A1 runs its tests in a sandbox and can take 50 times a retail
one), so each *stratum* (a backend × domain × agency level) is counted at its own rate.

Offline episodes are timed a task at a time, as a worker of the run meets them (the pool
gives all of a task's episodes to one worker, :mod:`hasbench.runner.pool`): for
:data:`OFFLINE_TASKS` tasks of each domain, spread over its tasks, every pending offline
episode of the task's first seed (all its backends and settings) runs here in grid order, so
what a domain caches per process (a coding task's test runs, by workspace content) serves
the task's later episodes in the plan as in the run; more seeds, then more tasks, follow
until each backend has :data:`OFFLINE_TIMED` timed episodes in the domain. A backend with a
local model in a role (``local/``, seconds per episode) is timed on the first episode of
each stratum only, those episodes side by side in the worker pool (a task's episodes at a
time to whichever worker is free, each at the seconds it took in its worker), and the rest
of its episodes run in the pool. A backend's first episode in a domain pays the start-up
(loading the domain, building its shared base) that the rest of the run does not, and is
left out of the rate when others ran. The rest runs in the worker pool (one worker per CPU
for a grid large enough, see :func:`hasbench.runner.pool.open_pool`), whose speedup over one
process depends on what else the machine runs: for a grid of :data:`CALIBRATED` pending
episodes or more it is measured by running, of each domain, a further task for each worker
in the pool (those episodes are kept too). A model backend is timed on one episode per
stratum, all at once, and runs up to its concurrency limit at a time.

Episodes count as stored as a run counts them: an intact record without an error; a
timed episode that ends in error is named, so it is fixed before the run. A backend is
the agent backend, or the agent with its user simulator when the grid compares user
simulators.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.runner import store as results
from hasbench.runner.execution import DEFAULT_CONCURRENCY, provider, run_one
from hasbench.runner.experiment import Cell, Experiment, resolve
from hasbench.runner.pool import EpisodePool, cpu_bound, open_pool
from hasbench.runner.progress import announce, duration
from hasbench.runner.reuse import adopt

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

OFFLINE_TASKS = 2
"""Tasks of each domain whose pending offline episodes of one seed are all timed."""
OFFLINE_TIMED = 4
"""Offline episodes timed per backend and domain at least (more seeds, then more tasks)."""
CALIBRATED = 64
"""Pending offline episodes from which the worker pool's speedup is measured on the grid."""


@dataclass
class Stratum:
    """Pending episodes of one backend in one domain under one agency level.

    Attributes:
        backend: the backend (see the module docstring).
        domain: the tasks' domain.
        agency: the settings' agency level.
        cells: its pending episodes, in grid order.
        times: seconds of its timed episodes that count for the rate.
        startup: seconds of its episode that paid the domain's start-up, if it had it.
        timed: its episodes timed (start-up ones included).
        finished: its timed episodes that finished without an error.
    """

    backend: str
    domain: str
    agency: str
    cells: list[Cell]
    times: list[float] = field(default_factory=list)
    startup: float | None = None
    timed: int = 0
    finished: int = 0

    @property
    def pending(self) -> int:
        """Episodes left to run after the timed ones (one in error runs again)."""
        return len(self.cells) - self.finished


@dataclass
class Plan:
    """The work of a grid, before it runs.

    Attributes:
        name: the experiment.
        key: the experiment's key.
        directory: its results store.
        shape: the grid's sizes: tasks, agent backends, settings, seeds.
        total: episodes in the grid.
        stored: episodes in the results store before the plan (a run skips them).
        measured: seconds per pending episode, per backend (its strata's rates weighted by
            their pending episodes).
        timed: episodes timed per backend.
        pending: episodes left to run after the timed ones, per backend.
        parallel: how many episodes' worth of work gets done at a time, per backend: the
            worker pool's measured speedup for an offline one, the concurrency limit for a
            model one.
        failed: the error of each backend whose timed episode ended in error.
        strata: the timed strata (backend × domain × agency level).
        planning_seconds: how long the plan took (its timed episodes included).
    """

    name: str
    key: str
    directory: Path
    shape: dict[str, int]
    total: int
    stored: int
    measured: dict[str, float] = field(default_factory=dict)
    timed: dict[str, int] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)
    parallel: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    strata: list[Stratum] = field(default_factory=list)
    planning_seconds: float = 0.0

    @property
    def to_run(self) -> int:
        """Episodes left to run."""
        return sum(self.pending.values())

    @property
    def seconds(self) -> float:
        """The estimated time to run them (from the measured episodes)."""
        return sum(self.measured[b] * self.pending[b] / self.parallel[b] for b in self.pending)

    def expected_seconds(self) -> dict[str, float]:
        """Seconds each offline episode of the grid should take in a worker, by key.

        Its stratum's warm episodes, else the one that paid the start-up (a local model's
        episode costs its model time either way), else its backend's rate. A run given
        these deals the tasks with the most work first (:func:`~hasbench.runner.run_experiment`).
        """
        expected = {}
        for stratum in self.strata:
            if not cpu_bound(stratum.cells[0].spec.backends):
                continue
            mine = [s for s in self.strata if s.backend == stratum.backend]
            seconds = (
                _rate(stratum, mine)
                if stratum.times or stratum.startup is None
                else stratum.startup
            )
            expected |= dict.fromkeys((cell.key for cell in stratum.cells), seconds)
        return expected

    def __str__(self) -> str:
        shape = " × ".join(f"{n} {what[:-1] if n == 1 else what}" for what, n in self.shape.items())
        text = f"{self.name}: {self.total} episodes ({shape}); "
        if self.stored == self.total:
            return text + "all of them are in the results store already."
        text += f"{self.stored} already in the results store."
        timed = ", ".join(
            f"{b} {duration(s)}" + (f" over {self.timed[b]} episodes" if self.timed[b] > 1 else "")
            for b, s in self.measured.items()
        )
        text = f"{text} Timed episodes per backend ({timed}): " + (
            f"the other {self.to_run} should take about {duration(self.seconds)}."
            if self.to_run
            else "they were the whole grid."
        )
        for backend, error in self.failed.items():
            text += f" The timed episode of {backend} ended in error ({error})."
        return text

    def _repr_markdown_(self) -> str:
        return f"**Plan.** {self}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(f"Plan. {self}")


async def estimate(
    experiment: Experiment,
    directory: str | Path | None = None,
    client: LLMClient | None = None,
    reuse: Sequence[Path] = (),
) -> Plan:
    """Count the grid's work and time a few pending episodes per stratum.

    The timed episodes are written to the results store like any other, so the run that
    follows skips them. Episodes that a store in ``reuse`` holds are copied first
    (:mod:`hasbench.runner.reuse`), so they are neither timed nor counted as work.
    """
    from hasbench.llm import LLMClient, ResponseCache

    started = time.monotonic()
    resolved = resolve(experiment)
    store = Path(directory) if directory is not None else experiment.default_dir()
    results.open_store(store, resolved)
    done, damaged = results.scan_store(store, resolved.keys, verify=True)
    results.quarantine(store, damaged)
    adopt(store, resolved.cells, done, reuse)
    if client is None:
        client = LLMClient(cache=ResponseCache.default(), concurrency=experiment.concurrency)
    users = {b.user for b in experiment.backends}
    strata: dict[tuple[str, str, str], Stratum] = {}
    for cell in resolved.cells:
        if cell.key in done and done[cell.key]["error"] is None:
            continue
        spec = cell.spec
        agent = spec.backends.agent
        backend = agent if len(users) == 1 else f"{agent} with {spec.backends.user}"
        where = (backend, spec.scenario.domain, spec.setting.agency)
        strata.setdefault(where, Stratum(*where, cells=[])).cells.append(cell)
    shape = resolved.shape()
    plan = Plan(
        name=experiment.name,
        key=resolved.key,
        directory=store,
        shape={
            "tasks": shape["tasks"],
            "agent backends": len({b.agent for b in experiment.backends}),
            **({"user simulators": len(users)} if len(users) > 1 else {}),
            "settings": shape["settings"],
            "seeds": shape["seeds"],
        },
        total=len(resolved.cells),
        stored=len(resolved.cells) - sum(len(s.cells) for s in strata.values()),
        strata=list(strata.values()),
    )
    offline = [s for s in plan.strata if cpu_bound(s.cells[0].spec.backends)]
    failed, speedup = await _time_offline(offline, resolved.cells, store, client)
    plan.failed.update(failed)
    for backend in dict.fromkeys(s.backend for s in plan.strata if s not in offline):
        error = await _time_model([s for s in plan.strata if s.backend == backend], store, client)
        if error is not None:
            plan.failed[backend] = error
    _summarize(plan, experiment, offline, speedup)
    plan.planning_seconds = time.monotonic() - started
    announce(f"Plan. {plan}")
    return plan


async def _time_offline(
    strata: list[Stratum], grid: list[Cell], store: Path, client: LLMClient
) -> tuple[dict[str, str], float]:
    """Time the strata's chosen episodes here, then measure the pool's speedup on more.

    Returns the error of each backend whose timed episode ended in error, and how many
    times the work of one process the run's worker pool gets done (1 without a pool).
    """
    where = {cell.key: stratum for stratum in strata for cell in stratum.cells}
    units = _units([cell for cell in grid if cell.key in where])
    failed: dict[str, str] = {}
    warm: set[tuple[str, str]] = set()

    async def time_here(cells: list[Cell]) -> None:
        for cell in cells:
            if where[cell.key].backend not in failed:
                began = time.monotonic()
                record = await run_one(cell.spec, cell.identity, cell.key, store, client)
                _timed(where[cell.key], record, time.monotonic() - began, failed, warm)

    chosen = _chosen(units, where)
    local = [cell for cell in chosen if _local(cell)]
    await time_here([cell for cell in chosen if not _local(cell)])
    pending = [cell for s in strata if s.backend not in failed for cell in s.cells]
    pool = open_pool([cell.spec for cell in pending], None, client, run_one)
    if pool is None:
        await time_here(local)
        return failed, 1.0
    try:
        records = await asyncio.gather(*(_in_pool(pool, cell, store) for cell in local))
        for cell, record in zip(local, records, strict=True):  # counted in grid order
            _timed(where[cell.key], record, pool.seconds[cell.key], failed, warm)
        return failed, await _speedup(pool, units, where, strata, store, failed)
    finally:
        pool.close()


async def _in_pool(pool: EpisodePool, cell: Cell, store: Path) -> dict[str, Any] | None:
    """Run an episode in the pool, admitted as a run admits it (a task's in one worker).

    The pool deals the tasks a task at a time to whichever worker is free: a local model's
    episodes differ in cost by several times, and a placement made before any ran left one
    worker idle for half the plan (35.7 against 14.3 CPU-s of model time in the robustness
    notebook's plan).
    """
    async with pool.slot(cell.spec):
        return await pool.run(cell.spec, cell.identity, cell.key, store)


def _timed(
    stratum: Stratum,
    record: dict[str, Any] | None,
    seconds: float,
    failed: dict[str, str],
    warm: set[tuple[str, str]],
) -> None:
    """Count a timed episode of ``stratum``: its error, or its seconds (as start-up or rate)."""
    stratum.timed += 1
    if record is not None and record["error"] is not None:
        failed.setdefault(stratum.backend, results.error_text(record["error"]))
        return
    stratum.finished += record is not None
    if (stratum.backend, stratum.domain) in warm:
        stratum.times.append(seconds)
    else:  # the backend's first episode in this domain pays its start-up
        warm.add((stratum.backend, stratum.domain))
        stratum.startup = seconds


async def _speedup(
    pool: EpisodePool,
    units: dict[str, list[list[Cell]]],
    where: dict[str, Stratum],
    strata: list[Stratum],
    store: Path,
    failed: dict[str, str],
) -> float:
    """How many times the work of this process the pool gets done, measured on the grid.

    A grid of at least :data:`CALIBRATED` pending episodes runs, of every domain, a further
    task for each worker in the pool (they are kept): what those episodes take one after
    the other at the measured rates, over the time the pool took, is its speedup. A smaller
    grid counts on every worker.
    """
    left = sum(s.pending for s in strata)
    if left < CALIBRATED:
        return float(pool.workers)
    batch = []  # per domain a task for each worker, so that every worker is busy throughout
    for queue in units.values():
        for unit in _task_per_worker(queue, pool):
            queue.remove(unit)
            batch += [cell for cell in unit if where[cell.key].backend not in failed]
    expected = sum(_rate(where[c.key], [s for s in strata if s.domain == where[c.key].domain])
                   for c in batch)  # fmt: skip
    began = time.monotonic()
    done = await asyncio.gather(*(_in_pool(pool, cell, store) for cell in batch))
    took = time.monotonic() - began
    for cell, record in zip(batch, done, strict=True):
        where[cell.key].finished += record is not None and record["error"] is None
    return max(1.0, min(float(pool.workers), expected / took if took > 0 else 1.0))


def _task_per_worker(queue: list[list[Cell]], pool: EpisodePool) -> list[list[Cell]]:
    """Units of ``queue`` (in order), of as many tasks as the pool has workers.

    A task the pool already dealt (its local-model episodes were timed there) runs in its
    worker again, so no two picked tasks share one: that worker would run both.
    """
    picked: dict[str, list[Cell]] = {}
    taken: set[int] = set()
    for unit in queue:
        task = unit[0].spec.scenario.task_id
        worker = pool.worker_of(task)
        if len(picked) == pool.workers or task in picked or worker in taken:
            continue
        picked[task] = unit
        if worker is not None:
            taken.add(worker)
    return list(picked.values())


def _chosen(units: dict[str, list[list[Cell]]], where: dict[str, Stratum]) -> list[Cell]:
    """The episodes to time, in grid order within each task (see the module docstring).

    The chosen episodes are taken off ``units``; what is left stays in its order.
    """
    chosen: list[Cell] = []
    for domain, queue in units.items():
        timed: dict[str, int] = {}
        met: set[int] = set()  # the strata of local-model backends with a chosen episode
        left: list[list[Cell]] = []
        taken = 0
        while queue and (
            taken < OFFLINE_TASKS or min(timed.values(), default=OFFLINE_TIMED) < OFFLINE_TIMED
        ):
            rest = []
            for cell in queue.pop(0):
                stratum = where[cell.key]
                if _local(cell):
                    if id(stratum) in met:
                        rest.append(cell)
                        continue
                    met.add(id(stratum))
                else:
                    timed[stratum.backend] = timed.get(stratum.backend, 0) + 1
                chosen.append(cell)
            left += [rest] if rest else []
            taken += 1
        units[domain] = left + queue
    return chosen


def _local(cell: Cell) -> bool:
    """Whether a local model plays a role of the episode (then it takes seconds)."""
    backends = cell.spec.backends
    return any(m.startswith("local/") for m in (backends.agent, backends.user, backends.judge))


def _units(cells: list[Cell]) -> dict[str, list[list[Cell]]]:
    """Per domain, its pending episodes in the order they are timed, a task's seed at a time.

    First the first seed of :data:`OFFLINE_TASKS` tasks spread over the domain's tasks, then
    their other seeds, then the other tasks; each unit is the task's episodes of one seed
    (every backend and setting) in grid order.
    """
    units: dict[str, dict[tuple[str, int], list[Cell]]] = {}
    for cell in cells:
        spec = cell.spec
        unit = units.setdefault(spec.scenario.domain, {})
        unit.setdefault((spec.scenario.task_id, spec.seed), []).append(cell)
    ordered = {}
    for domain, found in units.items():
        tasks = list(dict.fromkeys(task for task, _ in found))
        count = min(OFFLINE_TASKS, len(tasks))
        chosen = [tasks[i * len(tasks) // count] for i in range(count)]
        rest = [task for task in tasks if task not in chosen]
        keys = sorted(
            found,
            key=lambda unit: (
                unit[0] not in chosen,
                unit[1] != min(seed for task, seed in found if task == unit[0]),
                (chosen + rest).index(unit[0]),
            ),
        )
        ordered[domain] = [found[key] for key in keys]
    return ordered


async def _time_model(strata: list[Stratum], store: Path, client: LLMClient) -> str | None:
    """Time a model backend on one episode per stratum, all at once; the first error."""

    async def one(stratum: Stratum) -> dict[str, Any] | None:
        cell = stratum.cells[0]
        began = time.monotonic()
        record = await run_one(cell.spec, cell.identity, cell.key, store, client)
        stratum.timed += 1
        stratum.times.append(time.monotonic() - began)
        stratum.finished += record is not None and record["error"] is None
        return record

    records = await asyncio.gather(*(one(stratum) for stratum in strata))
    errors = [r["error"] for r in records if r is not None and r["error"] is not None]
    return results.error_text(errors[0]) if errors else None


def _summarize(plan: Plan, experiment: Experiment, offline: list[Stratum], speedup: float) -> None:
    """Per backend: its rate, timed and pending episodes, and how many run at a time.

    Offline episodes run in the worker pool, which gets ``speedup`` times the work of one
    process done (measured, see :func:`_speedup`).
    """
    for backend in dict.fromkeys(s.backend for s in plan.strata):
        mine = [s for s in plan.strata if s.backend == backend]
        rates = {id(s): _rate(s, mine) for s in mine}
        pending = sum(s.pending for s in mine)
        plan.pending[backend] = pending
        plan.timed[backend] = sum(s.timed for s in mine)
        plan.measured[backend] = (
            sum(rates[id(s)] * s.pending for s in mine) / pending
            if pending
            else sum(rates.values()) / len(rates)
        )
        if mine[0] in offline:
            plan.parallel[backend] = max(1.0, min(speedup, pending))
        else:
            group = provider(mine[0].cells[0].spec.backends.agent)
            limit = experiment.concurrency.get(group, DEFAULT_CONCURRENCY)
            plan.parallel[backend] = max(1, min(limit, pending))


def _rate(stratum: Stratum, strata: list[Stratum]) -> float:
    """Seconds per episode of a stratum: its warm episodes, else its domain's, else its first.

    A stratum never timed (its backend failed first) counts at the backend's rate.
    """
    if stratum.times:
        return sum(stratum.times) / len(stratum.times)
    for pool in ([s for s in strata if s.domain == stratum.domain], strata):
        times = [t for s in pool for t in s.times]
        if times:
            return sum(times) / len(times)
    startups = [s.startup for s in strata if s.startup is not None]
    return sum(startups) / len(startups) if startups else 0.0
