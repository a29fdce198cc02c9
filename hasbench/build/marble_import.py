"""Import MultiAgentBench (MARBLE) coding tasks into the Coding domain.

A MARBLE coding file is JSON Lines, one task per line (format notes in
``shared/reference/marble_tasks.md``). Each record becomes one scenario:

- the three agents keep their ids and profiles; the profiles' MARBLE action names are
  mapped to this domain's tools (``create_code`` -> ``write_file``,
  ``give_advice_and_revise_code`` -> ``apply_patch``);
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

Problems name the file, the line and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hasbench.build.builder import dump_tasks
from hasbench.scenario import AGENT_RELATION, Scenario, check_scenario

START = "1. Implementation requirements:\n"
END = "\n\n2. Project structure:"
ACTIONS = {"create_code": "write_file", "give_advice_and_revise_code": "apply_patch"}
"""MARBLE action names in agent profiles -> this domain's tools."""
DEFAULT_MAX_ITERATIONS = 60
SCORING = "LLM judge against the task's requirements (MultiAgentBench ships no tests)"


class MarbleImportError(ValueError):
    """A MARBLE file that cannot be imported; the message names file, line and field."""


def read_marble(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) for every non-blank line of a MARBLE JSONL file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MarbleImportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MarbleImportError(f"{path}: line {number}: not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise MarbleImportError(f"{path}: line {number}: expected a JSON object")
        records.append((number, record))
    return records


def requirements(content: str) -> list[str]:
    """The bullets of the task's "Implementation requirements" section."""
    start, end = content.find(START), content.find(END)
    if start < 0 or end < start:
        return []
    block = content[start + len(START) : end]
    return [
        line.strip()[2:].strip() for line in block.splitlines() if line.strip().startswith("- ")
    ]


def convert_record(record: dict[str, Any], *, task_id: str, pattern: str, where: str) -> Scenario:
    """One MARBLE coding record as a scenario of the coding domain."""
    if record.get("scenario") != "coding":
        raise MarbleImportError(
            f"{where}: scenario: expected 'coding', got {record.get('scenario')!r}"
        )
    task = _field(record, "task", dict, where)
    content = _field(task, "content", str, f"{where}: task")
    bullets = requirements(content)
    if not bullets:
        raise MarbleImportError(
            f"{where}: task.content: no '1. Implementation requirements:' bullets found"
        )
    mode = record.get("coordinate_mode") or "graph"
    if mode not in AGENT_RELATION:
        raise MarbleImportError(f"{where}: coordinate_mode: unsupported value {mode!r}")
    agents = []
    for index, raw in enumerate(_field(record, "agents", list, where)):
        at = f"{where}: agents[{index}]"
        if not isinstance(raw, dict):
            raise MarbleImportError(f"{at}: expected an object")
        profile = _field(raw, "profile", str, at)
        for marble, ours in ACTIONS.items():
            profile = profile.replace(f'"{marble}"', f'"{ours}"')
        agents.append(
            {"agent_id": _field(raw, "agent_id", str, at), "type": "CodingAgent",
             "profile": profile.strip()}
        )  # fmt: skip
    if not agents:
        raise MarbleImportError(f"{where}: agents: no agents")
    relationships = []
    for index, triple in enumerate(_field(record, "relationships", list, where)):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise MarbleImportError(
                f"{where}: relationships[{index}]: expected [source, target, label]"
            )
        relationships.append([triple[0], triple[1], AGENT_RELATION[mode]])
    lead = agents[0]["agent_id"]
    relationships.append(["user_0", lead, "supervises"])
    output_format = str(task.get("output_format") or "").strip()
    raw_iterations = str((record.get("environment") or {}).get("max_iterations") or "")
    iterations = int(raw_iterations) if raw_iterations.isdigit() else DEFAULT_MAX_ITERATIONS
    raw = {
        "task_id": task_id,
        "source_task_id": f"marble-coding-{record.get('task_id')}",
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
            "marble_task_id": record.get("task_id"),
        },
    }
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise MarbleImportError(f"{where}: {field}: {first['msg']}") from None
    problems = check_scenario(scenario)
    if problems:
        raise MarbleImportError(f"{where}: {problems[0].path}: {problems[0].message}")
    return scenario


def import_marble(path: str | Path, pattern: str = "E") -> list[Scenario]:
    """Convert every record of a MARBLE coding JSONL file (task ids numbered in file order)."""
    scenarios = []
    for number, record in read_marble(path):
        where = f"{path}: line {number} (task {record.get('task_id')})"
        task_id = f"coding_{pattern}_{len(scenarios) + 1:03d}"
        scenarios.append(convert_record(record, task_id=task_id, pattern=pattern, where=where))
    if not scenarios:
        raise MarbleImportError(f"{path}: no tasks")
    return scenarios


def write_tasks(scenarios: list[Scenario], out: str | Path) -> Path:
    """Write imported scenarios as a task YAML file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_tasks(scenarios), encoding="utf-8")
    return out


def _field(record: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = record.get(key)
    if not isinstance(value, kind):
        expected = {dict: "an object", list: "a list", str: "a string"}[kind]
        raise MarbleImportError(f"{where}: {key}: expected {expected}, got {value!r:.40}")
    return value
