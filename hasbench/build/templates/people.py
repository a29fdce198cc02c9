"""What the MultiAgentBench templates do alike: read the record, add people and their part.

Each template starts from its record converted as the importer converts it
(:func:`converted`). A template that moves part of a task to a person adds the person
(:func:`person`, with a persona of the domain drawn from the adaptation's generator), gives
them their part and has them offer it unprompted (:func:`holds`, :func:`offers`, used under
A4) and gives the oracle of the checks a gold step that depends on every hidden part
(:func:`gather`). A person who adds a requirement during the work (pattern F) is set up by
:func:`adds_requirement`. Registers no template.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hasbench.build.adaptation import AdaptContext, Declined
from hasbench.build.base_tasks import BaseTask
from hasbench.build.builder import PROACTIVE_TURN
from hasbench.build.marble import MarbleRecord, RecordSkipped
from hasbench.personas import domain_personas

Converter = Callable[[MarbleRecord, str], tuple[dict[str, Any], list[str]]]
"""A domain's importer of MultiAgentBench records (``convert`` of ``build.marble_<domain>``)."""


def converted(base: BaseTask, convert: Converter, pattern: str) -> dict[str, Any]:
    """The task's MultiAgentBench record as ``convert`` imports it under ``pattern``.

    Raises:
        Declined: the task has no record, or the importer skips it (the reason).
    """
    if base.record is None:
        raise Declined(f"{base.key}: no MultiAgentBench record")
    try:
        data, _ = convert(MarbleRecord(f"marble/{base.domain}", 0, base.record), pattern)
    except RecordSkipped as reason:
        raise Declined(f"{base.key}: {reason}") from None
    return data


def persona(domain: str, ctx: AdaptContext) -> str | None:
    """A persona of the domain drawn from the adaptation's generator (None if it has none)."""
    personas = [p.persona_id for p in domain_personas(domain)]
    return personas[int(ctx.rng.integers(len(personas)))] if personas else None


def person(domain: str, user_id: str, role: str, goal: str, instructions: str,
           known: dict[str, Any], responsibilities: list[str],
           ctx: AdaptContext) -> dict[str, Any]:  # fmt: skip
    """A human node with a persona of the domain."""
    return {
        "user_id": user_id,
        "role": role,
        "goal": goal,
        "task_instructions": instructions,
        "known_info": known,
        "responsibilities": responsibilities,
        "persona": persona(domain, ctx),
    }


def instruct(user: dict[str, Any], text: str) -> None:
    """Add a sentence to a person's behaviour instructions."""
    user["task_instructions"] = f"{user['task_instructions']} {text}".strip()


def holds(user: dict[str, Any], facts: dict[str, Any], responsibility: str, instructions: str,
          channel: str, lead_in: str) -> None:  # fmt: skip
    """``user`` holds ``facts`` (their whole known info) for ``responsibility``.

    ``instructions`` is added to their behaviour instructions; they offer each fact unprompted
    on ``channel``, after ``lead_in`` (:func:`offers`).
    """
    user["known_info"] = facts
    user["responsibilities"] = [responsibility]
    instruct(user, instructions)
    user["spontaneous_config"] = offers(user["user_id"], facts, channel, lead_in)


def adds_requirement(user: dict[str, Any], at_turn: int, goal: str, requirement: str,
                     message: str) -> None:  # fmt: skip
    """Pattern F: at turn ``at_turn`` ``user`` adds ``requirement`` and says so (``message``).

    Their goal becomes ``goal`` then; they hold the requirement as ``added_requirement``.
    """
    user["goal_revisions"] = [
        {"at_turn": at_turn, "goal": goal, "known_info": {"added_requirement": requirement}}
    ]
    user["responsibilities"] = ["say so as soon as your requirements change"]
    instruct(user, "Later in the work you will add a requirement; tell the team the next time "
                   "it asks.")  # fmt: skip
    user["spontaneous_config"] = {
        "mode": "predefined",
        "trigger_rules": [{
            "rule_id": "added_requirement", "action_type": "clarification",
            "condition": {"type": "at_turn", "turn_number": at_turn},
            "predefined_message": message,
        }],
    }  # fmt: skip


def offers(owner: str, facts: dict[str, Any], channel: str, lead_in: str) -> dict[str, Any]:
    """Unprompted contributions of ``owner``: one fact per turn from the proactive turn on."""
    return {
        "mode": "predefined",
        "trigger_rules": [
            {
                "rule_id": f"{owner}_offers_{key}",
                "condition": {"type": "at_turn", "turn_number": PROACTIVE_TURN + i},
                "action_type": channel,
                "predefined_message": f"{lead_in} {value}",
            }
            for i, (key, value) in enumerate(facts.items())
        ],
    }


def gather(data: dict[str, Any], read: tuple[str, dict[str, Any]], depends: list[str],
           by: str | None = None) -> None:  # fmt: skip
    """The oracle's plan: one read by ``by`` (default the first agent) that needs every part.

    For judge-scored tasks the step is not scored; the checks follow it.
    """
    name, arguments = read
    data["evaluation_criteria"]["actions"] = [
        {
            "action_id": "1",
            "requestor": by or data["agents"][0]["agent_id"],
            "name": name,
            "arguments": arguments,
            "depends_on": depends,
            "info": "the team has what the people hold before it works",
        }
    ]
