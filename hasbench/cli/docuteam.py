"""``hasbench docuteam``: the DocuTeam engine's scripted demo session."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``docuteam`` and its action ``demo``."""
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


def cmd_docuteam_demo(args: argparse.Namespace) -> int:
    """Run the scripted user's DocuTeam session; write its log; print measures (exit 1: failed)."""
    import asyncio

    from hasbench.docuteam import ManualClock, Session, SessionConfig, session_measures
    from hasbench.docuteam.demo import DEMOS, DOCUTEAM_DATA, run_demo
    from hasbench.docuteam.steps import RoleModels

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
        backends=RoleModels.all(args.backend),
        clock=ManualClock(),
        log_path=args.out,
    )
    asyncio.run(run_demo(session, DEMOS[args.task]))
    if session.failure is not None:
        from hasbench.docuteam.failures import describe_failure

        print(
            f"hasbench: the DocuTeam session failed: {describe_failure(session.failure)}. "
            f"The session is an error, not a result; its log {args.out} is marked failed.",
            file=sys.stderr,
        )
        return 1
    measures = session_measures(session.log)
    print(json.dumps(measures, sort_keys=True))
    if measures["steps_lost"]:
        print(
            f"hasbench: {measures['steps_lost']} model step(s) lost to infrastructure "
            "failures (the log's error events say which); the measures are of the session "
            "without them",
            file=sys.stderr,
        )
    return 0
