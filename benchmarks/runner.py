"""Benchmark of the experiment runner.

1. The offline RQ1 grid (scripted stand-ins, A1 vs A3, default domains): wall time and
   episodes per second into a fresh results store.
2. The response cache: a small grid whose judge is an LLM (an offline ``test/`` provider,
   since scripted policies make no model calls) is run cold, then again into a fresh
   store with the warm cache (every episode reruns, 0 model calls), then once more into the
   same store (every episode is skipped).

Usage: ``.venv/bin/python benchmarks/runner.py [--max-tasks N]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from hasbench.experiments import rq1
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.llm import LLMClient, ResponseCache, register_test_provider
from hasbench.paths import TASKS_DIR
from hasbench.runner import Experiment, run_experiment

SERVICE_DOMAINS = ["retail", "airline", "telecom"]
"""The offline RQ1 grid these figures are measured on (the service domains, 900 episodes)."""

CRITERIA = [
    "precise", "necessary", "non_redundant", "actionable", "integrated", "warranted",
    "well_timed", "self_initiated",
]  # fmt: skip


def judge_reply(messages, tools):
    if "Statement:" in messages[-1]["content"]:
        return {"content": '{"holds": true, "quote": ""}', "tool_calls": []}
    return {"content": json.dumps(dict.fromkeys(CRITERIA, 1)), "tool_calls": []}


def offline_grid(max_tasks: int | None, root: Path) -> None:
    grid = rq1.experiment(
        list(OFFLINE_AGENTS), domains=SERVICE_DOMAINS, max_tasks_per_domain=max_tasks
    )
    start = time.perf_counter()
    done = asyncio.run(run_experiment(grid, root / "rq1", progress=False))
    wall = time.perf_counter() - start
    print(f"offline RQ1 grid: {done.total} episodes ({done.failed} failed) in {wall:.1f} s")
    print(f"  {done.total / wall:.1f} episodes/s")


def warm_cache(root: Path) -> None:
    judge = register_test_provider("bench_judge", judge_reply, delay=0.01)
    grid = Experiment.model_validate(
        {
            "name": "cache_bench",
            "tasks": {"files": [str(TASKS_DIR / "examples.yaml")]},
            "backends": [{"agent": "scripted:strong", "judge": judge}],
            "settings": [{"agency": "A3"}],
        }
    )
    cache = ResponseCache(root / "cache.sqlite")
    runs = [("cold cache, new store", "a"), ("warm cache, new store", "b"), ("rerun", "b")]
    for label, store in runs:
        client = LLMClient(cache=cache)
        done = asyncio.run(run_experiment(grid, root / store, client=client, progress=False))
        print(
            f"{label:>22}: {done.ran} episodes run, {done.skipped} skipped, "
            f"{done.model_calls} model calls, {done.cache_hits} cache hits"
        )
    cache.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--max-tasks", type=int, default=10, help="tasks per domain (the notebook default)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        offline_grid(args.max_tasks, Path(tmp))
        warm_cache(Path(tmp))


if __name__ == "__main__":
    main()
