"""Convert MARBLE research records into Research tasks.

A MARBLE research record is a letter to a team of researchers with a paper's
Introduction, followed by the "five questions" template; its agents are first-person
researcher bios. The task becomes: write and submit a five-question proposal for a new
idea that builds on that Introduction (the Introduction, with its PDF line breaks joined,
is the task context); each bio becomes an agent profile; MARBLE's one-directional
``collaborate with`` triples become graph-mode ``collaborates`` edges. The team works in
the Research environment (the shipped literature corpus and the proposal document).

MARBLE has no humans and no hidden information, so an imported task has none either; its
pattern label is the one given to the import (provisional, recorded in the metadata).
Criteria: the proposal is submitted with five answering sections (an assertion), and a
rubric for the judge with one item per question plus MARBLE's own judged dimensions
(innovation, feasibility, safety).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from hasbench.build.marble import MarbleRecord, RecordSkipped, agents_of, clean_text, graph_edges

STEPS_PER_AGENT = 5
"""Episode steps per agent: MARBLE's runs use five iterations in which every agent acts."""
RUBRIC = (
    "The proposal states one specific research question that builds on the Introduction.",
    "The proposal explains why answering the question matters for the research community.",
    "The proposal explains why the problem is hard and why simple approaches fail.",
    "The proposal explains why prior work has not solved it and how the idea differs.",
    "The proposal outlines the method, the datasets and metrics, and the expected results.",
    "The research idea is innovative relative to the work described in the Introduction.",
    "The research idea is feasible with the methods and resources it names.",
    "The research idea raises no unaddressed safety or ethical concerns.",
)


def split_content(content: str) -> tuple[str, str | None]:
    """The Introduction of a research record's task text, and its research field if named.

    Raises:
        RecordSkipped: the text has no Introduction.
    """
    match = re.search(r"\*\*Introduction\*\*(.*?)(?:\*\*Your Task\*\*|\Z)", content, re.DOTALL)
    if match is None or not match.group(1).strip():
        raise RecordSkipped("task.content has no **Introduction** section")
    field = re.search(r"research field ([^.*\n]+?)\.\*\*", content)
    return clean_text(match.group(1)), field.group(1).strip() if field else None


def convert(record: MarbleRecord, pattern: str) -> tuple[dict[str, Any], list[str]]:
    """The task (raw scenario data) for one research record, and its warnings."""
    task = record.data["task"]
    if not isinstance(task, dict) or not isinstance(task.get("content"), str):
        raise RecordSkipped("task.content is missing")
    introduction, field = split_content(task["content"])
    agents = agents_of(record)
    warnings = []
    if len(agents) == 1:
        warnings.append("a single researcher: the task has no collaboration")
    text = (
        "Write and submit a research proposal for a new research idea that builds on the "
        "paper Introduction below. Discuss ideas that build on it or address its gaps, "
        "ground them in the literature service, and answer the five questions in the "
        "proposal's sections: what the problem is, why it is interesting and important, "
        "why it is hard, why it has not been solved before, and the key components of the "
        "approach with the expected results.\n\nIntroduction:\n\n" + introduction
    )
    return {
        "task_id": f"research_{pattern}_{record.task_id:03d}",
        "source_task_id": f"marble/research/{record.task_id}",
        "adaptation_pattern": pattern,
        "coordination_mode": "graph",
        "task": text,
        "relationships": graph_edges(record),
        "environment": {
            "max_iterations": STEPS_PER_AGENT * max(len(agents), 4),
            "initialization_data": {
                "agent_data": {
                    "proposal": {"title": f"MultiAgentBench research task {record.task_id}"}
                }
            },
        },
        "agents": [
            {
                "agent_id": spec["agent_id"],
                "type": spec.get("type") or "BaseAgent",
                "role": "researcher",
                "profile": clean_text(spec["profile"]),
            }
            for spec in agents
        ],
        "evaluation_criteria": {
            "env_assertions": [
                {"func_name": "assert_submitted", "message": "the proposal is submitted"}
            ],
            "nl_assertions": list(RUBRIC),
            "reward_basis": ["ENV_ASSERTION", "NL_ASSERTIONS"],
        },
        "metadata": {
            "source": "MultiAgentBench research",
            "marble_task_id": record.task_id,
            "research_field": field,
            "introduction_sha": hashlib.sha256(introduction.encode()).hexdigest()[:12],
            "pattern_provisional": True,
        },
    }, warnings
