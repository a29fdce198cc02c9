"""The ``hasbench`` command line.

Each subcommand is one function ``cmd_<name>(args) -> int`` registered in
:func:`build_parser`. Subcommand modules are imported inside the functions so that
``hasbench --help`` stays fast. Any unexpected exception is reported by :func:`main`
as one ``hasbench: error: ...`` line with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hasbench.simulator import Backends


class DomainChoices:
    """Registered domain names as an argparse ``choices``, read when first needed.

    Checking a value or printing help reads the registry; building the parser does not,
    so no domain is imported for ``hasbench --help`` or commands that need none.
    """

    def __init__(self, names: Callable[[], list[str]]) -> None:
        self.names = names

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def _generated_domains() -> list[str]:
    """The registered domains that have a seeded task generator."""
    from hasbench.registry import all_domains

    return [domain.name for domain in all_domains() if domain.generator is not None]


def _tau2_domains() -> list[str]:
    """The registered domains whose tasks can be imported from τ²-bench."""
    from hasbench.build.tau2_import import tau2_domains

    return tau2_domains()


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


def cmd_import_tau2(args: argparse.Namespace) -> int:
    """Convert a τ²-bench task file into a task YAML file; print what was written."""
    from hasbench.build.tau2_import import Tau2ImportError, import_tau2, write_tasks

    try:
        scenarios, skipped = import_tau2(
            args.tasks, db=args.db, domain=args.domain, user_db=args.user_db, pattern=args.pattern
        )
    except Tau2ImportError as error:
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


ROLES = ("agent", "user", "judge")
"""The roles of :class:`hasbench.simulator.Backends` (named here so --help imports nothing)."""


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """Options that say where each role's model is served and how it is called."""
    group = parser.add_argument_group(
        "endpoints", "where each role's model is served (see README, 'Real models')"
    )
    for role in ROLES:
        group.add_argument(f"--{role}-api-base", metavar="URL", help=f"server of the {role} model")
        group.add_argument(
            f"--{role}-api-key-env", metavar="NAME",
            help=f"environment variable holding the {role} model's key",
        )  # fmt: skip
        group.add_argument(
            f"--{role}-param", nargs=2, action="append", metavar=("KEY", "VALUE"),
            help=f"extra litellm parameter of the {role} model (VALUE read as YAML); repeatable",
        )  # fmt: skip
    group.add_argument(
        "--timeout", type=number(float, above=0), metavar="S", help="seconds per model call"
    )
    group.add_argument(
        "--retries", type=number(int, least=0), metavar="N", help="retries of a failing call"
    )
    group.add_argument(
        "--backoff", type=number(float, least=0), metavar="S", help="seconds before a first retry"
    )


def number(
    kind: type, least: float | None = None, above: float | None = None
) -> Callable[[str], float]:
    """An argparse type: ``kind`` (int or float) at least ``least`` or above ``above``."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if least is not None and value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {text}")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"must be more than {above}, got {text}")
        return value

    return parse


def endpoint_overrides(args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """Role -> the endpoint fields the command line sets (retry options for every role)."""
    import yaml

    policy = {
        name: getattr(args, name)
        for name in ("timeout", "retries", "backoff")
        if getattr(args, name) is not None
    }
    overrides: dict[str, dict[str, object]] = {}
    for role in ROLES:
        fields: dict[str, object] = dict(policy)
        for name in ("api_base", "api_key_env"):
            if (value := getattr(args, f"{role}_{name}")) is not None:
                fields[name] = value
        if params := getattr(args, f"{role}_param"):
            fields["params"] = {key: yaml.safe_load(value) for key, value in params}
        if fields:
            overrides[role] = fields
    return overrides


def apply_endpoints(backends: Backends, overrides: dict[str, dict[str, object]]) -> Backends:
    """``backends`` with the command line's endpoint fields set over its own."""
    from pydantic import ValidationError

    from hasbench.simulator import Backends

    data = backends.model_dump()
    for role, fields in overrides.items():
        endpoint = data["endpoints"].get(role) or {}
        params = {**endpoint.get("params", {}), **fields.get("params", {})}
        data["endpoints"][role] = {**endpoint, **fields, "params": params}
    try:
        return Backends.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            role, field = (list(err["loc"]) + ["", ""])[1:3]  # ("endpoints", role, field, ..)
            if field in ("timeout", "retries", "backoff"):
                option = f"--{field}"
            else:
                option = f"--{role}-" + ("param" if field == "params" else field.replace("_", "-"))
            problems.append(f"{option}: {err['msg'].removeprefix('Value error, ')}")
        raise ValueError("; ".join(problems)) from None


def cmd_episode(args: argparse.Namespace) -> int:
    """Run one episode, write its trace, print one JSON summary (see episode_cli.summarize).

    Exits 1 when a model call failed (the summary's ``error``; the reason on stderr).
    """
    from hasbench.episode_cli import episode_command
    from hasbench.llm import FIXES
    from hasbench.simulator import Backends

    endpoints = apply_endpoints(Backends(), endpoint_overrides(args)).endpoints
    summary = episode_command(
        args.file, args.task_id, agent=args.agent, user=args.user, judge=args.judge,
        agency=args.agency, channels=args.channels, persona=args.persona, seed=args.seed,
        out=args.out, endpoints=endpoints,
    )  # fmt: skip
    print(json.dumps(summary, sort_keys=True))
    error = summary.get("error")
    if error is None:
        return 0
    fix = f" To fix: {FIXES[error['kind']]}." if error["kind"] in FIXES else ""
    print(
        f"hasbench: the {error['role']} model {error['model']} failed: {error['kind']}: "
        f"{error['message']}.{fix} The episode is an error, not a result.",
        file=sys.stderr,
    )
    return 1


def cmd_study_analyze(args: argparse.Namespace) -> int:
    """Analyse DocuTeam study data; write tables and figures; print loader errors, exit 1."""
    from hasbench.docuteam.study import StudyDataError, run_study_analysis
    from hasbench.paths import FIGURES_DIR

    out = args.out or FIGURES_DIR / "docuteam"
    try:
        analysis, paths = run_study_analysis(args.data, out, alpha=args.alpha, seed=args.seed)
    except StudyDataError as error:
        print(error, file=sys.stderr)
        return 1
    if analysis.synthetic:
        print("note: the data are synthetic (metadata 'synthetic: true')")
    print(f"wrote {len(paths)} files to {out}")
    return 0


def cmd_study_example(args: argparse.Namespace) -> int:
    """Write the seeded synthetic example dataset (DocuTeam study shape) as CSV."""
    from hasbench.docuteam.study import generate_example, write_study

    path = write_study(generate_example(seed=args.seed), args.out)
    print(f"wrote synthetic example study data to {path}")
    return 0


def cmd_study_logs(args: argparse.Namespace) -> int:
    """Turn DocuTeam session logs into interaction rows of the study CSV; print errors, exit 1."""
    from hasbench.docuteam.log import LogError
    from hasbench.docuteam.measures import study_data
    from hasbench.docuteam.study import StudyDataError, write_study

    try:
        data = study_data(args.logs)
    except (LogError, StudyDataError, ValueError) as error:
        print(error, file=sys.stderr)
        return 1
    path = write_study(data, args.out)
    print(f"wrote {len(data.frame)} rows from {len(args.logs)} session logs to {path}")
    return 0


def cmd_study_simulate(args: argparse.Namespace) -> int:
    """Run a simulated DocuTeam study; write logs, the study CSV, Table 2 and the figures."""
    from hasbench.docuteam.simulation.study import SimulationConfig, run_simulated_study
    from hasbench.docuteam.study import StudyDataError
    from hasbench.paths import FIGURES_DIR, RUNS_DIR

    config = SimulationConfig(
        participants=args.participants,
        user=args.user,
        engine=args.engine,
        raters=tuple(args.rater or ["rule"]),
        respondent=args.respondent,
        budget=args.budget,
        seed=args.seed,
        **({"personas": args.personas} if args.personas else {}),
    )
    out = Path(args.out) if args.out else RUNS_DIR / "docuteam_sim"
    figures = Path(args.figures) if args.figures else FIGURES_DIR / "docuteam_simulated"
    try:
        study, analysis, paths = run_simulated_study(config, out, figures, alpha=args.alpha)
    except StudyDataError as error:
        print(error, file=sys.stderr)
        return 1
    print(
        f"simulated participants: {len(study.data.participants)} personas x 2 conditions; "
        f"{len(study.data.frame)} rows in {study.csv} ({len(study.dropped)} values left out, "
        f"see {study.manifest})"
    )
    print(f"wrote {len(paths)} files to {figures}")
    return 0


def cmd_docuteam_demo(args: argparse.Namespace) -> int:
    """Run the scripted user's DocuTeam session on a task; write its log; print measures."""
    import asyncio

    from hasbench.docuteam import ManualClock, Session, SessionConfig, session_measures
    from hasbench.docuteam.demo import DEMOS, DOCUTEAM_DATA, run_demo
    from hasbench.docuteam.steps import Backends

    config = SessionConfig(
        condition=args.condition,
        participant=args.participant,
        task_name=args.task,
        order=args.order,
        simulated_user=True,
    )
    session = Session.from_folder(
        DOCUTEAM_DATA / args.task,
        config=config,
        backends=Backends.all(args.backend),
        clock=ManualClock(),
        log_path=args.out,
    )
    asyncio.run(run_demo(session, DEMOS[args.task]))
    print(json.dumps(session_measures(session.log), sort_keys=True))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run (or resume) an experiment grid into its results store.

    Exits 0 when every episode has a result, 1 when any ended in error or a backend was
    stopped, 3 when the budget stopped the run early (run again to go on).
    """
    from hasbench.runner import RunBudget, load_experiment, run_experiment
    from hasbench.sync import run_sync

    experiment = load_experiment(args.experiment)
    overrides = endpoint_overrides(args)
    changes: dict[str, object] = {}
    if overrides:
        changes["backends"] = [apply_endpoints(b, overrides) for b in experiment.backends]
    if args.max_calls is not None or args.max_cost is not None:
        budget = experiment.budget.model_dump() if experiment.budget else {}
        for name in ("max_calls", "max_cost"):
            if getattr(args, name) is not None:
                budget[name] = getattr(args, name)
        changes["budget"] = RunBudget.model_validate(budget)
    experiment = experiment.model_copy(update=changes)
    done = run_sync(
        run_experiment(
            experiment,
            args.out,
            progress=not args.quiet,
            workers=args.workers,
            cluster=args.cluster,
        )
    )
    cost = f", ${done.cost:.4f}" if done.cost else ""
    print(
        f"{done.directory}: {done.total} episodes, {done.ran} run, {done.skipped} already "
        f"done, {done.failed} ended in error, {done.not_started} not started; "
        f"{done.model_calls} model calls, {done.cache_hits} cache hits{cost}"
    )
    for item in done.quarantined:
        print(f"quarantined (run again): {item}")
    if done.failed:
        print(
            f"{done.failed} episode(s) ended in error (left out of every number; the next "
            f"run retries them): hasbench results {done.directory} lists them"
        )
    if done.stopped:
        print(f"{len(done.stopped)} backend(s) stopped (see the message above)")
    if done.budget:
        print(f"stopped early: {done.budget}; run again to go on")
    if done.failed or done.stopped:
        return 1
    return 3 if done.not_started else 0


def cmd_results(args: argparse.Namespace) -> int:
    """Print one experiment of a results store; exit 1 when damaged files were skipped."""
    from hasbench.report import results_report

    text, status = results_report(args.directory, args.experiment)
    print(text)
    return status


def cmd_notebook(args: argparse.Namespace) -> int:
    """Execute a notebook (or, for ``all``, every figure notebook and the index) with papermill.

    Prints where the executed copy and its HTML export are (for ``all``, the index page).
    """
    import yaml

    from hasbench.runner import run_notebook

    parameters = {key: yaml.safe_load(value) for key, value in args.parameter or []}
    if args.grid is not None:
        return notebook_sweep(args, parameters)
    if args.workers is not None or args.cluster is not None:
        raise ValueError("--workers and --cluster run a sweep: give the parameter sets with --grid")
    if args.name == "all":
        from hasbench.experiments.figures_index import run_all

        print(run_all(parameters, args.output_dir, progress=not args.quiet))
        return 0
    executed = run_notebook(args.name, parameters, args.output_dir, progress=not args.quiet)
    print(f"executed notebook: {executed}")
    print(f"HTML report (opens without a kernel): {executed.with_suffix('.html')}")
    return 0


def notebook_sweep(args: argparse.Namespace, parameters: dict[str, Any]) -> int:
    """Run ``hasbench notebook NAME --grid FILE``; exit status 1 when a parameter set failed."""
    from hasbench.runner.notebooks import run_sweep

    if args.name == "all":
        raise ValueError("--grid sweeps one notebook: name it instead of 'all'")
    if parameters:
        raise ValueError("-p does not combine with --grid: put the values under the grid's fixed")
    sweep = run_sweep(
        args.name, args.grid, args.output_dir, args.workers, args.cluster, not args.quiet
    )
    failed = sweep.failed
    print(
        f"sweep of {args.name}: {len(sweep.rows)} parameter set(s), ran {sweep.ran}, "
        f"skipped {sweep.skipped} finished earlier, {len(failed)} failed"
    )
    for row in failed:
        print(f"  failed {row['directory']}: {row['error']}")
    print(f"summary: {sweep.directory / 'summary.csv'}")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="hasbench", description="Research workbench for LLM-based Human-Agent Systems."
    )
    parser.add_argument(
        "--plugin", action="append", default=[], metavar="MODULE",
        help="import MODULE (from the Python path or the current directory) and register the "
        "domain it defines as DOMAIN; repeatable (also: HASBENCH_PLUGINS=MODULE,...)",
    )  # fmt: skip
    parser.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="run coding tasks' code without bubblewrap (unsafe; traces record it)",
    )  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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

    p = sub.add_parser("build", help="regenerate task files from their seeded generators")
    build = p.add_subparsers(dest="build_command", required=True, metavar="WHAT")
    q = build.add_parser("tasks", help="write data/tasks/<domain>.yaml")
    q.add_argument(
        "--domain", choices=DomainChoices(_generated_domains), metavar="DOMAIN",
        help="one of %(choices)s (default: all)",
    )  # fmt: skip
    q.set_defaults(func=cmd_build_tasks)
    q = build.add_parser("filter", help="step 1: filter the τ²-bench and MultiAgentBench tasks")
    q.add_argument("--tau2", required=True, metavar="DIR", help="τ²'s data/tau2/domains folder")
    q.add_argument("--marble", required=True, metavar="DIR", help="MARBLE's multiagentbench folder")
    q.add_argument("--out", required=True, metavar="DIR", help="where filter.csv/.md go")
    q.add_argument("--telecom-tasks", metavar="FILE", help="another telecom task file (full set)")
    q.set_defaults(func=cmd_build_filter)
    q = build.add_parser("has-bench", help="the whole pipeline: filter, patterns, adapt, validate")
    q.add_argument("--tau2", required=True, metavar="DIR", help="τ²'s data/tau2/domains folder")
    q.add_argument("--marble", required=True, metavar="DIR", help="MARBLE's multiagentbench folder")
    q.add_argument("--out", required=True, metavar="DIR", help="where tasks and reports go")
    q.add_argument(
        "--judges",
        nargs="+",
        default=None,
        metavar="MODEL",
        help="pattern judges: rule:holder, rule:path, ... or model strings",
    )
    q.add_argument("--min-agree", type=int, default=3, help="viable votes a pattern needs")
    q.add_argument(
        "--structural",
        nargs="+",
        default=None,
        metavar="MODEL",
        help="D1-D7 reviewers: rule:static, rule:episodes, rule:source or models",
    )
    q.add_argument(
        "--worthiness",
        nargs="+",
        default=None,
        metavar="MODEL",
        help="W1-W5 reviewers (as --structural)",
    )
    q.add_argument("--patterns-per-task", type=int, default=2, help="scenarios per base task")
    q.add_argument("--repair-rounds", type=int, default=2, help="repairs of a CONDITIONAL task")
    q.add_argument("--per-stratum", type=int, default=2, help="human-review sample per stratum")
    q.add_argument("--seed", type=int, default=0, help="seed of personas, revisions, sample")
    q.add_argument("--workers", type=int, default=2, help="processes for the checks")
    q.add_argument("--quiet", action="store_true", help="no progress on stderr")
    q.set_defaults(func=cmd_build_has_bench)
    q = build.add_parser("agreement", help="means and inter-rater agreement of review sheets")
    q.add_argument("sheets", nargs="+", metavar="SHEET", help="filled review_sheet.csv copies")
    q.add_argument("--out", metavar="FILE.md", help="also write the table here")
    q.set_defaults(func=cmd_build_agreement)

    p = sub.add_parser("import", help="convert tasks from another benchmark's format")
    source = p.add_subparsers(dest="import_source", required=True, metavar="FORMAT")
    q = source.add_parser("tau2", help="τ²-bench tasks.json of a domain that imports them")
    q.add_argument("tasks", metavar="TASKS.json", help="a τ²-bench task file")
    q.add_argument("--db", required=True, metavar="DB_FILE", help="the database the tasks use")
    q.add_argument(
        "--domain", required=True, choices=DomainChoices(_tau2_domains), metavar="DOMAIN",
        help="one of %(choices)s",
    )  # fmt: skip
    q.add_argument("--user-db", metavar="USER_DB_FILE", help="telecom: the phone's user_db file")
    q.add_argument("--pattern", default="A", choices=list("ABCDEF"), help="pattern (default A)")
    q.add_argument("--out", required=True, metavar="FILE.yaml", help="where to write the tasks")
    q.add_argument(
        "--report", metavar="DIR", help="run the checks; write <FILE>_import.csv/.md here"
    )
    q.add_argument("--workers", type=int, default=2, help="processes for the checks")
    q.set_defaults(func=cmd_import_tau2)
    q = source.add_parser("marble", help="MultiAgentBench JSONL (coding, research, bargaining)")
    q.add_argument("file", metavar="FILE.jsonl", help="a MultiAgentBench task file")
    q.add_argument("--pattern", default="D", choices=list("ABCDEF"), help="pattern (default D)")
    q.add_argument("--out", required=True, metavar="TASKS.yaml", help="where to write the tasks")
    q.set_defaults(func=cmd_import_marble)

    p = sub.add_parser("episode", help="run one episode of a task and print a JSON summary")
    p.add_argument("file", metavar="FILE", help="a task YAML file")
    p.add_argument("task_id", metavar="TASK_ID", help="the task to run")
    p.add_argument("--agent", default="scripted:oracle", help="agent model or scripted:*")
    p.add_argument(
        "--user", default="scripted:user",
        help="user model, scripted:user, or human:terminal to play the humans yourself "
        "(human:terminal?play=user_1 plays only user_1)",
    )  # fmt: skip
    p.add_argument("--judge", default="rule", help="judge model or 'rule'")
    p.add_argument("--agency", default="A3", choices=["A1", "A2", "A3", "A4", "A5"])
    p.add_argument(
        "--channels", default="full",
        choices=["full", "clar-only", "feed-only", "cont-only", "no-clar", "no-feed", "no-cont"],
    )  # fmt: skip
    p.add_argument("--persona", default=None, help="persona id overriding every user's")
    p.add_argument("--seed", type=int, default=0, help="episode seed")
    p.add_argument("--out", metavar="TRACE.jsonl", help="where to write the trace")
    add_endpoint_options(p)
    p.set_defaults(func=cmd_episode)

    p = sub.add_parser("study", help="DocuTeam user-study data: analyse or write an example")
    study = p.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    q = study.add_parser("analyze", help="analyse a study CSV into tables and figures")
    q.add_argument("data", metavar="DATA.csv", help="study data in the long-format schema")
    q.add_argument("--out", help="output directory (default: figures/docuteam)")
    q.add_argument("--alpha", type=float, default=0.05, help="significance level")
    q.add_argument("--seed", type=int, default=0, help="seed for bootstrap and simulation")
    q.set_defaults(func=cmd_study_analyze)
    q = study.add_parser("example", help="write the synthetic example dataset")
    q.add_argument("--out", required=True, metavar="FILE", help="CSV file to write")
    q.add_argument("--seed", type=int, default=0, help="generator seed")
    q.set_defaults(func=cmd_study_example)
    q = study.add_parser(
        "logs", help="interaction rows of the study CSV from DocuTeam session logs"
    )
    q.add_argument(
        "logs", nargs="+", metavar="LOG.jsonl", help="one log per participant and condition"
    )
    q.add_argument("--out", required=True, metavar="FILE", help="CSV file to write")
    q.set_defaults(func=cmd_study_logs)
    q = study.add_parser(
        "simulate",
        help="a simulated within-subjects study: personas use both conditions; then analyse",
    )
    q.add_argument("--participants", type=int, default=8, help="simulated participants (>= 3)")
    q.add_argument("--user", default="scripted", help="'scripted' or a model for the personas")
    q.add_argument("--engine", default="scripted:docuteam", help="model for every DocuTeam role")
    q.add_argument(
        "--rater", action="append", metavar="RATER",
        help="blind rater: 'rule' (default) or a model; repeat for several raters",
    )  # fmt: skip
    q.add_argument(
        "--respondent", default=None,
        help="who answers the questionnaires: 'scripted' or a model (default: as --user)",
    )  # fmt: skip
    q.add_argument("--budget", type=int, default=12, help="steps per session")
    q.add_argument("--seed", type=int, default=0, help="seed of the simulation and analysis")
    q.add_argument("--personas", metavar="FILE", help="personas YAML (default: data/docuteam)")
    q.add_argument("--alpha", type=float, default=0.05, help="significance level")
    q.add_argument("--out", metavar="DIR", help="logs and study CSV (default: runs/docuteam_sim)")
    q.add_argument(
        "--figures", metavar="DIR", help="tables and figures (default: figures/docuteam_simulated)"
    )
    q.set_defaults(func=cmd_study_simulate)

    p = sub.add_parser("docuteam", help="DocuTeam engine: run the scripted demo session")
    docuteam = p.add_subparsers(dest="docuteam_command", required=True, metavar="ACTION")
    q = docuteam.add_parser("demo", help="a scripted user's session on an event plan, logged")
    q.add_argument("--task", choices=["workshop", "sports_day"], default="workshop")
    q.add_argument("--condition", choices=["DocuTeam", "Baseline"], default="DocuTeam")
    q.add_argument("--backend", default="scripted:docuteam", help="model for every role")
    q.add_argument("--participant", default="demo", help="participant label in the log")
    q.add_argument("--order", type=int, choices=[1, 2], default=1, help="block order label")
    q.add_argument("--out", required=True, metavar="LOG.jsonl", help="session log to write")
    q.set_defaults(func=cmd_docuteam_demo)

    p = sub.add_parser("run", help="run or resume an experiment grid (EXPERIMENT.yaml)")
    p.add_argument("experiment", metavar="EXPERIMENT.yaml", help="an experiment file")
    p.add_argument("--out", metavar="DIR", help="results directory (default: runs/<name>)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes for offline (CPU-bound) episodes (default: one per CPU; 1: none)",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the episodes on a Dask cluster (scheduler address, or local:N to start one)",
    )
    p.add_argument(
        "--max-calls", type=number(int, least=1), metavar="N", help="stop after N model calls"
    )
    p.add_argument(
        "--max-cost", type=number(float, above=0), metavar="USD", help="stop after spending USD"
    )
    add_endpoint_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("results", help="print the summary table of a results directory")
    p.add_argument("directory", metavar="DIR", help="a results directory")
    p.add_argument(
        "--experiment", metavar="KEY", help="which experiment of the store (key or name; "
        "default: the one run last)",
    )  # fmt: skip
    p.set_defaults(func=cmd_results)

    p = sub.add_parser(
        "notebook", help="execute a registered notebook with papermill; also write it as HTML"
    )
    p.add_argument(
        "name", metavar="NAME",
        help="the notebook's registered name, e.g. rq1; 'all' runs every figure notebook and "
        "writes figures/index.html",
    )  # fmt: skip
    p.add_argument(
        "-p", "--parameter", nargs=2, action="append", metavar=("KEY", "VALUE"),
        help="notebook parameter (VALUE is read as YAML); repeatable",
    )  # fmt: skip
    p.add_argument(
        "--output-dir", metavar="D",
        help="where the executed copy goes (with --grid: the sweep's folder, default "
        "runs/sweeps/NAME-GRID)",
    )  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no cell and progress lines")
    p.add_argument(
        "--grid", metavar="FILE",
        help="run once per parameter set of FILE (YAML: fixed, vary, sets), in parallel, "
        "each in its own folder; a rerun skips finished sets",
    )  # fmt: skip
    p.add_argument(
        "--workers", type=number(int, least=1), metavar="N",
        help="with --grid: worker processes (default: one per CPU)",
    )  # fmt: skip
    p.add_argument(
        "--cluster", metavar="ADDRESS",
        help="with --grid: run the sets on a Dask cluster (scheduler address, or local:N)",
    )  # fmt: skip
    p.set_defaults(func=cmd_notebook)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status.

    Plug-in domains (``--plugin``) are registered before the arguments are parsed, so
    that the commands' domain choices include them.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    plugins = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    plugins.add_argument("--plugin", action="append", default=[])
    try:
        if plugin_modules := plugins.parse_known_args(argv)[0].plugin:
            from hasbench.registry import load_plugin

            if os.getcwd() not in sys.path:
                sys.path.append(os.getcwd())  # as with `python -m`: modules here are found
            for module in plugin_modules:
                load_plugin(module)
    except Exception as error:  # the CLI must never show a traceback
        print(f"hasbench: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    if args.unsafe_no_sandbox:
        from hasbench.envs.coding.sandbox import UNSAFE_ENV

        os.environ[UNSAFE_ENV] = "1"
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("hasbench: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # the CLI must never show a traceback
        print(f"hasbench: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
