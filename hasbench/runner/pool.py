"""Worker processes for CPU-bound episodes.

Episodes whose agent, user and judge are all offline (``scripted:*`` policies, the
``rule`` judge, ``local/*`` models run on this machine) spend their time computing, not
waiting for a provider, so :func:`run_experiment` hands them to a pool of worker processes
sized to the machine. Model-bound episodes stay on the event loop of the main process,
where their concurrency limits apply.

A worker runs an episode exactly as the main process would (:func:`run_one`, into a
scratch store of its own) and sends back the record and the trace text; the main process
writes both to the results store. The store keeps a single writer, so a record still
means a finished episode and resume works as before.

Every episode of one task goes to the same worker: what a domain caches per process, such
as a coding task's test runs by workspace content, then serves every setting and backend of
that task, as it does in the one process that times a plan
(:mod:`hasbench.runner.planning`). The tasks are dealt out so that each worker gets about
as many episodes (a hash of the task ids left 10 of the simulator study's 12 tasks to one
of two workers).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from hasbench.paths import scratch_folder
from hasbench.runner import store as results

if TYPE_CHECKING:
    from hasbench.llm import LLMClient
    from hasbench.runner.experiment import EpisodeSpec
    from hasbench.simulator import Backends

OFFLINE_PREFIXES = ("scripted:", "local/")
"""Backends that run on this machine (with the ``rule`` judge): their episodes are CPU-bound."""
RunOne = Callable[..., Awaitable[dict[str, Any]]]
"""``run_one(spec, identity, key, store, client)`` -> the episode's record."""
FORKED = sys.platform == "linux"
"""Whether workers are forked (they inherit this process's memory) rather than spawned."""
MIN_POOL_EPISODES = 16
"""Fewer CPU-bound episodes than this run in the main process (starting workers costs more)."""


def cpu_bound(backends: Backends) -> bool:
    """Whether every role of an episode is played offline (no model provider to wait for)."""
    roles = (backends.agent, backends.user, backends.judge)
    return all(m == "rule" or m.startswith(OFFLINE_PREFIXES) for m in roles)


def machine_workers() -> int:
    """The number of CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_pool(workers: int, **options: Any) -> ProcessPoolExecutor:
    """A process pool; ``options`` go to :class:`ProcessPoolExecutor` (e.g. an initializer).

    Workers are forked on Linux: they start at once with what this process has loaded,
    and a script that starts a run needs no ``if __name__ == "__main__"`` guard.
    """
    context = multiprocessing.get_context("fork" if FORKED else "spawn")
    return ProcessPoolExecutor(workers, mp_context=context, **options)


class EpisodePool:
    """Worker processes that run CPU-bound episodes for one results store, a task's in one.

    Attributes:
        workers: how many worker processes.
        seconds: how long each episode it ran took in its worker, by key (a plan times
            episodes as the run will run them, see :mod:`hasbench.runner.planning`).
    """

    def __init__(
        self, workers: int, client: LLMClient, run_one: RunOne, specs: list[EpisodeSpec]
    ) -> None:
        cache = getattr(client.cache, "path", None) if client.cache is not None else None
        self.workers = workers
        self._worker: dict[str, int] = {}  # task -> its worker, in grid order to the least busy
        episodes = [0] * workers
        for spec in specs:
            task = spec.scenario.task_id
            worker = self._worker.setdefault(task, episodes.index(min(episodes)))
            episodes[worker] += 1
        self.seconds: dict[str, float] = {}
        self.client = client
        self._run_one = run_one
        self._slots = [asyncio.Semaphore(2) for _ in range(workers)]
        self._executors = [
            worker_pool(
                1, initializer=_start_worker, initargs=(None if cache is None else str(cache),)
            )
            for _ in range(workers)
        ]

    async def run(
        self,
        spec: EpisodeSpec,
        identity: dict[str, Any],
        key: str,
        store: Path,
        worker: int | None = None,
    ) -> dict[str, Any]:
        """Run one episode in a worker; write its trace and record here; return the record.

        ``worker``: the worker to run it in instead of its task's (a plan spreading the
        episodes it times over the workers).
        """
        loop = asyncio.get_running_loop()
        where = self.worker_of(spec.scenario.task_id) if worker is None else worker
        future = self._executors[where].submit(_run_episode, self._run_one, spec, identity, key)
        done = await asyncio.wrap_future(future, loop=loop)
        self.seconds[key] = done.seconds
        return done.store(store, key, self.client)

    def slot(self, spec: EpisodeSpec) -> asyncio.Semaphore:
        """What admits an episode to its task's worker: two in flight per worker.

        A stopped backend or a spent budget then holds back the episodes not yet admitted.
        """
        return self._slots[self.worker_of(spec.scenario.task_id)]

    def worker_of(self, task_id: str) -> int:
        """The worker that runs every episode of a task (one of the pool's episodes)."""
        return self._worker[task_id]

    def close(self) -> None:
        """Stop the workers."""
        for executor in self._executors:
            executor.shutdown(wait=True, cancel_futures=True)


def open_pool(
    specs: list[EpisodeSpec], workers: int | None, client: LLMClient, run_one: RunOne
) -> EpisodePool | None:
    """A pool for the CPU-bound episodes among ``specs``, or None when it would not pay.

    Args:
        specs: the episodes about to run.
        workers: worker processes; None: one per CPU of the machine, when there are at
            least :data:`MIN_POOL_EPISODES` CPU-bound episodes; 1: no pool.
        client: the main process's client (its response cache file is shared).
        run_one: what runs one episode into a store (``execution.run_one``).
    """
    count = sum(cpu_bound(spec.backends) for spec in specs)
    if workers is None:
        workers = machine_workers() if count >= MIN_POOL_EPISODES else 1
    if workers <= 1 or count == 0:
        return None
    if FORKED:
        _load_before_fork(specs)
    return EpisodePool(workers, client, run_one, [s for s in specs if cpu_bound(s.backends)])


def _load_before_fork(specs: list[EpisodeSpec]) -> None:
    """Load here, before the workers fork, what each of them would otherwise load again.

    An environment of each domain: what a domain loads or generates once per process (a
    generated database, a literature corpus: up to a second each). And litellm, which
    serves ``local/`` models, when an episode plays one: importing it takes about 3 CPU-s.
    """
    from hasbench.envs import make_environment
    from hasbench.llm import load_litellm

    for spec in {spec.scenario.domain: spec for spec in specs}.values():
        with contextlib.suppress(Exception):  # the episode meets the same error and records it
            make_environment(spec.scenario)
    roles = {role for s in specs for role in (s.backends.agent, s.backends.user, s.backends.judge)}
    if any(role.startswith("local/") for role in roles):
        load_litellm()


class Finished(NamedTuple):
    """What a worker sends back for one episode it ran.

    Attributes:
        record: the episode's record.
        record_text: the record as the worker's scratch store holds it (written as it is).
        trace: the trace's text (None: the episode has none).
        calls: model calls made.
        hits: requests the response cache answered.
        seconds: how long the episode took in the worker.
    """

    record: dict[str, Any]
    record_text: str
    trace: str | None
    calls: int
    hits: int
    seconds: float

    def store(self, store: Path, key: str, client: LLMClient) -> dict[str, Any]:
        """Write the trace, then the record, into the results store; count the calls."""
        if self.trace is not None:
            results.write_trace(store, key, self.trace)
        results.write_record(store, key, self.record, text=self.record_text)
        client.stats.calls += self.calls
        client.stats.cache_hits += self.hits
        return self.record


# -- inside a worker process ------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def run_in_worker(
    run_one: RunOne,
    spec: EpisodeSpec,
    identity: dict[str, Any],
    key: str,
    cache_path: str | None,
) -> Finished:
    """Run one episode in a worker process that has no pool initializer (a Dask worker)."""
    if not _WORKER:
        _start_worker(cache_path or None)
    return _run_episode(run_one, spec, identity, key)


def _start_worker(cache_path: str | None) -> None:
    from hasbench.llm import LLMClient, ResponseCache

    scratch = scratch_folder("hasbench-worker-")
    (scratch / "episodes").mkdir()
    (scratch / "traces").mkdir()
    _WORKER["scratch"] = scratch
    _WORKER["client"] = LLMClient(cache=ResponseCache(cache_path) if cache_path else None)
    _WORKER["loop"] = asyncio.new_event_loop()


def _run_episode(
    run_one: RunOne, spec: EpisodeSpec, identity: dict[str, Any], key: str
) -> Finished:
    """Run one episode into the worker's scratch store; what to send back of it."""
    scratch, client = _WORKER["scratch"], _WORKER["client"]
    calls0, hits0 = client.stats.calls, client.stats.cache_hits
    began = time.monotonic()
    record = _WORKER["loop"].run_until_complete(run_one(spec, identity, key, scratch, client))
    trace = None
    if record["trace"] is not None:
        path = scratch / record["trace"]
        trace = path.read_text(encoding="utf-8")
        path.unlink()
    path = scratch / "episodes" / f"{key}.json"
    text = path.read_text(encoding="utf-8")
    path.unlink()
    seconds = time.monotonic() - began
    calls, hits = client.stats.calls - calls0, client.stats.cache_hits - hits0
    return Finished(record, text, trace, calls, hits, seconds)
