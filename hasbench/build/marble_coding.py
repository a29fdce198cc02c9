"""Convert MultiAgentBench (MARBLE) coding records into tasks of the Coding domain.

The converter of :mod:`hasbench.build.marble` for the ``coding`` scenario (format notes
in ``shared/reference/marble_tasks.md``). Each record becomes one scenario:

- the agents keep their ids and profiles; the profiles' MARBLE action names are mapped to
  this domain's tools (``create_code`` -> ``write_file``, ``give_advice_and_revise_code``
  -> ``apply_patch``);
- the relationships keep their direction, with the agent-agent label of the coordination
  mode (MARBLE's blank ``coordinate_mode`` means ``graph``, its converter's default);
- the task text is MARBLE's ``task.content`` followed by its ``output_format``; the
  workspace starts empty (the program is written from scratch into ``solution.py``);
- one human, the requester, supervises the first agent: the person the software is for,
  who answers questions about the requirements and reviews the result;
- MARBLE ships no tests, so the outcome is judged: each bullet of the task's
  "Implementation requirements" becomes an NL assertion about the final code, scored by
  the LLM judge (which reads the final diff of the workspace). The scenario's metadata
  says ``judge_scored: true``, and results tables carry that flag.
"""

from __future__ import annotations

from typing import Any

from hasbench.build.marble import MarbleRecord, RecordSkipped, agents_of
from hasbench.scenario import AGENT_RELATION

START = "1. Implementation requirements:\n"
END = "\n\n2. Project structure:"
ACTIONS = {"create_code": "write_file", "give_advice_and_revise_code": "apply_patch"}
"""MARBLE action names in agent profiles -> this domain's tools."""
DEFAULT_MAX_ITERATIONS = 60
SCORING = "LLM judge against the task's requirements (MultiAgentBench ships no tests)"


def requirements(content: str) -> list[str]:
    """The bullets of the task's "Implementation requirements" section."""
    start, end = content.find(START), content.find(END)
    if start < 0 or end < start:
        return []
    block = content[start + len(START) : end]
    return [
        line.strip()[2:].strip() for line in block.splitlines() if line.strip().startswith("- ")
    ]


def convert(record: MarbleRecord, pattern: str) -> tuple[dict[str, Any], list[str]]:
    """The task (raw scenario data) for one coding record; it has no warnings."""
    task = record.data["task"]
    if not isinstance(task, dict) or not isinstance(task.get("content"), str):
        raise RecordSkipped("task.content is missing")
    content = task["content"]
    bullets = requirements(content)
    if not bullets:
        raise RecordSkipped("task.content: no '1. Implementation requirements:' bullets found")
    mode = record.data.get("coordinate_mode") or "graph"
    if mode not in AGENT_RELATION:
        raise RecordSkipped(f"coordinate_mode: unsupported value {mode!r}")
    agents = []
    for spec in agents_of(record):
        profile = spec["profile"]
        for marble, ours in ACTIONS.items():
            profile = profile.replace(f'"{marble}"', f'"{ours}"')
        agents.append(
            {"agent_id": spec["agent_id"], "type": "CodingAgent", "profile": profile.strip()}
        )
    if not isinstance(record.data["relationships"], list):
        raise RecordSkipped("relationships: expected a list")
    relationships = []
    for index, triple in enumerate(record.data["relationships"]):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise RecordSkipped(f"relationships[{index}]: expected [source, target, label]")
        relationships.append([triple[0], triple[1], AGENT_RELATION[mode]])
    relationships.append(["user_0", agents[0]["agent_id"], "supervises"])
    output_format = str(task.get("output_format") or "").strip()
    raw_iterations = str((record.data.get("environment") or {}).get("max_iterations") or "")
    iterations = int(raw_iterations) if raw_iterations.isdigit() else DEFAULT_MAX_ITERATIONS
    return {
        "task_id": f"coding_{pattern}_{record.task_id:03d}",
        "source_task_id": f"marble/coding/{record.task_id}",
        "adaptation_pattern": pattern,
        "coordination_mode": mode,
        "task": content.strip() + (f"\n\n{output_format}" if output_format else ""),
        "relationships": relationships,
        "environment": {"max_iterations": max(iterations, DEFAULT_MAX_ITERATIONS)},
        "agents": agents,
        "users": [
            {
                "user_id": "user_0",
                "role": "requester",
                "goal": "A working program that meets every listed requirement.",
                "task_instructions": (
                    "You asked for this software. Answer questions about the listed "
                    "requirements and review the code you are shown against them."
                ),
            }
        ],
        "memory": {"type": "shared"},
        "evaluation_criteria": {
            "nl_assertions": [f"The final code implements this requirement: {b}" for b in bullets],
            "reward_basis": ["NL_ASSERTIONS"],
        },
        "metadata": {
            "judge_scored": True,
            "scoring": SCORING,
            "source": "MultiAgentBench coding",
            "marble_task_id": record.task_id,
        },
    }, []
