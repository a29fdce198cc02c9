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
as a coding task's test runs by workspace content or a local model's prompt states, then
serves every setting and backend of that task, as it does in the one process that times a
plan (:mod:`hasbench.runner.planning`). A task is dealt to a worker when its first episode
is admitted, to one that is free and has no episode of its own tasks waiting, so a worker
finishes its tasks before it takes another. Episodes of one task can differ in cost by
several times (a local model's), and a deal made before any ran, by counts of episodes,
left one of two workers idle for the last 14 of the simulator study's 33 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sys
import time
from collections import deque
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

    def __init__(self, workers: int, client: LLMClient, run_one: RunOne) -> None:
        cache = getattr(client.cache, "path", None) if client.cache is not None else None
        self.workers = workers
        self.seconds: dict[str, float] = {}
        self.client = client
        self._run_one = run_one
        self._dealer = TaskDealer(workers)
        self._executors = [
            worker_pool(
                1, initializer=_start_worker, initargs=(None if cache is None else str(cache),)
            )
            for _ in range(workers)
        ]

    async def run(
        self, spec: EpisodeSpec, identity: dict[str, Any], key: str, store: Path
    ) -> dict[str, Any]:
        """Run one admitted episode in its task's worker; write its trace and record here.

        Returns the record. Call it inside :meth:`slot`.
        """
        loop = asyncio.get_running_loop()
        worker = self.worker_of(spec.scenario.task_id)
        assert worker is not None, "run an episode inside its slot()"
        future = self._executors[worker].submit(_run_episode, self._run_one, spec, identity, key)
        done = await asyncio.wrap_future(future, loop=loop)
        self.seconds[key] = done.seconds
        return done.store(store, key, self.client)

    def slot(self, spec: EpisodeSpec) -> Admission:
        """What admits an episode to its task's worker (``async with``): two in flight each.

        A stopped backend or a spent budget then holds back the episodes not yet admitted.
        """
        return Admission(self._dealer, spec.scenario.task_id)

    def worker_of(self, task_id: str) -> int | None:
        """The worker a task was dealt to (None: none of its episodes was admitted yet)."""
        return self._dealer.worker_of(task_id)

    def close(self) -> None:
        """Stop the workers."""
        for executor in self._executors:
            executor.shutdown(wait=True, cancel_futures=True)


class TaskDealer:
    """Admits episodes to workers, every episode of a task to one, two in flight a worker.

    A worker with a free place takes the next waiting episode of a task dealt to it; an idle
    worker whose tasks have none waiting is dealt the task that first asked among those no
    worker has yet. Episodes of one task are admitted in the order they asked. A new task
    never queues behind a running episode: another worker may be free before it ends.
    """

    PLACES = 2
    """Episodes in flight per worker: the next is handed over while one runs."""

    def __init__(self, workers: int) -> None:
        self._free = [self.PLACES] * workers
        self._worker: dict[str, int] = {}  # task -> the worker it was dealt to
        self._undealt: dict[str, deque[asyncio.Future[int]]] = {}  # in order of first asking
        self._own: list[dict[str, deque[asyncio.Future[int]]]] = [{} for _ in range(workers)]

    def worker_of(self, task_id: str) -> int | None:
        """The worker a task was dealt to on its first admitted episode (None: not yet)."""
        return self._worker.get(task_id)

    async def admit(self, task_id: str) -> int:
        """Wait for a place for an episode of ``task_id``; return its worker."""
        place: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        worker = self._worker.get(task_id)
        waiting = self._undealt if worker is None else self._own[worker]
        waiting.setdefault(task_id, deque()).append(place)
        self._deal()
        try:
            return await place
        except asyncio.CancelledError:  # a cancelled place is skipped when its turn comes
            if place.done() and not place.cancelled():  # admitted as it was cancelled
                self.release(place.result())
            raise

    def release(self, worker: int) -> None:
        """An admitted episode of ``worker`` ended: its place goes to the next waiting."""
        self._free[worker] += 1
        self._deal()

    def _deal(self) -> None:
        for worker, own in enumerate(self._own):
            while self._free[worker]:
                if not own:
                    if not self._undealt or self._free[worker] < self.PLACES:
                        break  # a new task waits for an idle worker, not behind a running one
                    task_id = next(iter(self._undealt))
                    own[task_id] = self._undealt.pop(task_id)
                    self._worker[task_id] = worker
                task_id, waiting = next(iter(own.items()))
                place = waiting.popleft()
                if not waiting:
                    del own[task_id]
                if not place.done():
                    self._free[worker] -= 1
                    place.set_result(worker)


class Admission:
    """A place for one episode in its task's worker, held for an ``async with`` block."""

    def __init__(self, dealer: TaskDealer, task_id: str) -> None:
        self._dealer, self._task_id = dealer, task_id
        self._worker: int | None = None

    async def __aenter__(self) -> int:
        self._worker = await self._dealer.admit(self._task_id)
        return self._worker

    async def __aexit__(self, *exc: object) -> None:
        assert self._worker is not None
        self._dealer.release(self._worker)


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
    return EpisodePool(workers, client, run_one)


def _load_before_fork(specs: list[EpisodeSpec]) -> None:
    """Load here, before the workers fork, what each of them would otherwise load again.

    An environment of each domain: what a domain loads or generates once per process (a
    generated database, a literature corpus: up to a second each).
    """
    from hasbench.envs import make_environment

    for spec in {spec.scenario.domain: spec for spec in specs}.values():
        with contextlib.suppress(Exception):  # the episode meets the same error and records it
            make_environment(spec.scenario)


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
