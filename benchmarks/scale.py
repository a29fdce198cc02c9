"""How the offline RQ1 grid scales: worker processes, a local Dask cluster, the store.

Prints episodes/s of the grid (scripted stand-ins, A1 and A3) for 1, 2 and N worker
processes (N: this machine's CPUs) and for a local Dask cluster of 2 workers (when the
``dask`` extra is installed), the results store's size per episode, and the time to load
a store of 50,000 records (copies of the grid's records under new keys, written as a run
writes them; and the same store without its index), median of several loads, in wall and
CPU seconds.

    .venv/bin/python benchmarks/scale.py [--max-tasks N] [--records N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from statistics import median

from hasbench.experiments import rq1
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.runner import load_results, run_experiment, store_index
from hasbench.runner.pool import machine_workers
from hasbench.runner.store import write_record

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


def big_store(source: Path, records: int, root: Path) -> Path:
    """A store of ``records`` records made from the source store's, written as a run writes.

    The records are copies under new keys, written by the store's writer into a store whose
    index is open (as a run's is); they point at the source store's traces, linked in, so
    loading checks a real trace of each.
    """
    big = root / "big"
    (big / "episodes").mkdir(parents=True)
    (big / "traces").mkdir()
    for trace in source.glob("traces/*.jsonl"):  # records share the source's traces
        (big / "traces" / trace.name).hardlink_to(trace)
    originals = [json.loads(p.read_text()) for p in sorted(source.glob("episodes/*.json"))]
    store_index.open_index(big)
    for index in range(records):
        record = dict(originals[index % len(originals)])
        record["key"] = f"{index:020x}"
        write_record(big, record["key"], record)
    return big


def timed_loads(store: Path, rounds: int, unindexed: bool = False) -> tuple[float, float]:
    """Median (wall, CPU) seconds of ``rounds`` loads of a store's results table.

    With ``unindexed``, the store's index is removed before each load (a store written
    without one, e.g. by an older version: its first load decodes every record).
    """
    walls, cpus = [], []
    for _ in range(rounds):
        if unindexed:
            (store / store_index.INDEX).unlink(missing_ok=True)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter()
        frame = load_results(store)
        walls.append(time.perf_counter() - wall)
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpus.append(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime)
        assert frame["key"].is_unique
    return median(walls), median(cpus)


def print_loads(source: Path, records: int, root: Path, rounds: int) -> float:
    """Print the load figures of a big store made from ``source``; return the median CPU-s."""
    store = big_store(source, records, root)
    wall, cpu = timed_loads(store, rounds)
    print(
        f"load_results on {records:,} records, as a run wrote them: {wall:.1f} s, "
        f"{cpu:.1f} CPU-s (median of {rounds})"
    )
    cold_wall, cold_cpu = timed_loads(store, rounds, unindexed=True)
    print(
        f"load_results on {records:,} records without an index (the first load makes it): "
        f"{cold_wall:.1f} s, {cold_cpu:.1f} CPU-s (median of {rounds})"
    )
    return cpu


def main() -> None:
    """Print the scale figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=None, help="tasks per domain")
    parser.add_argument("--records", type=int, default=50_000, help="records to load")
    parser.add_argument("--rounds", type=int, default=3, help="loads timed (median)")
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
        print_loads(root / "w1", args.records, root, args.rounds)


if __name__ == "__main__":
    main()
