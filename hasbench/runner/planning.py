"""How much work a grid is before it runs: episodes to run, and a measured time estimate.

:func:`estimate` counts the grid's episodes and those already in the results store, then
times pending episodes per backend (they are stored, so nothing is wasted) and extrapolates.
A model backend is timed on one episode. An offline backend is timed on up to
:data:`OFFLINE_TIMED` episodes and the first is left out of the rate when others ran,
because it pays the start-up (loading the domain, building its shared base) that the rest
of the run does not. Episodes count as stored as a run counts them: an intact record
without an error; a timed episode that ends in error is named, so it is fixed before the
run. A backend is the agent backend, or the agent with its user simulator when the grid
compares user simulators. Offline episodes run in the worker pool the run will open (one
worker per CPU for a grid large enough, see :func:`hasbench.runner.pool.open_pool`); model
backends up to their concurrency limit at a time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.prompts import prompt_hashes
from hasbench.runner import store as results
from hasbench.runner.execution import DEFAULT_CONCURRENCY, provider, run_one
from hasbench.runner.experiment import Experiment, episode_key, grid
from hasbench.runner.pool import MIN_POOL_EPISODES, cpu_bound, machine_workers
from hasbench.runner.progress import announce, duration

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

OFFLINE_TIMED = 4
"""Episodes timed per offline backend (the first one pays the start-up)."""


@dataclass
class Plan:
    """The work of a grid, before it runs.

    Attributes:
        name: the experiment.
        shape: the grid's sizes: tasks, agent backends, settings, seeds.
        total: episodes in the grid.
        stored: episodes in the results store before the plan (a run skips them).
        measured: seconds per episode, per backend, from the timed episodes (they are
            stored).
        timed: episodes timed per backend.
        pending: episodes left to run after the timed ones, per backend.
        parallel: episodes run at a time, per backend.
        failed: the error of each backend whose timed episode ended in error.
    """

    name: str
    shape: dict[str, int]
    total: int
    stored: int
    measured: dict[str, float] = field(default_factory=dict)
    timed: dict[str, int] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)
    parallel: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

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
    """Count the grid's work and time a few pending episodes per backend.

    The timed episodes are written to the results store like any other, so the run that
    follows skips them.
    """
    from hasbench.llm import LLMClient, ResponseCache

    store = Path(directory) if directory is not None else experiment.default_dir()
    results.open_store(store, experiment)
    done, damaged = results.scan_store(store)
    results.quarantine(store, damaged)
    if client is None:
        client = LLMClient(cache=ResponseCache.default(), concurrency=experiment.concurrency)
    prompts = prompt_hashes()
    specs = grid(experiment)
    users = {b.user for b in experiment.backends}
    pending: dict[str, list] = {}
    for spec in specs:
        identity = spec.identity(prompts)
        key = episode_key(identity)
        if key not in done or done[key]["error"] is not None:
            agent = spec.backends.agent
            backend = agent if len(users) == 1 else f"{agent} with {spec.backends.user}"
            pending.setdefault(backend, []).append((spec, identity, key))
    plan = Plan(
        name=experiment.name,
        shape={
            "tasks": len({s.scenario.task_id for s in specs}),
            "agent backends": len({b.agent for b in experiment.backends}),
            **({"user simulators": len(users)} if len(users) > 1 else {}),
            "settings": len(experiment.settings),
            "seeds": len(experiment.seeds),
        },
        total=len(specs),
        stored=len(specs) - sum(len(p) for p in pending.values()),
    )
    offline = sum(len(items) for items in pending.values() if cpu_bound(items[0][0].backends))
    workers = machine_workers() if offline >= MIN_POOL_EPISODES else 1
    for backend, items in pending.items():
        is_offline = cpu_bound(items[0][0].backends)
        times: list[float] = []
        finished = 0
        for item in items[: OFFLINE_TIMED if is_offline else 1]:
            started = time.monotonic()
            record = await run_one(*item, store, client, experiment.judge_process)
            times.append(time.monotonic() - started)
            if record is not None and record["error"] is not None:
                plan.failed[backend] = results.error_text(record["error"])
                break
            finished += record is not None
        warm = times[1:] or times
        plan.measured[backend] = sum(warm) / len(warm)
        plan.timed[backend] = len(times)
        plan.pending[backend] = len(items) - finished  # one in error runs again
        if is_offline:
            plan.parallel[backend] = max(1, min(workers, plan.pending[backend]))
        else:
            group = provider(items[0][0].backends.agent)
            limit = experiment.concurrency.get(group, DEFAULT_CONCURRENCY)
            plan.parallel[backend] = max(1, min(limit, len(items) - 1))
    announce(f"Plan. {plan}")
    return plan
