"""``hasbench build``: regenerate generated domains' tasks and build HAS-Bench from its sources."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hasbench.cli.options import TAU2_HELP, DomainChoices, number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``build`` and its steps: ``tasks``, ``filter``, ``has-bench``, ``agreement``."""
    p = sub.add_parser("build", help="regenerate task files from their seeded generators")
    build = p.add_subparsers(dest="build_command", required=True, metavar="WHAT")
    q = build.add_parser("tasks", help="write data/tasks/<domain>.yaml")
    q.add_argument(
        "--domain", choices=DomainChoices(_generated_domains), metavar="DOMAIN",
        help="one of %(choices)s (default: all)",
    )  # fmt: skip
    q.set_defaults(func=cmd_build_tasks)
    q = build.add_parser("filter", help="step 1: filter the τ²-bench and MultiAgentBench tasks")
    q.add_argument("--tau2", metavar="DIR", help=TAU2_HELP)
    q.add_argument("--marble", required=True, metavar="DIR", help="MARBLE's multiagentbench folder")
    q.add_argument("--out", required=True, metavar="DIR", help="where filter.csv/.md go")
    q.add_argument("--telecom-tasks", metavar="FILE", help="another telecom task file (full set)")
    q.set_defaults(func=cmd_build_filter)
    q = build.add_parser("has-bench", help="the whole pipeline: filter, patterns, adapt, validate")
    q.add_argument("--tau2", metavar="DIR", help=TAU2_HELP)
    q.add_argument("--marble", required=True, metavar="DIR", help="MARBLE's multiagentbench folder")
    q.add_argument("--out", required=True, metavar="DIR", help="where tasks and reports go")
    q.add_argument(
        "--judges", nargs="+", default=None, metavar="MODEL",
        help="pattern judges: rule:holder, rule:path, ... or model strings",
    )  # fmt: skip
    q.add_argument("--min-agree", type=int, default=3, help="viable votes a pattern needs")
    q.add_argument(
        "--structural", nargs="+", default=None, metavar="MODEL",
        help="D1-D7 reviewers: rule:static, rule:episodes, rule:source or models",
    )  # fmt: skip
    q.add_argument(
        "--worthiness", nargs="+", default=None, metavar="MODEL",
        help="W1-W5 reviewers (as --structural)",
    )  # fmt: skip
    q.add_argument(
        "--patterns-per-task", type=int, default=None,
        help="at most this many scenarios per base task (default: every supported pattern)",
    )  # fmt: skip
    q.add_argument("--repair-rounds", type=int, default=2, help="repairs of a CONDITIONAL task")
    q.add_argument("--per-stratum", type=int, default=2, help="human-review sample per stratum")
    q.add_argument("--seed", type=int, default=0, help="seed of personas, revisions, sample")
    q.add_argument(
        "--workers", type=number(int, least=1), default=2, help="processes for the checks"
    )
    q.add_argument("--quiet", action="store_true", help="no progress on stderr")
    q.set_defaults(func=cmd_build_has_bench)
    q = build.add_parser("agreement", help="means and inter-rater agreement of review sheets")
    q.add_argument("sheets", nargs="+", metavar="SHEET", help="filled review_sheet.csv copies")
    q.add_argument("--out", metavar="FILE.md", help="also write the table here")
    q.set_defaults(func=cmd_build_agreement)


def _generated_domains() -> list[str]:
    """The registered domains that have a seeded task generator."""
    from hasbench.registry import all_domains

    return [domain.name for domain in all_domains() if domain.generator is not None]


def cmd_build_tasks(args: argparse.Namespace) -> int:
    """Regenerate task files with their seeded generators; print each file written."""
    import importlib

    from hasbench.registry import get_domain

    for name in [args.domain] if args.domain else _generated_domains():
        module, function = get_domain(name).generator.split(":")
        path = getattr(importlib.import_module(module), function)()
        print(f"wrote {path}")
    return 0


def cmd_build_filter(args: argparse.Namespace) -> int:
    """Step 1: filter the source tasks; write the report and print the counts."""
    from hasbench.build.source_filter import SourceFilterError, run_filter

    try:
        results = run_filter(args.tau2, args.marble, args.out, telecom_tasks=args.telecom_tasks)
    except SourceFilterError as error:
        print(f"hasbench build filter: {error}", file=sys.stderr)
        return 1
    for domain, rows in results.items():
        print(f"{domain}: kept {sum(r.verdict == 'keep' for r in rows)} of {len(rows)}")
    print(f"wrote {Path(args.out) / 'filter.csv'} and filter.md")
    return 0


def cmd_build_has_bench(args: argparse.Namespace) -> int:
    """Run the whole construction pipeline; print the report's path and the counts."""
    from hasbench.build.pipeline import BuildSettings, PipelineError, run_pipeline

    defaults = BuildSettings()
    settings = BuildSettings(
        judges=tuple(args.judges or defaults.judges), min_agree=args.min_agree,
        structural=tuple(args.structural or defaults.structural),
        worthiness=tuple(args.worthiness or defaults.worthiness),
        patterns_per_task=args.patterns_per_task, max_repair_rounds=args.repair_rounds,
        per_stratum=args.per_stratum, seed=args.seed, workers=args.workers,
    )  # fmt: skip
    try:
        result = run_pipeline(args.tau2, args.marble, args.out, settings, quiet=args.quiet)
    except PipelineError as error:
        print(f"hasbench build has-bench: {error}", file=sys.stderr)
        return 1
    for domain, c in result.counts.items():
        done = "waiting for templates" if c["waiting"] else f"{c['included']} included"
        print(f"{domain}: kept {c['kept']}, {done} (paper {c['paper']})")
    print(f"wrote {Path(args.out) / 'build_report.md'} in {result.seconds['total']:.0f} s")
    for error in result.errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if result.errors else 0


def cmd_build_agreement(args: argparse.Namespace) -> int:
    """Read filled review sheets; print per-dimension means and inter-rater agreement."""
    from hasbench.build.verification import SheetError, agreement, format_agreement, read_sheets

    try:
        table = format_agreement(agreement(read_sheets(args.sheets)))
    except SheetError as error:
        print(f"hasbench build agreement: {error}", file=sys.stderr)
        return 1
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n", encoding="utf-8")
    return 0
