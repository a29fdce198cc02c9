"""``hasbench validate``, ``tasks`` and ``check``: task files checked and listed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``validate``, ``tasks`` and ``check`` commands."""
    p = sub.add_parser("validate", help="check task YAML files against the scenario schema")
    p.add_argument("paths", nargs="+", metavar="PATH", help="task files or directories")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("tasks", help="list the tasks of a task file")
    p.add_argument("file", metavar="FILE", help="a task YAML file")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=cmd_tasks)

    p = sub.add_parser("check", help="run the automatic checks (oracle, idle, hidden facts)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="task files or directories")
    p.set_defaults(func=cmd_check)


def _expand_paths(paths: Sequence[str]) -> list[Path]:
    """Expand directories to their ``*.yaml`` files (sorted); keep files as given."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(path.glob("*.yaml")))
        else:
            files.append(path)
    return files


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate task files; print one line per problem; exit 1 if there is any."""
    from hasbench.scenario import read_tasks

    files = _expand_paths(args.paths)
    if not files:
        print("hasbench: error: no *.yaml files found", file=sys.stderr)
        return 2
    n_tasks = 0
    n_problems = 0
    for path in files:
        scenarios, problems = read_tasks(path)
        for problem in problems:
            print(problem)
        n_tasks += len(scenarios)
        n_problems += len(problems)
    if n_problems:
        return 1
    print(f"ok: {n_tasks} tasks in {len(files)} files")
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    """List the tasks of one file: id, domain, pattern, coordination mode."""
    from hasbench.scenario import ScenarioError, load_tasks

    try:
        scenarios = load_tasks(args.file)
    except ScenarioError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return 1
    for scn in scenarios:
        row = {
            "task_id": scn.task_id,
            "domain": scn.domain,
            "pattern": scn.adaptation_pattern,
            "coordination_mode": scn.coordination_mode,
        }
        if args.json:
            print(json.dumps(row))
        else:
            print("\t".join(row.values()))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Run the automatic task checks; print a per-task table; exit 1 on any failure."""
    from hasbench.build.checks import check_file, format_table

    files = _expand_paths(args.paths)
    rows = [row for path in files for row in check_file(path)]
    print(format_table(rows))
    return 0 if rows and all(row.passed for row in rows) else 1
