"""Environment throughput per domain and the time `hasbench check` takes on each domain.

For each domain with a task file in data/tasks/, every task's environment is built
(timed separately) and its gold actions are executed on it, plus one read call per gold
action from the domain's READS list; the tool-call rate counts only the calls. Then the
automatic checks (`hasbench check`) run on each domain's task file, timed per domain.

    .venv/bin/python benchmarks/envs.py [--rounds N] [--skip-check] [--domain NAME ...]

Adding a domain means adding one entry to READS.
"""

from __future__ import annotations

import argparse
import time

from hasbench.build.checks import check_file
from hasbench.envs import make_environment
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks

READS: dict[str, tuple[str, dict, str]] = {
    "retail": ("list_all_product_types", {}, "agent"),
    "airline": ("list_all_airports", {}, "agent"),
    "telecom": ("check_status_bar", {}, "user"),
    "research": ("search_papers", {"query": "graph neural network sampling"}, "agent"),
    "bargaining": ("view_negotiation", {}, "agent"),
}
"""Per domain: a cheap read call (name, arguments, side) mixed in with the gold writes."""


def domain_rate(domain: str, rounds: int) -> tuple[int, float, float, int]:
    """(tasks, seconds to build all environments, tool calls per second, calls made)."""
    scenarios = load_tasks(TASKS_DIR / f"{domain}.yaml")
    users = {u.user_id for s in scenarios for u in s.users}
    read_name, read_args, read_side = READS[domain]
    build_time = call_time = 0.0
    calls = 0
    for _ in range(rounds):
        for scenario in scenarios:
            start = time.perf_counter()
            env = make_environment(scenario)
            build_time += time.perf_counter() - start
            start = time.perf_counter()
            for gold in scenario.evaluation_criteria.actions:
                env.call(gold.name, gold.arguments, "user" if gold.requestor in users else "agent")
                env.call(read_name, read_args, read_side)
                calls += 2
            call_time += time.perf_counter() - start
    return len(scenarios), build_time / rounds, calls / call_time, calls


def main() -> None:
    """Print one line per domain, then the check timing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="passes over each task file")
    parser.add_argument("--skip-check", action="store_true", help="skip the check timing")
    parser.add_argument("--domain", nargs="+", choices=list(READS), help="default: all")
    args = parser.parse_args()
    files = []
    for domain in args.domain or READS:
        path = TASKS_DIR / f"{domain}.yaml"
        if not path.exists():
            print(f"{domain:10s} no task file ({path}); skipped")
            continue
        files.append(path)
        tasks, build, rate, calls = domain_rate(domain, args.rounds)
        per_task = build / tasks * 1000
        print(
            f"{domain:10s} {tasks:4d} tasks  build {build:6.2f} s ({per_task:6.1f} ms/task)"
            f"  {rate:9.0f} tool calls/s over {calls} calls"
        )
    if args.skip_check or not files:
        return
    total, count = 0.0, 0
    for path in files:
        start = time.perf_counter()
        rows = check_file(path)
        elapsed = time.perf_counter() - start
        total, count = total + elapsed, count + len(rows)
        passed = sum(row.passed for row in rows)
        print(
            f"check {path.stem:10s} {len(rows):4d} tasks in {elapsed:5.1f} s "
            f"({elapsed / len(rows) * 1000:6.1f} ms/task, {passed}/{len(rows)} passed every check)"
        )
    print(f"check total        {count:4d} tasks in {total:5.1f} s")


if __name__ == "__main__":
    main()
