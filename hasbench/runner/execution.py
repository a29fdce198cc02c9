"""Running an experiment: concurrent, cached and resumable.

A rerun skips every episode that has a record; a run killed mid-way and started again
finishes the grid with nothing lost or duplicated. An episode that raises is recorded
with its error and the run goes on. CPU-bound episodes run in worker processes
(:mod:`hasbench.runner.pool`); this process writes every record.
"""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.prompts import prompt_hashes
from hasbench.runner import store as results
from hasbench.runner.cluster import ClusterPool
from hasbench.runner.experiment import EpisodeSpec, Experiment, episode_key, grid
from hasbench.runner.pool import cpu_bound, open_pool
from hasbench.runner.progress import Progress

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

DEFAULT_CONCURRENCY = 8
"""Episodes in flight per agent-model provider unless the experiment says otherwise."""


@dataclass
class RunSummary:
    """What one call of :func:`run_experiment` did."""

    directory: Path
    total: int
    skipped: int
    ran: int
    failed: int
    model_calls: int
    cache_hits: int


def provider(model: str) -> str:
    """The concurrency group of a backend string: ``scripted``, ``rule`` or the provider."""
    if model.startswith("scripted:") or model == "rule":
        return model.split(":", 1)[0]
    from hasbench.llm import provider_of

    return provider_of(model)


async def run_experiment(
    experiment: Experiment,
    directory: str | Path | None = None,
    *,
    client: LLMClient | None = None,
    progress: bool = True,
    workers: int | None = None,
    cluster: str | None = None,
) -> RunSummary:
    """Run every episode of the grid that has no record yet.

    Args:
        experiment: the grid.
        directory: the results store (default ``RUNS_DIR/<name>``).
        client: the LLM client for agents, users and judges (default: one with the
            workbench response cache and the experiment's concurrency limits).
        progress: show live progress (a line in a notebook, a bar in a terminal; see
            :class:`~hasbench.runner.progress.Progress`).
        workers: worker processes for CPU-bound episodes (see
            :func:`hasbench.runner.pool.open_pool`; None: sized to the machine).
        cluster: a Dask scheduler address, or ``local:N``: run the episodes there
            (:mod:`hasbench.runner.cluster`) instead of in local worker processes.
    """
    from hasbench.llm import LLMClient, ResponseCache

    store = Path(directory) if directory is not None else experiment.default_dir()
    results.open_store(store, experiment)
    if client is None:
        client = LLMClient(cache=ResponseCache.default(), concurrency=experiment.concurrency)
    calls0, hits0 = client.stats.calls, client.stats.cache_hits
    prompts = prompt_hashes()
    todo: list[tuple[EpisodeSpec, dict[str, Any], str]] = []
    specs = grid(experiment)
    for spec in specs:
        identity = spec.identity(prompts)
        key = episode_key(identity)
        if not results.has_record(store, key):
            todo.append((spec, identity, key))
    limits: dict[str, asyncio.Semaphore] = {}
    failed = 0
    bar = Progress(len(todo), experiment.name, enabled=progress)
    remote = await ClusterPool(client, run_one).start(cluster) if cluster and todo else None
    pool = remote or open_pool([spec for spec, _, _ in todo], workers, client, run_one)
    episode = remote.run if remote is not None else partial(_run_here, run_one, client)

    async def one(spec: EpisodeSpec, identity: dict[str, Any], key: str) -> None:
        nonlocal failed
        if pool is not None and cpu_bound(spec.backends):
            record = await pool.run(spec, identity, key, store, experiment.judge_process)
        else:  # model-bound: admitted under its provider's limit (cluster-wide on a cluster)
            group = provider(spec.backends.agent)
            limit = experiment.concurrency.get(group, DEFAULT_CONCURRENCY)
            async with limits.setdefault(group, asyncio.Semaphore(limit)):
                record = await episode(spec, identity, key, store, experiment.judge_process)
        failed += record["error"] is not None
        bar.update(1)

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
        total=len(specs),
        skipped=len(specs) - len(todo),
        ran=len(todo),
        failed=failed,
        model_calls=client.stats.calls - calls0,
        cache_hits=client.stats.cache_hits - hits0,
    )


async def _run_here(run: Any, client: LLMClient, *args: Any) -> dict[str, Any]:
    """``run_one`` in this process: ``(spec, identity, key, store, judge_process)``."""
    spec, identity, key, store, judge_process = args
    return await run(spec, identity, key, store, client, judge_process)


async def run_one(
    spec: EpisodeSpec,
    identity: dict[str, Any],
    key: str,
    store: Path,
    client: LLMClient,
    judge_process: bool = True,
) -> dict[str, Any]:
    """Run, evaluate and judge one episode; write its trace and record; return the record."""
    from hasbench.evaluate import evaluate
    from hasbench.metrics import judge_process as judge_events
    from hasbench.metrics import trace_metrics
    from hasbench.participants.judges import make_judge
    from hasbench.simulator import Episode

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
        episode = Episode(scn, spec.setting, spec.backends, seed=spec.seed, client=client)
        trace = await episode.run()
        record["trace"] = results.write_trace(store, key, trace.to_jsonl())
        record["termination"] = (
            trace.termination.model_dump(mode="json") if trace.termination else None
        )
        judge = make_judge(spec.backends.judge, client)
        outcome = await evaluate(scn, trace, judge)
        record["outcome"] = outcome.model_dump(mode="json")
        record["metrics"] = trace_metrics(trace, scn)
        if judge_process:
            record["process"] = await judge_events(trace, judge)
    except Exception as exc:  # noqa: BLE001 - a failed episode is recorded, the run goes on
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        record["error"] = {"type": type(exc).__name__, "message": str(exc), "where": where}
    results.write_record(store, key, record)
    return record
