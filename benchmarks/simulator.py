"""Simulator throughput.

1. Scripted policies on one core: episodes per second for a 20-step episode
   (``scripted:oracle`` + ``scripted:user``; target >= 200).
2. Model-bound episodes: with a ``test/`` provider that sleeps 0.2 s per call, the share
   of the ideal call throughput (concurrent episodes / 0.2 s) achieved at 64 concurrent
   episodes (target >= 0.9).

Each figure is the best of a few repetitions, since the machine may be shared. ``test/``
models are answered in-process (see ``hasbench.llm``); for real models litellm adds its
own CPU cost per call, which is printed too (measured with litellm's offline mock
response), with the share it would allow at this concurrency.

Run: ``.venv/bin/python benchmarks/simulator.py [--episodes N] [--concurrency C]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from hasbench.agency import Setting
from hasbench.scenario import Scenario
from hasbench.simulator import Backends, Episode

DELAY = 0.2


def twenty_step_task() -> Scenario:
    """A mock task whose oracle run takes exactly 20 agent steps."""
    reads = [
        {"action_id": str(i), "requestor": "agent_0", "name": "get_record",
         "arguments": {"account_id": f"A10{i % 5}"}}
        for i in range(2, 18)
    ]  # fmt: skip
    actions = [
        {"action_id": "0", "requestor": "agent_0", "name": "find_record_by_email",
         "arguments": {"email": "ines.falk@example.org"}},
        *reads,
        {"action_id": "18", "requestor": "agent_0", "name": "update_note",
         "arguments": {"account_id": "A102", "note": "Contact by letter."}},
    ]  # fmt: skip
    return Scenario.model_validate(
        {
            "task_id": "mock_A_990",
            "adaptation_pattern": "A",
            "coordination_mode": "star",
            "task": "Look through accounts A100, A101, A102, A103 and A104; note the preference.",
            "relationships": [["user_0", "agent_0", "supervises"]],
            "environment": {"max_iterations": 30},
            "agents": [{"agent_id": "agent_0", "profile": "You manage accounts."}],
            "users": [
                {
                    "user_id": "user_0",
                    "goal": "My note says letter.",
                    "known_info": {"email": "ines.falk@example.org"},
                },
            ],  # fmt: skip
            "evaluation_criteria": {"actions": actions, "reward_basis": ["ACTION"]},
        }
    )


def scripted_rate(n: int) -> tuple[float, int]:
    """Episodes per second, and the steps of one episode."""
    scenario = twenty_step_task()
    setting = Setting(max_tool_rounds=30)

    async def many() -> int:
        steps = 0
        for seed in range(n):
            episode = Episode(scenario, setting, Backends(), seed)
            trace = await episode.run()
            steps = trace.termination.step
        return steps

    asyncio.run(many())  # warm-up (imports, caches)
    best = float("inf")
    for _ in range(3):  # best of three: the machine may be shared
        start = time.perf_counter()
        steps = asyncio.run(many())
        best = min(best, time.perf_counter() - start)
    return n / best, steps


def _respond(calls_per_episode: int):
    def respond(messages, tools):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn + 1 < calls_per_episode:
            return {"tool_calls": [{"name": "get_record", "arguments": {"account_id": "A100"}}]}
        return {"tool_calls": [{"name": "finish", "arguments": {"deliverable": "done"}}]}

    return respond


def model_share(concurrency: int, calls_per_episode: int, repeats: int = 3) -> tuple[float, int]:
    """Achieved / ideal call throughput when every call sleeps DELAY seconds.

    Args:
        concurrency: episodes run at once (the ideal is concurrency / DELAY calls/s).
        calls_per_episode: model calls each episode makes.
        repeats: waves run; the best one counts.
    """
    from hasbench.llm import LLMClient, register_test_provider

    respond = _respond(calls_per_episode)
    model = register_test_provider("bench-sleepy", respond, delay=DELAY)
    client = LLMClient(concurrency={"test": concurrency})
    scenario = twenty_step_task()
    backends = Backends(agent=model)

    async def one(seed: int) -> int:
        episode = Episode(scenario, Setting(), backends, seed, client)
        trace = await episode.run()
        return len(trace.of_type("model_call"))

    async def wave() -> int:
        return sum(await asyncio.gather(*(one(s) for s in range(concurrency))))

    asyncio.run(one(10_000))  # warm-up: imports and caches
    best = 0.0
    for _ in range(repeats):  # best of a few waves: the machine may be shared
        start = time.perf_counter()
        calls = asyncio.run(wave())
        best = max(best, calls / (time.perf_counter() - start))
    return best / (concurrency / DELAY), calls


def litellm_cpu_ms(n: int = 200) -> float:
    """CPU milliseconds litellm itself spends on one call (offline mock response)."""
    from hasbench.llm import load_litellm

    litellm = load_litellm()
    messages = [{"role": "user", "content": "x " * 2000}]

    async def calls() -> None:
        for i in range(n):
            await litellm.acompletion(
                model="openai/gpt-4o-mini",
                messages=[*messages, {"role": "user", "content": str(i)}],
                mock_response="ok",
            )

    asyncio.run(calls())
    start = time.process_time()
    asyncio.run(calls())
    return (time.process_time() - start) / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--calls", type=int, default=10, help="model calls per episode")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    rate, steps = scripted_rate(args.episodes)
    print(f"scripted episodes/s (one core, {steps}-step episode): {rate:.1f}  (target >= 200)")
    ideal = args.concurrency / DELAY
    share, calls = model_share(args.concurrency, args.calls)
    print(
        f"model-bound via test/ provider: {calls} calls, {args.concurrency} concurrent episodes, "
        f"ideal {ideal:.0f} calls/s: share {share:.3f}  (target >= 0.9)"
    )
    cpu = litellm_cpu_ms()
    print(
        f"litellm (real models): {cpu:.2f} CPU ms per call -> at most {1000 / cpu:.0f} calls/s "
        f"per core, a share bound of {min(1.0, 1000 / cpu / ideal):.2f} at this concurrency"
    )


if __name__ == "__main__":
    main()
