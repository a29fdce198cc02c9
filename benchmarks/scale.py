"""How the offline RQ1 grid scales: worker processes, a local Dask cluster, the store.

Prints episodes/s of the grid (scripted stand-ins, A1 and A3) for 1, 2 and N worker
processes (N: this machine's CPUs) and for a local Dask cluster of 2 workers (when the
``dask`` extra is installed), the results store's size per episode, and the time to load
a store of 50,000 records (copies of the grid's records under new keys).

    .venv/bin/python benchmarks/scale.py [--max-tasks N] [--records N]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path

from hasbench.experiments import rq1
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.runner import load_results, run_experiment
from hasbench.runner.pool import machine_workers

SERVICE_DOMAINS = ["retail", "airline", "telecom"]
"""The offline RQ1 grid these figures are measured on (the service domains, 900 episodes)."""


def timed_run(grid, directory: Path, **options) -> float:
    """Episodes per second of one run of the grid into a fresh store."""
    start = time.perf_counter()
    done = asyncio.run(run_experiment(grid, directory, progress=False, **options))
    return done.total / (time.perf_counter() - start)


def store_size(directory: Path) -> tuple[int, int]:
    """(episodes, bytes of records plus traces) of a store."""
    files = [*directory.glob("episodes/*.json"), *directory.glob("traces/*.jsonl")]
    return len(list(directory.glob("episodes/*.json"))), sum(f.stat().st_size for f in files)


def load_time(source: Path, records: int, root: Path) -> float:
    """Seconds to load a store of ``records`` records made from the source store's records.

    Loading checks every record's trace (its SHA-256), so the records point at the source
    store's traces, linked into the big store.
    """
    big = root / "big"
    (big / "episodes").mkdir(parents=True)
    (big / "traces").mkdir()
    for trace in source.glob("traces/*.jsonl"):  # records share the source's traces
        (big / "traces" / trace.name).hardlink_to(trace)
    originals = [json.loads(p.read_text()) for p in sorted(source.glob("episodes/*.json"))]
    for index in range(records):
        record = dict(originals[index % len(originals)])
        record["key"] = f"{index:020x}"
        (big / "episodes" / f"{record['key']}.json").write_text(json.dumps(record, indent=1))
    start = time.perf_counter()
    frame = load_results(big)
    elapsed = time.perf_counter() - start
    assert len(frame) == records
    return elapsed


def main() -> None:
    """Print the scale figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=None, help="tasks per domain")
    parser.add_argument("--records", type=int, default=50_000, help="records to load")
    args = parser.parse_args()
    grid = rq1.experiment(
        list(OFFLINE_AGENTS), domains=SERVICE_DOMAINS, max_tasks_per_domain=args.max_tasks
    )
    cores = machine_workers()
    print(f"{cores} CPUs, load average {os.getloadavg()[0]:.1f} (a shared machine slows all)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for workers in sorted({1, 2, cores}):
            rate = timed_run(grid, root / f"w{workers}", workers=workers)
            print(f"{workers:2d} worker process(es): {rate:7.1f} episodes/s")
        if importlib.util.find_spec("distributed") is None:
            print("local Dask cluster: skipped, the dask extra is not installed")
        else:
            rate = timed_run(grid, root / "dask", cluster="local:2")
            print(f"local Dask cluster (2 workers, startup included): {rate:7.1f} episodes/s")
        episodes, size = store_size(root / "w1")
        print(f"store: {size / episodes / 1024:.1f} KiB per episode (record + trace)")
        seconds = load_time(root / "w1", args.records, root)
        print(f"load_results on {args.records:,} records: {seconds:.1f} s")


if __name__ == "__main__":
    main()
