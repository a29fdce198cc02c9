"""Write the golden corpus: traces, outcomes and model requests of a fixed set of episodes.

The corpus pins what the simulator records, what evaluation and metrics compute from it,
and what LLM-backed participants send to models, so that a refactoring can show it
changed none of them. Regenerate it only when a change of behaviour is intended, and say
so in the commit:

    .venv/bin/python tests/golden/regenerate.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from hasbench.agency import Setting  # noqa: E402
from hasbench.evaluate import evaluate  # noqa: E402
from hasbench.llm import LLMClient, register_test_provider  # noqa: E402
from hasbench.metrics import judge_process, trace_metrics  # noqa: E402
from hasbench.participants.backends import make_judge  # noqa: E402
from hasbench.paths import TASKS_DIR  # noqa: E402
from hasbench.scenario import Scenario, load_tasks  # noqa: E402
from hasbench.simulator import Backends, Episode  # noqa: E402

TRACES = HERE / "traces"
OUTCOMES = HERE / "outcomes"
REQUESTS = HERE / "requests"

SCRIPTED_SETTINGS = [
    Setting(agency="A1"),
    Setting(agency="A3"),
    Setting(agency="A4"),
    Setting(agency="A5"),
    Setting(agency="A3", channels="cont-only"),
]
SCRIPTED_AGENTS = ["scripted:oracle", "scripted:strong", "scripted:weak"]
SERVICE_TASKS = {
    "retail": ["retail_A_001", "retail_B_001", "retail_C_001", "retail_F_001"],
    "airline": ["airline_A_001", "airline_C_001", "airline_D_001", "airline_F_001"],
    "telecom": ["telecom_A_001", "telecom_B_001", "telecom_C_001"],
}


def tasks() -> dict[str, Scenario]:
    """Every task of the corpus by id."""
    found: dict[str, Scenario] = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}
    for domain, ids in SERVICE_TASKS.items():
        by_id = {t.task_id: t for t in load_tasks(TASKS_DIR / f"{domain}.yaml")}
        found.update({task_id: by_id[task_id] for task_id in ids})
    return found


def scripted_cases() -> list[tuple[str, str, Setting, Backends]]:
    """(name, task_id, setting, backends) of the scripted episodes."""
    cases = []
    for task_id in tasks():
        for setting in SCRIPTED_SETTINGS:
            for agent in SCRIPTED_AGENTS:
                if not task_id.startswith("mock") and agent == "scripted:weak":
                    continue
                name = f"{task_id}__{setting.agency}-{setting.channels}__{agent.split(':')[1]}"
                cases.append((name, task_id, setting, Backends(agent=agent)))
    return cases


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def golden_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict:
    """A model double that asks, asks for feedback and approval, messages, then finishes."""
    names = {t["function"]["name"] for t in tools or []}
    turn = sum(1 for m in messages if m["role"] == "assistant")
    plan = []
    if "ask_clarification" in names:
        plan.append(_call("ask_clarification", {"question": "What details do you have?"}))
    if "request_feedback" in names:
        plan.append(_call("request_feedback", {"artifact": "Plan: look up the account."}))
    writes = sorted(n for n in names if n.startswith(("update", "cancel", "modify", "refuel")))
    if "request_control" in names and writes:
        plan.append(
            _call("request_control", {"tool_name": writes[0], "arguments": {}, "mode": "approval"})
        )
    plan.append({"content": "Thinking aloud without a tool call."})
    plan.append(_call("finish", {"deliverable": "Done as far as I could."}))
    return plan[min(turn, len(plan) - 1)]


def golden_user(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict:
    """A user double: answers questions in prose, reviews and decides in JSON."""
    prompt = messages[-1]["content"].lower()
    if "decision" in prompt:
        return {"content": '{"decision": "approve", "comment": "Fine."}'}
    if "review" in prompt or "rating" in prompt:
        return {"content": '{"comment": "Looks fine.", "rating": 4}'}
    return {"content": "I can tell you what I know."}


LLM_CASES = [
    ("mock_A_001", Setting(agency="A3")),
    ("mock_A_001", Setting(agency="A1")),
    ("mock_C_001", Setting(agency="A4")),
    ("mock_D_001", Setting(agency="A5")),
    ("retail_C_001", Setting(agency="A3")),
    ("telecom_A_001", Setting(agency="A3", channels="cont-only")),
]


def _recorder(respond: Any, log: list[dict[str, Any]]) -> Any:
    def wrapped(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict:
        log.append({"messages": messages, "tools": tools})
        return respond(messages, tools)

    return wrapped


async def run_case(
    scenario: Scenario, setting: Setting, backends: Backends, client: LLMClient | None
) -> tuple[str, dict[str, Any]]:
    """The trace text and the evaluation of one episode."""
    trace = await Episode(scenario, setting, backends, 0, client).run()
    judge = make_judge("rule")
    outcome = await evaluate(scenario, trace, judge)
    result = {
        "outcome": outcome.model_dump(mode="json"),
        "metrics": trace_metrics(trace, scenario),
        "process": _without_excerpts(await judge_process(trace, judge)),
    }
    return trace.to_jsonl(), result


def _without_excerpts(process: dict[str, Any]) -> dict[str, Any]:
    """Judged metrics with the evidence excerpts left out (they are re-derived from traces)."""
    return {
        key: [{k: v for k, v in item.items() if k != "excerpt"} for item in value]
        if key.endswith("_evidence")
        else value
        for key, value in process.items()
    }


def dump(value: Any) -> str:
    """Stable, readable JSON (NaN allowed, as in results records)."""
    return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def llm_cases() -> list[tuple[str, str, Setting]]:
    """(name, task_id, setting) of the episodes played by model doubles."""
    return [
        (f"{task_id}__{setting.agency}-{setting.channels}__llm", task_id, setting)
        for task_id, setting in LLM_CASES
    ]


async def main() -> None:
    """Write every file of the corpus."""
    for folder in (TRACES, OUTCOMES, REQUESTS):
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
    scenarios = tasks()
    for name, task_id, setting, backends in scripted_cases():
        text, result = await run_case(scenarios[task_id], setting, backends, None)
        (TRACES / f"{name}.jsonl").write_text(text, encoding="utf-8")
        (OUTCOMES / f"{name}.json").write_text(dump(result), encoding="utf-8")
    for name, task_id, setting in llm_cases():
        log: list[dict[str, Any]] = []
        agent = register_test_provider("golden-agent", _recorder(golden_agent, log))
        user = register_test_provider("golden-user", _recorder(golden_user, log))
        backends = Backends(agent=agent, user=user)
        text, result = await run_case(scenarios[task_id], setting, backends, LLMClient())
        (TRACES / f"{name}.jsonl").write_text(text, encoding="utf-8")
        (OUTCOMES / f"{name}.json").write_text(dump(result), encoding="utf-8")
        (REQUESTS / f"{name}.json").write_text(dump(log), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
