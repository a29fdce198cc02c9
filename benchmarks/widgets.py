"""How long the TraceViewer (with a linked GraphViewer) takes to render one move.

Builds a 500-turn trace of the mock_C_001 task (a message, a tool call with its result
and state diff, and every fourth turn a control request with its lifecycle and answer),
then moves the slider over every event and reports mean and max milliseconds per move and
the size of the HTML sent for the last one (the event log holds every event so far).

    .venv/bin/python benchmarks/widgets.py [--turns 500]
"""

from __future__ import annotations

import argparse
import statistics
import time

from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.trace import Termination, Trace, TraceHeader
from hasbench.widgets import GraphViewer, TraceViewer

TARGET_MS = 50.0


def long_trace(scenario: Scenario, steps: int) -> Trace:
    """A synthetic trace with ``steps`` turns over the scenario's participants."""
    kinds = {a.agent_id: "agent" for a in scenario.agents} | {
        u.user_id: "human" for u in scenario.users
    }
    trace = Trace(
        header=TraceHeader(
            scenario_id=scenario.task_id, scenario_hash=scenario.content_hash(),
            domain=scenario.domain, pattern=scenario.adaptation_pattern,
            setting={"agency": "A3", "channels": "full"}, backends={"agent": "benchmark"},
            seed=0, package_version="benchmark", participants=kinds,
        )
    )  # fmt: skip
    for step in range(1, steps + 1):
        call_id, request_id = f"call-{step:04d}", f"ctrl-{step:04d}"
        note = f"note number {step} " * 5
        trace.append(
            step=step,
            actor="agent_0",
            type="message",
            target="agent_2",
            payload={"text": f"Step {step}: please update the note. " * 3},
        )
        trace.append(
            step=step,
            actor="agent_2",
            type="tool_call",
            payload={
                "call_id": call_id,
                "name": "update_note",
                "side": "agent",
                "risk": "low",
                "arguments": {"account_id": f"A{100 + step % 7}", "note": note},
                "authorization": None,
            },
        )
        trace.append(
            step=step,
            actor="agent_2",
            type="tool_result",
            payload={
                "call_id": call_id,
                "name": "update_note",
                "output": "{}",
                "error": step % 9 == 0,
                "error_type": "invalid" if step % 9 == 0 else None,
                "diff": []
                if step % 9 == 0
                else [{"path": f"db.accounts.A{100 + step % 7}.note", "before": "", "after": note}],
            },
        )
        if step % 4 == 0:
            ctrl = {"channel": "control", "initiator": "agent"}
            trace.append(
                step=step,
                actor="agent_2",
                type="channel_request",
                **ctrl,
                payload={
                    "request_id": request_id,
                    "form": "approval",
                    "content": "May I refund?",
                    "action": {"name": "refund", "arguments": {"account_id": "A101"}},
                },
            )
            for status in ("validated", "pending", "dispatched"):
                trace.append(
                    step=step,
                    actor="agent_2",
                    type="channel_status",
                    target="user_1",
                    **ctrl,
                    payload={"request_id": request_id, "status": status, "reason": None},
                )
            trace.append(
                step=step,
                actor="user_1",
                type="channel_response",
                target="agent_2",
                **ctrl,
                payload={
                    "request_id": request_id,
                    "form": "approval",
                    "content": "Yes.",
                    "decision": "approve",
                },
            )
    trace.termination = Termination(reason="agent_done", step=steps)
    return trace  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    args = parser.parse_args()
    scenario = next(s for s in load_tasks(TASKS_DIR / "examples.yaml") if s.task_id == "mock_C_001")
    trace = long_trace(scenario, args.turns)
    started = time.perf_counter()
    viewer = TraceViewer(trace, outcome={"success": True}, metrics={"turns": args.turns})
    graph = GraphViewer(scenario)
    graph.link(viewer)
    build_ms = 1000 * (time.perf_counter() - started)
    timings = []
    for position in range(1, len(viewer.visible)):
        started = time.perf_counter()
        viewer.slider.value = position
        timings.append(1000 * (time.perf_counter() - started))
    mean, worst = statistics.mean(timings), max(timings)
    print(f"trace: {args.turns} turns, {len(trace.events)} events")
    print(f"build (viewer + graph drawing): {build_ms:.0f} ms")
    median = statistics.median(timings)
    print(
        f"render one move: mean {mean:.2f} ms, median {median:.2f} ms, max {worst:.2f} ms "
        f"over {len(timings)} moves (target < {TARGET_MS:.0f} ms)"
    )
    shown = sum(len(p.value) for p in (viewer.events_html, viewer.channels_html, viewer.diff_html))
    print(f"HTML of the last move: {shown / 1024:.0f} KiB")
    print("OK" if worst < TARGET_MS else "SLOWER THAN TARGET")


if __name__ == "__main__":
    main()
