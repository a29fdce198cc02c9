"""``hasbench study``: DocuTeam user-study data analysed, generated, taken from logs, simulated."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``study`` and its actions: ``analyze``, ``example``, ``logs``, ``simulate``."""
    p = sub.add_parser("study", help="DocuTeam user-study data: analyse or write an example")
    study = p.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    q = study.add_parser(
        "analyze", help="analyse a study CSV, or a served study's folder, into tables and figures"
    )
    q.add_argument(
        "data", metavar="DATA.csv|DIR",
        help="study data in the long-format schema, or the folder of 'hasbench serve study'",
    )  # fmt: skip
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


def cmd_study_analyze(args: argparse.Namespace) -> int:
    """Analyse DocuTeam study data; write tables and figures; print loader errors, exit 1.

    A folder of a served study is read as it is (:mod:`hasbench.docuteam.study.folder`):
    the participants left out and the failed sessions are listed apart.
    """
    from hasbench.docuteam.study import StudyDataError, run_study_analysis
    from hasbench.docuteam.study.folder import failed_line, study_from_folder
    from hasbench.paths import FIGURES_DIR

    out = args.out or FIGURES_DIR / "docuteam"
    data = args.data
    try:
        if Path(data).is_dir():
            folder = study_from_folder(data)
            data = folder.csv
            for failed in folder.failed:
                print(failed_line(failed))
            for left in folder.left_out:
                print(f"left out: {left['participant']}: {left['reason']}")
            for dropped in folder.dropped:
                print(
                    f"dropped: {dropped['participant']} {dropped['measure_group']}/"
                    f"{dropped['measure']} {dropped['rater']}: {dropped['reason']}".rstrip()
                )
            print(f"study data from {args.data}: {len(folder.data.participants)} participants")
        analysis, paths = run_study_analysis(data, out, alpha=args.alpha, seed=args.seed)
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
    if "steps_lost" in data.meta:
        print(f"note: model steps lost to infrastructure failures: {data.meta['steps_lost']}")
    return 0


def cmd_study_simulate(args: argparse.Namespace) -> int:
    """Run a simulated DocuTeam study; write logs, the study CSV, Table 2 and the figures.

    Exits 1 when a session failed (listed apart; its participant is left out).
    """
    from hasbench.docuteam.failures import FailedSessionError
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
    except (StudyDataError, FailedSessionError) as error:
        print(error, file=sys.stderr)
        return 1
    print(
        f"simulated participants: {len(study.data.participants)} personas x 2 conditions; "
        f"{len(study.data.frame)} rows in {study.csv} ({len(study.dropped)} values left out, "
        f"see {study.manifest})"
    )
    print(f"wrote {len(paths)} files to {figures}")
    for failed in study.failed:
        print(
            f"hasbench: failed session {failed['participant']} {failed['condition']} "
            f"({failed['log']}), its participant left out: {failed['reason']}",
            file=sys.stderr,
        )
    return 1 if study.failed else 0
