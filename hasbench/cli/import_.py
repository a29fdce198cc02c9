"""``hasbench import``: convert τ²-bench and MultiAgentBench tasks into task YAML files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hasbench.cli.options import TAU2_HELP, DomainChoices, number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``import`` and its formats: ``tau2``, ``marble``."""
    p = sub.add_parser("import", help="convert tasks from another benchmark's format")
    source = p.add_subparsers(dest="import_source", required=True, metavar="FORMAT")
    q = source.add_parser("tau2", help="τ²-bench tasks.json of a domain that imports them")
    q.add_argument(
        "tasks", nargs="?", metavar="TASKS.json",
        help="a τ²-bench task file (default: the domain's tasks.json of the τ² data)",
    )  # fmt: skip
    q.add_argument("--tau2", metavar="DIR", help=TAU2_HELP)
    q.add_argument("--db", metavar="DB_FILE", help="the database (default: the τ² data's)")
    q.add_argument(
        "--domain", required=True, choices=DomainChoices(_tau2_domains), metavar="DOMAIN",
        help="one of %(choices)s",
    )  # fmt: skip
    q.add_argument(
        "--user-db", metavar="USER_DB_FILE", help="telecom: the phone's user_db (default: as --db)"
    )
    q.add_argument("--pattern", default="A", choices=list("ABCDEF"), help="pattern (default A)")
    q.add_argument("--out", required=True, metavar="FILE.yaml", help="where to write the tasks")
    q.add_argument(
        "--report", metavar="DIR", help="run the checks; write <FILE>_import.csv/.md here"
    )
    q.add_argument(
        "--workers", type=number(int, least=1), default=2, help="processes for the checks"
    )
    q.set_defaults(func=cmd_import_tau2)
    q = source.add_parser("marble", help="MultiAgentBench JSONL (coding, research, bargaining)")
    q.add_argument("file", metavar="FILE.jsonl", help="a MultiAgentBench task file")
    q.add_argument("--pattern", default="D", choices=list("ABCDEF"), help="pattern (default D)")
    q.add_argument("--out", required=True, metavar="TASKS.yaml", help="where to write the tasks")
    q.set_defaults(func=cmd_import_marble)


def _tau2_domains() -> list[str]:
    """The registered domains whose tasks can be imported from τ²-bench."""
    from hasbench.build.tau2_import import tau2_domains

    return tau2_domains()


def cmd_import_tau2(args: argparse.Namespace) -> int:
    """Convert a τ²-bench task file into a task YAML file; print what was written."""
    from hasbench.build.sources import SourceError, locate_tau2
    from hasbench.build.tau2_import import Tau2ImportError, import_tau2, write_tasks

    try:
        data = None if args.tasks and args.db else locate_tau2(args.tau2)
        db = args.db or data.db(args.domain)
        user_db = args.user_db or (None if args.db else data.user_db(args.domain))
        scenarios, skipped = import_tau2(
            args.tasks or data.tasks_file(args.domain), db=db, domain=args.domain,
            user_db=user_db, pattern=args.pattern,
        )  # fmt: skip
    except (Tau2ImportError, SourceError) as error:
        print(f"hasbench import: {error}", file=sys.stderr)
        return 1
    for note in skipped:
        print(f"skipped {note}")
    write_tasks(scenarios, args.out)
    print(f"wrote {len(scenarios)} tasks to {args.out}")
    if args.report:
        from hasbench.build.import_report import check_imported, pass_rates, write_import_report

        rows = check_imported(scenarios, workers=args.workers)
        paths = write_import_report(rows, args.report, f"{Path(args.out).stem}_import")
        for domain, rate in pass_rates(rows).items():
            print(
                f"{domain}: the oracle solves {rate['oracle_solved']}/{rate['tasks']} "
                f"({rate['oracle_rate']:.1%}); {rate['passed']} pass every check "
                f"({rate['pass_rate']:.1%}); {rate['excepted']} reasoned exceptions, "
                f"{rate['unexplained']} unexplained"
            )
        print(f"wrote {paths[0]} and {paths[1].name}")
    return 0


def cmd_import_marble(args: argparse.Namespace) -> int:
    """Convert a MultiAgentBench (MARBLE) JSONL file; print warnings, skips and a summary."""
    from hasbench.build.marble import MarbleFormatError, import_marble, write_tasks

    try:
        result = import_marble(args.file, pattern=args.pattern)
    except MarbleFormatError as error:
        print(f"hasbench import: {error}", file=sys.stderr)
        return 1
    for note in result.skipped:
        print(f"not converted: {note}")
    for note in result.warnings:
        print(f"warning: {note}")
    print(result.summary())
    if not result.scenarios:
        return 1
    write_tasks(result.scenarios, args.out)
    print(f"wrote {len(result.scenarios)} tasks to {args.out}")
    return 0
