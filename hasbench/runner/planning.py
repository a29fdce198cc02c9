"""How much work a grid is before it runs: episodes to run, and a measured time estimate.

:func:`estimate` counts the grid's episodes and those already in the results store, then
times pending episodes (they are stored, so nothing is wasted) and extrapolates. Episodes
of one domain under one agency level take alike, those of different domains or levels do
not (a coding episode under A1 runs its tests in a sandbox and can take 50 times a retail
one), so the grid is timed per *stratum*: a backend × domain × agency level. An offline
backend is timed on at least two episodes per stratum (at least :data:`OFFLINE_TIMED` in
all), spread over the stratum's tasks and settings; a backend's first episode in a domain
pays the start-up (loading the domain, building its shared base) that the rest of the run
does not, and is left out of the rate when others ran. A model backend is timed on one
episode per stratum, all at once. Each stratum's pending episodes are then counted at
its own rate.

Episodes count as stored as a run counts them: an intact record without an error; a
timed episode that ends in error is named, so it is fixed before the run. A backend is
the agent backend, or the agent with its user simulator when the grid compares user
simulators. Offline episodes run in the worker pool the run will open (one worker per CPU
for a grid large enough, see :func:`hasbench.runner.pool.open_pool`); model backends up to
their concurrency limit at a time.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.runner import store as results
from hasbench.runner.execution import DEFAULT_CONCURRENCY, provider, run_one
from hasbench.runner.experiment import Cell, Experiment, resolve
from hasbench.runner.pool import MIN_POOL_EPISODES, cpu_bound, machine_workers
from hasbench.runner.progress import announce, duration

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

OFFLINE_TIMED = 4
"""Episodes timed per offline backend at least (two or more per stratum, the first of each
domain paying the start-up)."""


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
        parallel: episodes run at a time, per backend.
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
    parallel: dict[str, int] = field(default_factory=dict)
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
    experiment: Experiment, directory: str | Path | None = None, client: LLMClient | None = None
) -> Plan:
    """Count the grid's work and time a few pending episodes per stratum.

    The timed episodes are written to the results store like any other, so the run that
    follows skips them.
    """
    from hasbench.llm import LLMClient, ResponseCache

    started = time.monotonic()
    resolved = resolve(experiment)
    store = Path(directory) if directory is not None else experiment.default_dir()
    results.open_store(store, resolved)
    done, damaged = results.scan_store(store, resolved.keys, verify=True)
    results.quarantine(store, damaged)
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
    for backend in dict.fromkeys(s.backend for s in plan.strata):
        mine = [s for s in plan.strata if s.backend == backend]
        if mine[0] in offline:
            error = await _time_offline(mine, store, client)
        else:
            error = await _time_model(mine, store, client)
        if error is not None:
            plan.failed[backend] = error
    _summarize(plan, experiment, offline)
    plan.planning_seconds = time.monotonic() - started
    announce(f"Plan. {plan}")
    return plan


async def _time_offline(strata: list[Stratum], store: Path, client: LLMClient) -> str | None:
    """Time an offline backend's strata one episode at a time; the error that stopped it."""
    per_stratum = max(2, math.ceil(OFFLINE_TIMED / len(strata)))
    warm: set[str] = set()
    for stratum in strata:
        for cell in _spread(stratum.cells, per_stratum):
            began = time.monotonic()
            record = await run_one(cell.spec, cell.identity, cell.key, store, client)
            seconds = time.monotonic() - began
            stratum.timed += 1
            if record is not None and record["error"] is not None:
                return results.error_text(record["error"])
            stratum.finished += record is not None
            if stratum.domain in warm:
                stratum.times.append(seconds)
            else:  # the backend's first episode in this domain pays its start-up
                warm.add(stratum.domain)
                stratum.startup = seconds
    return None


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


def _spread(cells: list[Cell], count: int) -> list[Cell]:
    """Up to ``count`` cells spread evenly over the list (its first one included)."""
    if len(cells) <= count:
        return list(cells)
    return [cells[i * len(cells) // count] for i in range(count)]


def _summarize(plan: Plan, experiment: Experiment, offline: list[Stratum]) -> None:
    """Per backend: its rate, timed and pending episodes, and how many run at a time."""
    workers = machine_workers() if sum(s.pending for s in offline) >= MIN_POOL_EPISODES else 1
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
            plan.parallel[backend] = max(1, min(workers, pending))
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
