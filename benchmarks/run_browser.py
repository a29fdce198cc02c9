"""How fast RunBrowser answers on big stores: loading, filtering, searching, sorting.

Runs a small offline grid (the mock tasks, two stand-ins, A1 and A3), then builds stores of
1,000 and 50,000 episodes from its records (copies under new keys and seeds, their traces
linked, one experiment listing them all) and, on each, times what a person does: open the
browser (loading the store), type a filter one key at a time, sort by a column and again
(reversed), and pick each quick filter. Targets (issue 25): every answer within 0.5 s on
1,000 episodes and within 2 s on 50,000. ``load_results`` on 50,000 records, and opening
the browser on them: within 5 s on quiet cores (issue 31; CPU seconds are printed beside
the wall-clock time, which on a shared machine is mostly waiting).

    .venv/bin/python benchmarks/run_browser.py [--sizes 1000 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from hasbench.agency import Setting
from hasbench.runner import Experiment, TaskSelection, load_results, run_experiment, store_index
from hasbench.runner.store import EXPERIMENTS, stored_experiments, write_record
from hasbench.simulator import Backends
from hasbench.widgets import RunBrowser

TARGETS = {1_000: 0.5, 50_000: 2.0}
"""Episodes -> seconds within which every filter, search and sort must answer."""
LOAD_TARGET = {50_000: 5.0}


def source_store(root: Path) -> Path:
    """A real offline store to copy records from."""
    grid = Experiment(
        name="browse",
        tasks=TaskSelection(files=["data/tasks/examples.yaml"]),
        backends=[
            Backends(agent="scripted:standin?strong"),
            Backends(agent="scripted:standin?weak"),
        ],
        settings=[Setting(agency="A1"), Setting(agency="A3")],
    )
    asyncio.run(run_experiment(grid, root / "source", progress=False, workers=1))
    return root / "source"


def big_store(source: Path, episodes: int, root: Path) -> Path:
    """A store of ``episodes`` records copied from ``source``, one experiment listing them.

    The records are written by the store's writer into a store whose index is open, as a
    run writes them.
    """
    big = root / f"store-{episodes}"
    for folder in ("episodes", "traces", EXPERIMENTS):
        (big / folder).mkdir(parents=True)
    originals = [json.loads(p.read_text()) for p in sorted(source.glob("episodes/*.json"))]
    keys = []
    store_index.open_index(big)
    for index in range(episodes):
        record = dict(originals[index % len(originals)])
        record["key"] = key = f"{index:020x}"
        record["seed"] = index // len(originals)
        record["trace"] = f"traces/{key}.jsonl"
        (big / "traces" / f"{key}.jsonl").hardlink_to(
            source / originals[index % len(originals)]["trace"]
        )
        write_record(big, key, record)
        keys.append(key)
    (definition,) = [e.definition for e in stored_experiments(source)]
    definition = {**definition, "key": "0" * 16, "episodes": keys}
    (big / EXPERIMENTS / f"{'0' * 16}.json").write_text(json.dumps(definition))
    return big


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def cpu_timed(action) -> tuple[float, float]:
    """(wall, CPU) seconds of ``action()``: on a loaded machine the wall time is mostly waiting."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def _verdict(cpu: float, goal: float | None) -> str:
    """The load time's verdict beside its target (CPU seconds: what quiet cores take)."""
    if goal is None:
        return ""
    return f"  [target <= {goal:g} s on quiet cores: {'ok' if cpu <= goal else 'MISSED'}]"


def measure(store: Path, episodes: int) -> None:
    """Print the time of each action on one store, beside its target."""
    target = TARGETS.get(episodes)
    goal = LOAD_TARGET.get(episodes)
    seconds, cpu = cpu_timed(lambda: load_results(store))
    print(f"{episodes:>6} episodes: load_results {seconds:6.2f} s, {cpu:.2f} CPU-s"
          f"{_verdict(cpu, goal)}")  # fmt: skip
    browser = None

    def load() -> None:
        nonlocal browser
        browser = RunBrowser(store)

    seconds, cpu = cpu_timed(load)
    assert browser is not None and len(browser.frame) == episodes
    verdict = _verdict(cpu, goal)
    print(
        f"{episodes:>6} episodes: open (load the store) {seconds:6.2f} s, {cpu:.2f} CPU-s{verdict}"
    )
    actions = {}
    typed = [
        timed(lambda n=n: setattr(browser.search, "value", "mock_c_00"[:n])) for n in range(1, 10)
    ]
    actions["type a filter (slowest key)"] = max(typed)
    actions["clear the filter"] = timed(lambda: setattr(browser.search, "value", ""))
    actions["sort by score"] = timed(lambda: browser.sort_by("task_score"))
    actions["sort by score again (reverse)"] = timed(lambda: browser.sort_by("task_score"))
    actions["sort by task"] = timed(lambda: browser.sort_by("task_id"))
    for key in ("rescued", "errors", "unsafe", "all"):
        actions[f"quick filter {key}"] = timed(lambda k=key: setattr(browser.quick, "value", k))
    worst = max(actions.values())
    for name, seconds in actions.items():
        print(f"{'':>16}{name:<32} {seconds * 1000:8.1f} ms")
    if target is not None:
        verdict = "ok" if worst <= target else "MISSED"
        print(f"{'':>16}slowest answer {worst:.3f} s  [target <= {target:g} s: {verdict}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(TARGETS))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} (a shared machine slows all)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = source_store(root)
        for episodes in args.sizes:
            measure(big_store(source, episodes, root), episodes)


if __name__ == "__main__":
    main()
