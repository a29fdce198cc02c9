"""Running an experiment: concurrent, cached and resumable.

A rerun skips every episode that has an intact record without an error; a run killed
mid-way and started again finishes the grid with nothing lost or duplicated.

What can go wrong, and what a run does about it:

- An episode that crashes, or whose model calls fail for a reason outside the
  participants' control (a missing or wrong key, an exhausted quota, an outage, a
  time-out, an unknown model, for the agent, the user simulator or the judge), is recorded
  with ``error`` set (its kind, role, model and message) and no scores; the run goes on,
  and the next run tries it again.
- A permanent failure (``hasbench.llm.PERMANENT_KINDS``) stops the backend that met it: no
  further episode using it starts, and one message names the backend, the model and what
  to fix. Episodes of other backends go on.
- So do transient failures (``hasbench.llm.TRANSIENT_KINDS``: rate limits, time-outs,
  server and connection errors after their retries, a local model's process that died)
  that end ``Endpoint.stop_after`` episodes of one backend in a row (default
  ``hasbench.llm.STOP_AFTER``): one message says what failed and how often, and its
  unstarted episodes are left for the next run.
- When the run's budget of model calls or cost is spent, no further episode starts, and
  episodes cut short by it are not recorded: the next run goes on from there.
- Damaged records and traces are moved to ``quarantine/`` and their episodes run again. CPU-bound
  episodes run in worker processes (:mod:`hasbench.runner.pool`) or on a Dask cluster;
  this process writes every record.
"""

from __future__ import annotations

import asyncio
import functools
import time
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.memo import unchanged
from hasbench.paths import CACHE_DIR
from hasbench.runner import store as results
from hasbench.runner.cluster import ClusterPool
from hasbench.runner.experiment import EpisodeSpec, Experiment, provider, resolve
from hasbench.runner.pool import cpu_bound, open_pool
from hasbench.runner.progress import Progress
from hasbench.runner.reuse import adopt
from hasbench.vocab import canonical_json, text_hash

if TYPE_CHECKING:
    from hasbench.llm import LLMClient
    from hasbench.simulator import Backends

SHARED_RUNS = "sandbox-runs"
"""The folder of ``CACHE_DIR`` where episodes share their sandboxed test runs."""
DEFAULT_CONCURRENCY = 8
"""Episodes in flight per agent-model provider unless the experiment says otherwise."""


@dataclass
class RunSummary:
    """What one call of :func:`run_experiment` did.

    Attributes:
        directory: The results store.
        experiment: The experiment's key (its definition is in the store's
            ``experiments/`` folder; :func:`~hasbench.runner.store.load_results` takes it).
        total: Episodes of the grid.
        skipped: Episodes already done (an intact record without an error), the reused
            ones included.
        reused: Of those, the ones copied from another results store by this call.
        ran: Episodes run and recorded by this call.
        failed: Of those, the ones that ended in error.
        not_started: Episodes left for a later run (a stopped backend, a spent budget).
        model_calls: Model calls made (cache hits excluded).
        cache_hits: Requests answered by the response cache.
        cost: Dollars the model calls cost (as litellm prices them).
        stopped: One message per backend stopped (a permanent failure, or transient ones
            episode after episode).
        budget: Why the budget stopped the run, if it did.
        quarantined: The damaged records and traces moved to ``quarantine/``.
        seconds: Wall-clock seconds the call took (None: not measured).
        estimate: The seconds a plan of the same grid estimated for it, when one preceded
            it (set by whoever made the plan, e.g. a study notebook).
    """

    directory: Path
    total: int
    skipped: int
    ran: int
    failed: int
    model_calls: int
    cache_hits: int
    not_started: int = 0
    reused: int = 0
    cost: float = 0.0
    stopped: list[str] = field(default_factory=list)
    budget: str | None = None
    quarantined: list[str] = field(default_factory=list)
    experiment: str | None = None
    seconds: float | None = None
    estimate: float | None = None

    @property
    def complete(self) -> bool:
        """Whether every episode of the grid has a record without an error."""
        return self.skipped + self.ran - self.failed == self.total


def _backend_id(backends: Backends, role: str) -> str:
    """What identifies the backend of a role: model, server, parameters and key variable."""
    endpoint = backends.endpoint(role)
    return canonical_json(
        {
            "model": backends.models()[role],
            "endpoint": backends.endpoint_identities().get(role, {}),
            "key": endpoint.api_key_env if endpoint else None,
        }
    )


def _stop_message(backends: Backends, error: dict[str, Any]) -> str:
    """The one message of a backend stopped by a permanent failure."""
    from hasbench.llm import FIXES

    return (
        f"{_stopped(backends, error)}: {error['kind']}: {error['message']}. To fix: "
        f"{FIXES[error['kind']]}. Its remaining episodes were not started; run again once fixed."
    )


def _streak_message(backends: Backends, errors: list[dict[str, Any]]) -> str:
    """The one message of a backend stopped by transient failures, episode after episode."""
    kinds = Counter(error["kind"] for error in errors)
    counted = ", ".join(f"{kind} {count}x" for kind, count in sorted(kinds.items()))
    return (
        f"{_stopped(backends, errors[-1])}: {len(errors)} episodes in a row failed with "
        f"transient errors after their retries ({counted}); the last: "
        f"{errors[-1]['message']}. Its remaining episodes were not started; run again once "
        "it answers."
    )


def _stopped(backends: Backends, error: dict[str, Any]) -> str:
    role = error["role"]
    endpoint = backends.endpoint(role)
    where = f" at {endpoint.api_base}" if endpoint and endpoint.api_base else ""
    return f"stopped the {role} backend {error['model']}{where}"


class BackendStops:
    """Which backends a run has stopped, and the one message of each.

    A backend is the model of one role with its endpoint (:func:`_backend_id`). It stops at
    its first permanent failure, or when ``stop_after`` of its episodes in a row ended in a
    transient one; an episode without error starts every streak of its backends again.
    """

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self._streaks: dict[str, list[dict[str, Any]]] = {}
        self._ids: dict[int, tuple[Backends, dict[str, str]]] = {}

    def backend_ids(self, backends: Backends) -> dict[str, str]:
        """Role -> its backend's id (:func:`_backend_id`), worked out once per backends."""
        known = self._ids.get(id(backends))
        if known is None or known[0] is not backends:  # the grid's cells share their backends
            known = (backends, {role: _backend_id(backends, role) for role in backends.models()})
            self._ids[id(backends)] = known
        return known[1]

    def blocked(self, spec: EpisodeSpec) -> bool:
        """Whether a backend of the episode was stopped."""
        return any(backend in self.messages for backend in self.backend_ids(spec.backends).values())

    def record(self, spec: EpisodeSpec, error: dict[str, Any] | None) -> str | None:
        """Count an episode's outcome; returns the message of a backend it stops, if any."""
        from hasbench.llm import PERMANENT_KINDS, STOP_AFTER, TRANSIENT_KINDS

        roles = self.backend_ids(spec.backends)
        if error is None:
            for backend in roles.values():
                self._streaks.pop(backend, None)
            return None
        role = error.get("role")
        if role not in roles:
            return None
        backend = roles[role]
        if backend in self.messages:
            return None
        if error["kind"] in PERMANENT_KINDS:
            self.messages[backend] = _stop_message(spec.backends, error)
            return self.messages[backend]
        if error["kind"] not in TRANSIENT_KINDS:
            return None
        streak = self._streaks.setdefault(backend, [])
        streak.append(error)
        endpoint = spec.backends.endpoint(role)
        limit = endpoint.stop_after if endpoint and endpoint.stop_after else STOP_AFTER
        if len(streak) < limit:
            return None
        self.messages[backend] = _streak_message(spec.backends, streak)
        return self.messages[backend]


async def run_experiment(
    experiment: Experiment,
    directory: str | Path | None = None,
    *,
    client: LLMClient | None = None,
    progress: bool = True,
    workers: int | None = None,
    cluster: str | None = None,
    reuse: Sequence[Path] = (),
    expected: Mapping[str, float] | None = None,
) -> RunSummary:
    """Run every episode of the grid that has no intact record without an error.

    Args:
        experiment: the grid.
        directory: the results store (default ``RUNS_DIR/<name>``).
        client: the LLM client for agents, users and judges (default: one with the
            workbench response cache and the experiment's concurrency limits). The
            experiment's budget is given to a client that has none.
        progress: show live progress (a line in a notebook, a bar in a terminal; see
            :class:`~hasbench.runner.progress.Progress`).
        workers: worker processes for CPU-bound episodes (see
            :func:`hasbench.runner.pool.open_pool`; None: sized to the machine; 1: none).
        cluster: a Dask scheduler address, or ``local:N``: run the episodes there
            (:mod:`hasbench.runner.cluster`) instead of in local worker processes.
        reuse: other results stores whose copies of the grid's episodes are taken instead
            of running them (:mod:`hasbench.runner.reuse`).
        expected: seconds each episode should take, by key (a plan's
            :meth:`~hasbench.runner.planning.Plan.expected_seconds`): the tasks with the
            most work are then dealt out first, so that the last to end is a short one.

    Raises:
        ExperimentError: a backend string that cannot play its role (nothing is written).
        ValueError: ``workers`` below 1.
    """
    from hasbench.llm import CallBudget, LLMClient, ResponseCache

    if workers is not None and workers < 1:
        raise ValueError(f"workers: must be at least 1, got {workers}")
    started = time.monotonic()
    experiment.check_backends()
    resolved = resolve(experiment)  # a bad task selection fails before the store is touched
    store = Path(directory) if directory is not None else experiment.default_dir()
    results.open_store(store, resolved)
    done, damaged = results.scan_store(store, resolved.keys, verify=True)
    results.quarantine(store, damaged)
    reused = adopt(store, resolved.cells, done, reuse)
    if client is None:
        client = LLMClient(cache=ResponseCache.default(), concurrency=experiment.concurrency)
    if client.budget is None and experiment.budget is not None:
        client.budget = CallBudget(experiment.budget.max_calls, experiment.budget.max_cost)
    calls0, hits0, cost0 = client.stats.calls, client.stats.cache_hits, client.stats.cost
    todo = [
        (cell.spec, cell.identity, cell.key)
        for cell in resolved.cells
        if cell.key not in done or done[cell.key]["error"] is not None
    ]
    if expected:
        todo = longest_tasks_first(todo, expected)
    limits: dict[str, asyncio.Semaphore] = {}
    stops = BackendStops()
    counts = {"ran": 0, "failed": 0, "not_started": 0}
    bar = Progress(len(todo), experiment.name, enabled=progress)
    remote = await ClusterPool(client, run_one).start(cluster) if cluster and todo else None
    pool = remote or open_pool([spec for spec, _, _ in todo], workers, client, run_one)
    episode = remote.run if remote is not None else partial(_run_here, run_one, client)

    def blocked(spec: EpisodeSpec) -> bool:
        """Whether the budget is spent or a backend of the episode was stopped."""
        if client.budget is not None and client.budget.exhausted() is not None:
            return True
        return stops.blocked(spec)

    async def one(spec: EpisodeSpec, identity: dict[str, Any], key: str) -> None:
        if pool is not None and cpu_bound(spec.backends):
            gate, run = pool.slot(spec), pool.run  # a task's episodes share its worker
        else:  # model-bound: admitted under its provider's limit (cluster-wide on a cluster)
            group = provider(spec.backends.agent)
            limit = experiment.concurrency.get(group, DEFAULT_CONCURRENCY)
            gate, run = limits.setdefault(group, asyncio.Semaphore(limit)), episode
        async with gate:
            if blocked(spec):
                counts["not_started"] += 1
                bar.update(1)
                return
            record = await run(spec, identity, key, store)
        bar.update(1)
        if record is None:  # cut short by the budget: left for the next run
            counts["not_started"] += 1
            return
        counts["ran"] += 1
        counts["failed"] += record["error"] is not None
        message = stops.record(spec, record["error"])
        if message is not None:
            bar.write(f"hasbench: {message}")

    try:
        await asyncio.gather(*(one(*item) for item in todo))
    finally:
        bar.close()
        if remote is not None:
            await remote.close()
        elif pool is not None:
            pool.close()
    return RunSummary(
        directory=store,
        experiment=resolved.key,
        total=len(resolved.cells),
        skipped=len(resolved.cells) - len(todo),
        reused=reused,
        ran=counts["ran"],
        failed=counts["failed"],
        not_started=counts["not_started"],
        model_calls=client.stats.calls - calls0,
        cache_hits=client.stats.cache_hits - hits0,
        cost=client.stats.cost - cost0,
        stopped=list(stops.messages.values()),
        budget=client.budget.exhausted() if client.budget is not None else None,
        quarantined=[str(item) for item in damaged],
        seconds=time.monotonic() - started,
    )


async def _run_here(run: Any, client: LLMClient, *args: Any) -> dict[str, Any] | None:
    """``run_one`` in this process: ``(spec, identity, key, store)``."""
    spec, identity, key, store = args
    return await run(spec, identity, key, store, client)


async def run_one(
    spec: EpisodeSpec, identity: dict[str, Any], key: str, store: Path, client: LLMClient
) -> dict[str, Any] | None:
    """Run, evaluate and judge one episode; write its trace and record; return the record.

    Its process (CQS, FUR, CRJ events) is judged when ``spec.judge_process``.

    An infrastructure failure of any role (the episode's ``model_error`` termination, or
    a judge call that fails) makes an error record with no scores; so does a crash.

    Returns:
        The record, or None when the run's budget cut the episode short (nothing is
        written: the next run runs it).
    """
    from hasbench.llm import ModelError

    _share_sandbox_runs()
    scn = spec.scenario
    record: dict[str, Any] = {
        "key": key,
        **identity,
        "domain": scn.domain,
        "pattern": scn.adaptation_pattern,
        "judge_scored": bool(scn.metadata.get("judge_scored", False)),
        "error": None,
        "termination": None,
        "outcome": None,
        "metrics": None,
        "process": None,
        "trace": None,
    }
    try:
        with unchanged(scn):  # the task stays as it is: its content hash is taken once
            if not await _play_and_score(spec, key, store, client, record):
                return None
    except ModelError as exc:  # a judge call: the episode has a trace but no scores
        if exc.kind == "budget":
            return None
        record.update(outcome=None, metrics=None, process=None)
        record["error"] = {
            "kind": exc.kind, "role": "judge", "model": spec.backends.judge,
            "message": exc.message,
        }  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - a failed episode is recorded, the run goes on
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        record["error"] = {
            "kind": "crash",
            "message": f"{type(exc).__name__}: {exc}",
            "where": where,
        }
    results.write_record(store, key, record)
    return record


def longest_tasks_first(
    todo: list[tuple[EpisodeSpec, dict[str, Any], str]], expected: Mapping[str, float]
) -> list[tuple[EpisodeSpec, dict[str, Any], str]]:
    """``todo`` (spec, identity, key) with the tasks of most expected seconds first.

    A task's episodes keep their order, and so do tasks expected to take alike.
    """
    work: dict[str, float] = {}
    for spec, _, key in todo:
        task = spec.scenario.task_id
        work[task] = work.get(task, 0.0) + expected.get(key, 0.0)
    return sorted(todo, key=lambda item: -work[item[0].scenario.task_id])


@functools.cache
def _share_sandbox_runs() -> None:
    """Let this process's coding episodes share their sandboxed test runs with other processes.

    The notebooks' grids test the same workspaces in many processes; the shared runs
    (:mod:`hasbench.envs.coding.shared_runs`) live under ``CACHE_DIR``, out of every sandbox.
    """
    from hasbench.envs.coding import shared_runs

    shared_runs.share(CACHE_DIR / SHARED_RUNS)


async def _play_and_score(
    spec: EpisodeSpec, key: str, store: Path, client: LLMClient, record: dict[str, Any]
) -> bool:
    """Run the episode, write its trace, score it into ``record``; False if the budget cut it."""
    from hasbench.evaluate import evaluate
    from hasbench.metrics import judge_process as judge_events
    from hasbench.metrics import trace_metrics
    from hasbench.participants.backends import make_judge
    from hasbench.simulator import Episode

    scn = spec.scenario
    episode = Episode(scn, spec.setting, spec.backends, seed=spec.seed, client=client)
    trace = await episode.run()
    failure = trace.of_type("model_error")
    if failure and failure[-1].payload.kind == "budget":
        return False
    jsonl = trace.to_jsonl()
    record["trace"] = results.write_trace(store, key, jsonl)
    record["trace_sha256"] = text_hash(jsonl)
    record["trace_bytes"] = len(jsonl.encode("utf-8"))
    record["termination"] = trace.termination.model_dump(mode="json") if trace.termination else None
    if failure:
        payload = failure[-1].payload
        record["error"] = {
            "kind": payload.kind, "role": payload.role, "model": payload.model,
            "message": payload.message,
        }  # fmt: skip
        return True
    judge = make_judge(spec.backends.judge, client, spec.backends.endpoint("judge"))
    with unchanged(trace):  # scored as finished: its judge log is rendered once
        outcome = await evaluate(scn, trace, judge)
        record["outcome"] = outcome.model_dump(mode="json")
        record["metrics"] = trace_metrics(trace, scn)
        if spec.judge_process:
            record["process"] = await judge_events(trace, judge)
    return True
