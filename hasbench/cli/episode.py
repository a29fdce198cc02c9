"""``hasbench episode``: run one task's episode, evaluate it, print a summary of its trace.

:func:`episode_command` runs and evaluates one episode and returns :func:`summarize`'s
counts of its trace. An episode whose model calls fail (an infrastructure error) is not
evaluated: its summary carries the error. The simulator, evaluation and metrics are imported
when a command runs, so that ``hasbench --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from hasbench.cli.options import (
    add_endpoint_options,
    add_episode_options,
    apply_endpoints,
    endpoint_overrides,
)

if TYPE_CHECKING:
    from hasbench.llm import Endpoint
    from hasbench.trace import Trace


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``episode`` command."""
    p = sub.add_parser("episode", help="run one episode of a task and print a JSON summary")
    p.add_argument("file", metavar="FILE", help="a task YAML file")
    p.add_argument("task_id", metavar="TASK_ID", help="the task to run")
    add_episode_options(
        p, "user model, scripted:user, or human:terminal to play the humans yourself "
        "(human:terminal?play=user_1 plays only user_1)",
    )  # fmt: skip
    p.add_argument("--out", metavar="TRACE.jsonl", help="where to write the trace")
    add_endpoint_options(p)
    p.set_defaults(func=cmd_episode)


def cmd_episode(args: argparse.Namespace) -> int:
    """Run one episode, write its trace, print one JSON summary (see :func:`summarize`).

    Exits 1 when a model call failed (the summary's ``error``; the reason on stderr).
    """
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


def summarize(trace: Trace) -> dict[str, Any]:
    """Counts of one episode: termination, turns, steps, human steps, channel events, model use.

    When a real person played a human, ``person_steps`` counts that person's steps. Steps and
    tool calls are the team's, as in the results table; a counterparty's steps (the other
    side's agent) are counted apart.
    """
    from hasbench.metrics import human_steps, person_steps, steps, team_steps

    channels: dict[str, dict[str, int]] = {}
    for event in trace.events:
        if event.channel is None:
            continue
        counts = channels.setdefault(event.channel, {})
        if event.type == "channel_request":
            key = f"{event.initiator}_requests"
        elif event.type == "channel_response":
            key = "answered"
        else:
            key = event.payload.status
        counts[key] = counts.get(key, 0) + 1
    calls = trace.of_type("model_call")
    termination = trace.termination
    played = {"person_steps": len(person_steps(trace))} if trace.header.people else {}
    team = team_steps(trace)
    other = len(steps(trace)) - len(team)
    played.update({"counterparty_steps": other} if trace.header.counterparties else {})
    return {
        **played,
        "task_id": trace.header.scenario_id,
        "setting": f"{trace.header.setting['agency']}/{trace.header.setting['channels']}",
        "termination": termination.reason if termination else None,
        "turns": termination.step
        if termination
        else max((e.step for e in trace.events), default=0),
        "steps": len(team),
        "human_steps": len(human_steps(trace)),
        "tool_calls": sum(e.type == "tool_call" for e in team),
        "errors": len(trace.of_type("error")),
        "channel_events": {ch: dict(sorted(c.items())) for ch, c in sorted(channels.items())},
        "model_calls": len(calls),
        "cache_hits": sum(1 for e in calls if e.payload.cached),
        "prompt_tokens": sum(e.usage.prompt_tokens for e in calls if e.usage),
        "completion_tokens": sum(e.usage.completion_tokens for e in calls if e.usage),
    }


def episode_command(
    file: str,
    task_id: str,
    *,
    agent: str = "scripted:oracle",
    user: str = "scripted:user",
    judge: str = "rule",
    agency: str = "A3",
    channels: str = "full",
    persona: str | None = None,
    seed: int = 0,
    out: str | None = None,
    endpoints: dict[str, Endpoint] | None = None,
) -> dict[str, Any]:
    """Run one episode of a task file's task, evaluate it, optionally write the trace.

    Returns the :func:`summarize` counts plus ``success`` and ``task_score`` from
    :func:`hasbench.evaluate.evaluate`; or, when a model call failed (for any role),
    ``error`` (kind, role, model, message) and no scores. ``endpoints`` maps a role to
    where its model is served (see :class:`hasbench.llm.Endpoint`).

    Raises:
        ValueError: the task id is not in the file (message names both), or a backend
            string that cannot play its role (named before anything runs).
    """
    import asyncio

    from hasbench.agency import Setting
    from hasbench.evaluate import evaluate
    from hasbench.llm import LLMClient, ModelError, ResponseCache
    from hasbench.participants.backends import backend_problems, make_judge
    from hasbench.scenario import load_tasks
    from hasbench.simulator import Backends, Episode

    problems = backend_problems({"agent": agent, "user": user, "judge": judge})
    if problems:
        raise ValueError("; ".join(f"--{role}: {text}" for role, text in problems.items()))

    tasks = {t.task_id: t for t in load_tasks(file)}
    if task_id not in tasks:
        raise ValueError(f"{file}: no task {task_id!r} (tasks: {', '.join(sorted(tasks))})")
    scenario = tasks[task_id]
    setting = Setting(agency=agency, channels=channels, persona=persona)
    backends = Backends(agent=agent, user=user, judge=judge, endpoints=endpoints or {})
    needs_models = any(not m.startswith("scripted:") for m in (agent, user)) or judge != "rule"

    async def go() -> dict[str, Any]:
        client = LLMClient(cache=ResponseCache.default()) if needs_models else None
        episode = Episode(scenario, setting, backends, seed, client)
        trace = await episode.run()
        if out is not None:
            trace.write(out)
        summary = summarize(trace)
        failure = trace.of_type("model_error")
        if failure:
            summary["error"] = failure[-1].payload.model_dump(mode="json")
        else:
            try:
                outcome = await evaluate(
                    scenario, trace, make_judge(judge, client, backends.endpoint("judge"))
                )
                summary.update(success=outcome.success, task_score=outcome.task_score)
            except ModelError as exc:
                summary["error"] = {
                    "kind": exc.kind, "role": "judge", "model": judge, "message": exc.message,
                }  # fmt: skip
        if client is not None:
            summary["client_calls"] = client.stats.calls
        return summary

    return asyncio.run(go())
