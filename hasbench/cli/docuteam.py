"""``hasbench docuteam``: the DocuTeam engine's scripted demo session."""

from __future__ import annotations

import argparse
import json


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
