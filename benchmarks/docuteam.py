"""DocuTeam engine cost per discussion turn, offline.

Runs the scripted user's workshop session (``hasbench.docuteam.demo``) and reports, per
backend, the discussion turns (moderator rounds), the model calls made inside
discussions per turn (moderator, utterance, summary, bubble, memory, focus), the calls
the proactive trigger made per batch of edits, and wall-clock seconds per turn.

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

from hasbench.docuteam import ManualClock, Session, SessionConfig, SessionLog
from hasbench.docuteam.demo import DEMOS, DOCUTEAM_DATA, run_demo
from hasbench.docuteam.steps import Backends
from hasbench.llm import LLMClient


def one_session(backend: str, turn_budget: int) -> tuple[SessionLog, float]:
    """Run the workshop demo once; return its log and wall seconds."""
    session = Session.from_folder(
        DOCUTEAM_DATA / "workshop",
        config=SessionConfig(turn_budget=turn_budget),
        backends=Backends.all(backend),
        client=None if backend.startswith("scripted:") else LLMClient(cache=None),
        clock=ManualClock(),
    )
    start = time.perf_counter()
    asyncio.run(run_demo(session, DEMOS["workshop"]))
    return session.log, time.perf_counter() - start


def counts(log: SessionLog) -> dict[str, int]:
    """Discussion turns, model calls inside discussions and in the trigger, batches."""
    failed_rounds = [e for e in log.of_type("error") if e.payload["step"] == "moderator"]
    calls = log.of_type("model_call")
    return {
        "turns": len(log.of_type("moderator")) + len(failed_rounds),
        "discussion_calls": sum(1 for c in calls if c.discussion is not None),
        "trigger_calls": sum(1 for c in calls if c.discussion is None),
        "batches": len(log.of_type("trigger")),
        "tokens": sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in calls),
        "errors": len(log.of_type("error")),
    }


def report(backend: str, logs: list[SessionLog], seconds: float) -> None:
    total: dict[str, int] = {}
    for log in logs:
        for key, value in counts(log).items():
            total[key] = total.get(key, 0) + value
    turns = max(total["turns"], 1)
    calls = max(total["discussion_calls"] + total["trigger_calls"], 1)
    print(
        f"{backend}: {len(logs)} session(s), {total['turns']} discussion turns, "
        f"{total['discussion_calls'] / turns:.2f} model calls per turn, "
        f"{total['trigger_calls'] / max(total['batches'], 1):.2f} trigger calls per edit batch, "
        f"{seconds / turns * 1000:.3f} ms per turn, "
        f"{total['tokens'] / calls:.0f} tokens per call, {total['errors']} step errors"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help="scripted sessions per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    parser.add_argument("--local", action="store_true", help="also one session on SmolLM2")
    parser.add_argument("--turn-budget", type=int, default=2, help="rounds per run (local)")
    args = parser.parse_args()

    best, logs = float("inf"), []
    for _ in range(args.repeat):
        runs = [
            one_session("scripted:docuteam", SessionConfig().turn_budget)
            for _ in range(args.sessions)
        ]
        seconds = sum(s for _, s in runs)
        if seconds < best:
            best, logs = seconds, [log for log, _ in runs]
    report("scripted:docuteam", logs, best)

    if args.local:
        if importlib.util.find_spec("llama_cpp") is None:
            print("local/smollm2-135m: skipped (install the [local] extra)")
            return
        model = "local/smollm2-135m"
        warm_up = [{"role": "user", "content": "Hello"}]
        asyncio.run(LLMClient(cache=None).complete(model, warm_up))  # load it before timing
        log, seconds = one_session(model, args.turn_budget)
        report(model, [log], seconds)


if __name__ == "__main__":
    main()
