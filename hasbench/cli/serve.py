"""``hasbench serve``: serve an episode, or a DocuTeam study, to people in their browsers.

``hasbench serve TASKS TASK_ID --people user_0,user_1`` starts the server
(:mod:`hasbench.serve`) on 127.0.0.1, prints a private link per person and one for the
researcher, runs the episode once everyone has opened their page, and keeps serving the
final pages until it is stopped (Ctrl-C). The trace is written event by event to
``--out``; a start lists the traces there that never ended.

``hasbench serve study STUDY.yaml`` serves a DocuTeam study (:mod:`hasbench.serve.study`):
a link per participant and rater and the researcher's, everything written to the study
folder (``--out``, default ``runs/study/<STUDY>``) as it happens; a restart with the same
folder keeps the links and goes on where everyone was.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any

from hasbench.cli.options import (
    add_endpoint_options,
    add_episode_options,
    apply_endpoints,
    endpoint_overrides,
    number,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` command."""
    p = sub.add_parser(
        "serve",
        help="serve an episode to several people, each on their own browser page; or, as "
        "'serve study STUDY.yaml', a DocuTeam study to its participants and raters",
    )
    p.add_argument("file", metavar="TASKS", help="a task YAML file (or 'study')")
    p.add_argument("task_id", metavar="TASK_ID", help="the task to run (or the STUDY.yaml)")
    p.add_argument(
        "--people", metavar="USER[=NAME],...",
        help="the humans played by people, e.g. user_0,user_1; '=P01' gives a person's "
        "pseudonym for the trace",
    )  # fmt: skip
    add_episode_options(p, "who plays the humans nobody plays (a model or scripted:user)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (127.0.0.1)")
    p.add_argument("--port", type=number(int, least=0), default=8765, help="port (0: any free)")
    p.add_argument(
        "--open-to-network", action="store_true",
        help="allow a --host other computers can reach (a warning says what it means)",
    )  # fmt: skip
    p.add_argument("--url", metavar="BASE", help="how people reach the server, for the links")
    p.add_argument(
        "--out", metavar="DIR",
        help="folder of the traces (runs/serve), or the study folder (runs/study/<STUDY>)",
    )  # fmt: skip
    p.add_argument(
        "--pace", type=number(float, least=0), default=1.0, metavar="S",
        help="seconds before each turn, so people can step in between turns",
    )  # fmt: skip
    p.add_argument(
        "--wait", type=number(float, above=0), default=600.0, metavar="S",
        help="seconds a request waits for its person before it is left unanswered",
    )  # fmt: skip
    p.add_argument(
        "--start", choices=["joined", "now"], default="joined",
        help="start when every person has opened their page (default), or at once",
    )  # fmt: skip
    add_endpoint_options(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the episode until stopped; exit 0 (also when stopped before the end)."""
    if args.file == "study":
        return _serve_study(args)
    if not args.people:
        raise ValueError("--people is required to serve an episode (e.g. --people user_0)")
    args.out = args.out or "runs/serve"
    from hasbench.agency import Setting
    from hasbench.llm import LLMClient, ResponseCache
    from hasbench.scenario import load_task
    from hasbench.serve.episode import ServedEpisode, parse_people
    from hasbench.simulator import Backends

    try:
        scenario = load_task(args.file, args.task_id)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    people = parse_people(args.people, scenario)
    setting = Setting(agency=args.agency, channels=args.channels, persona=args.persona)
    backends = apply_endpoints(
        Backends(agent=args.agent, user=args.user, judge=args.judge), endpoint_overrides(args)
    )
    models = (args.agent, args.user)
    needs_models = any(not m.startswith("scripted:") for m in models) or args.judge != "rule"

    async def serve() -> None:
        stopped = _stop_on_signals()
        client = LLMClient(cache=ResponseCache.default()) if needs_models else None
        app = ServedEpisode(
            scenario, people, setting, backends, args.seed, out=args.out, pace=args.pace,
            wait=args.wait, start=args.start, client=client,
        )  # fmt: skip
        server, address = await _start(app, args)
        _say(f"hasbench serve: {scenario.task_id} ({setting.label()}) on {address}")
        for line in app.earlier:
            _say(f"incomplete earlier episode: {line}")
        _links(app, server)
        _say(f"trace (written as the episode goes): {app.path}")
        running = asyncio.create_task(app.run())
        halted = asyncio.create_task(stopped.wait())
        await asyncio.wait({running, halted}, return_when=asyncio.FIRST_COMPLETED)
        if running.done():
            _say(_ending(running.result()))
            _say("Serving the final pages; press Ctrl-C to stop the server.")
            await halted
        else:
            running.cancel()
            _say(f"stopped before the episode ended; its trace so far: {app.path}")
        await server.stop()

    asyncio.run(serve())
    return 0


def _serve_study(args: argparse.Namespace) -> int:
    """Serve a DocuTeam study until stopped (Ctrl-C); exit 0, or 1 for a bad design file."""
    from hasbench.docuteam.study.design import StudyDesignError, load_design
    from hasbench.llm import LLMClient, ResponseCache
    from hasbench.serve.study import ServedStudy

    try:
        study = load_design(args.task_id)
    except StudyDesignError as error:
        print(error, file=sys.stderr)
        return 1
    out = args.out or f"runs/study/{study.path.stem}"

    async def serve() -> None:
        stopped = _stop_on_signals()
        models = study.design.role_models()
        client = LLMClient(cache=ResponseCache.default()) if models.uses_models() else None
        app = ServedStudy(study, out, client=client)
        server, address = await _start(app, args)
        _say(f"hasbench serve study: {study.design.title} on {address}")
        for name, order in app.interrupted:
            _say(f"session {order} of {name} was cut by the last stop: ended as interrupted")
        _links(app, server)
        _say(f"study folder (written as the study goes): {out}")
        _say(f"analyse it at any time: hasbench study analyze {out}")
        await stopped.wait()
        _say(f"stopped; everything done so far is in {out}")
        await server.stop()

    asyncio.run(serve())
    return 0


def _stop_on_signals() -> asyncio.Event:
    """An event set by Ctrl-C (SIGINT) or SIGTERM."""
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopped.set)
    return stopped


async def _start(app: Any, args: argparse.Namespace) -> tuple[Any, str]:
    """Serve ``app`` where the options say; return the server and its address."""
    from hasbench.serve.server import Server

    server = Server(
        app, args.host, args.port, open_to_network=args.open_to_network, base_url=args.url
    )
    if server.warning:
        print(server.warning, file=sys.stderr)
    return server, await server.start()


def _links(app: Any, server: Any) -> None:
    """Print every seat's private link."""
    _say("Send each person their own link (it opens in one browser only):")
    for seat in app.seats():
        _say(f"  {seat.label}: {server.link(seat.id)}")


def _say(text: str) -> None:
    print(text, flush=True)


def _ending(outcome: dict[str, Any]) -> str:
    """One line on how the served episode ended."""
    steps = ", ".join(f"{u} {n}" for u, n in outcome["person_steps"].items())
    if "error" in outcome:
        result = f"error: {outcome['error']}"
    else:
        score = outcome.get("task_score")
        result = f"success {'yes' if outcome.get('success') else 'no'}, Task Score " + (
            "–" if score is None else f"{score:.2f}"
        )
    return (
        f"episode ended: {outcome['termination']} in turn {outcome['turns']}; {result}; "
        f"people's steps: {steps}; trace {outcome['trace']}"
    )
