"""Blind ratings of a final plan: novelty, workability, relevance and specificity (1-5).

A rater sees the task sheet and the final plan (the rule rater also the starting plan),
never the condition or the session. Two kinds:

- ``rule``: a deterministic rubric over the final document, documented here; each score
  comes with the ideas, blocks and counts it was computed from. It rates what the plan
  states, not how long it is: every feature is a presence or a count of distinct things,
  never a count of words, and talk (:data:`~hasbench.docuteam.words.TALK_WORDS`, and the
  names of the team's agents) is not content. The same proposal pasted as a chat message
  and written as one concise plan line rates the same.

  * *changed blocks* are the blocks whose text is not the same as in the starting plan
    (new blocks included); *plan terms* are :func:`~hasbench.docuteam.words.plan_terms`
    (content words that are not talk words nor team names); a *new term* is a plan term
    found neither in the starting plan nor in the task sheet; a block's *proposal* is
    its text before its first reason connective
    (:func:`~hasbench.docuteam.words.proposal`), its *reason* the rest; an *item* is one
    of the :func:`~hasbench.docuteam.words.alternatives` a proposal offers.
  * **Novelty** (diversity and creativity of the ideas) counts *ideas*: items that bring
    a new term no earlier idea brought (a repeated idea counts once, however it is
    worded; a reason is rationale, not an idea): 1 for none, 2 for one, 3 for two or
    three, 4 for four or five, else 5.
  * **Relevance** (fidelity to the constraints and the wishes) counts the task sheet's
    requests (its bullets and its constraints sentence) that a changed block addresses —
    shares at least two plan terms with: 1 + round(4 x addressed / requests).
  * **Specificity** (concrete details, alternatives and rationale) counts details: the
    distinct numbers (times and amounts included) in changed blocks that the starting
    plan did not have, the distinct reasons changed blocks give
    (:func:`~hasbench.docuteam.words.gives_reason`; a reason given again counts once),
    and the distinct sets of options changed blocks offer (two items or more with plan
    terms): 1 below 1 detail, 2 below 3, 3 below 6, 4 below 10, else 5.
  * **Workability** (can it be run) counts the points the plan leaves open — blocks
    other than headings and to-dos that still say ``TBD``/``TODO`` or ask a question:
    5 minus that count, at least 1.

- any model string: the model is given the four dimensions (after the DocuTeam paper's
  App. B.1) and replies with a score and its evidence per dimension; an unusable reply
  (after one retry) or a failed call is a recorded missing rating, never a default.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from hasbench.docuteam import schemas as s
from hasbench.docuteam.document import Block, Document
from hasbench.docuteam.steps import ask_model, parse_reply
from hasbench.docuteam.words import (
    alternatives,
    content_stems,
    gives_reason,
    is_open_text,
    numbers,
    plan_terms,
    proposal,
)
from hasbench.llm import LLMClient
from hasbench.prompts import render

RULE = "rule"
DIMENSIONS: tuple[str, ...] = ("novelty", "workability", "relevance", "specificity")
NOVELTY_STEPS = (1, 2, 4, 6)
"""Ideas needed for scores 2, 3, 4 and 5."""
SPECIFICITY_STEPS = (1, 3, 6, 10)
"""Details needed for scores 2, 3, 4 and 5."""
SHARED_WORDS = 2


class PlanRating(BaseModel):
    """One rater's scores of one plan, with the evidence (missing scores say why)."""

    rater: str
    backend: str
    scores: dict[str, int | None]
    evidence: dict[str, Any] = Field(default_factory=dict)
    missing_reason: str | None = None
    calls: list[dict[str, Any]] = Field(default_factory=list)


def is_open(block: Block) -> bool:
    """True for a block other than a heading or to-do that says TBD/TODO or asks a question."""
    return block.type not in ("heading", "todo") and is_open_text(block.text)


def open_points(document: Document) -> list[Block]:
    """The open blocks of a document (:func:`is_open`)."""
    return [b for b in document.blocks if is_open(b)]


def task_requests(task: str) -> list[str]:
    """The requests of a task sheet: its ``-`` bullets and its constraints sentence."""
    requests = [line.strip()[2:] for line in task.splitlines() if line.strip().startswith("- ")]
    requests += [line.strip() for line in task.splitlines() if line.startswith("Constraints:")]
    return requests


def _level(count: int, steps: tuple[int, ...]) -> int:
    return 1 + sum(count >= step for step in steps)


def rule_rating(
    final: Document,
    initial: Document,
    task: str,
    rater: str = "R1",
    team: tuple[str, ...] = (),
) -> PlanRating:
    """The rule rubric of the module docstring.

    Args:
        final: The plan to rate.
        initial: The starting plan (what is new is measured against it).
        task: The task sheet.
        rater: The rater id.
        team: The names of the team's agents (the same in both conditions): a name is
            not an idea.
    """
    names = content_stems(" ".join(team))
    before = {b.id: b.text for b in initial.blocks}
    changed = [b for b in final.blocks if before.get(b.id) != b.text]
    known = content_stems(initial.text()) | content_stems(task)

    ideas, seen = [], set()
    for block in changed:
        for item in alternatives(proposal(block.text)):
            new = plan_terms(item, names) - known - seen
            if new:
                ideas.append({"block": block.id, "item": item, "new_terms": sorted(new)})
                seen |= new
    addressed = []
    for request in task_requests(task):
        wanted = plan_terms(request, names)
        hits = [(b.id, sorted(wanted & plan_terms(b.text, names))) for b in changed]
        best = max(hits, key=lambda hit: len(hit[1]), default=(None, []))
        addressed.append(
            {
                "request": request,
                "addressed": len(best[1]) >= SHARED_WORDS,
                "block": best[0],
                "shared": best[1],
            }
        )
    old_numbers = set(numbers(initial.text()))
    new_numbers = list(
        dict.fromkeys(n for b in changed for n in numbers(b.text) if n not in old_numbers)
    )
    reasons: dict[frozenset[str], str] = {}
    offers: dict[frozenset[str], str] = {}
    for b in changed:
        reason = frozenset(plan_terms(b.text[len(proposal(b.text)) :], names))
        if gives_reason(b.text) and reason:
            reasons.setdefault(reason, b.id)
        items = [frozenset(plan_terms(i, names)) for i in alternatives(proposal(b.text))]
        if sum(bool(i) for i in items) >= 2:
            offers.setdefault(frozenset(items), b.id)
    details = len(new_numbers) + len(reasons) + len(offers)
    still_open = open_points(final)

    n_addressed = sum(a["addressed"] for a in addressed)
    scores = {
        "novelty": _level(len(ideas), NOVELTY_STEPS),
        "workability": max(1, 5 - len(still_open)),
        "relevance": 1 + round(4 * n_addressed / len(addressed)) if addressed else 1,
        "specificity": _level(details, SPECIFICITY_STEPS),
    }
    evidence = {
        "changed_blocks": [b.id for b in changed],
        "novelty": {"ideas": ideas, "count": len(ideas)},
        "relevance": {"addressed": n_addressed, "requests": addressed},
        "specificity": {
            "new_numbers": new_numbers,
            "reasons": list(reasons.values()),
            "alternatives": list(offers.values()),
            "count": details,
        },
        "workability": {"open_points": [f"{b.id}: {b.text}" for b in still_open]},
    }
    return PlanRating(rater=rater, backend=RULE, scores=scores, evidence=evidence)


class DimensionScore(s.Strict):
    """A model's score of one dimension and what decided it."""

    score: int = Field(ge=1, le=5)
    evidence: str = Field(min_length=1, max_length=600)


class RatingOutput(s.Strict):
    """A model's rating of a plan."""

    novelty: DimensionScore
    workability: DimensionScore
    relevance: DimensionScore
    specificity: DimensionScore


async def model_rating(
    model: str, client: LLMClient, final: Document, task: str, rater: str
) -> PlanRating:
    """A model's rating of the final plan (missing scores and the reason when it fails)."""
    messages = [
        {"role": "system", "content": render("docuteam_sim/rate_plan_system")},
        {
            "role": "user",
            "content": render(
                "docuteam_sim/rate_plan_user", task=task, plan=final.to_markdown(ids=False)
            ),
        },
    ]
    calls: list[dict[str, Any]] = []
    failure: list[str] = []
    output = await ask_model(
        client,
        model,
        messages,
        "rating",
        RatingOutput,
        lambda content: parse_reply(RatingOutput, content, "rating"),
        on_call=lambda response, attempt: calls.append(
            {"model": response.model, "attempt": attempt, "cached": response.cached}
        ),
        on_error=lambda kind, message, attempt, raw, _: failure.append(
            f"{kind} after {attempt} attempt(s): {message}"
            + (f" (reply: {raw[:300]})" if raw else "")
        ),
    )
    if output is None:
        return PlanRating(
            rater=rater,
            backend=model,
            scores=dict.fromkeys(DIMENSIONS),
            missing_reason=failure[0],
            calls=calls,
        )
    return PlanRating(
        rater=rater,
        backend=model,
        scores={d: getattr(output, d).score for d in DIMENSIONS},
        evidence={d: getattr(output, d).evidence for d in DIMENSIONS},
        calls=calls,
    )


async def rate_plan(
    backend: str,
    final: Document,
    initial: Document,
    task: str,
    rater: str,
    client: LLMClient | None,
    team: tuple[str, ...] = (),
) -> PlanRating:
    """Rate a final plan with the rule rubric (``rule``) or a model.

    ``team`` names the team's agents, for the rule rubric (see :func:`rule_rating`).

    Raises:
        ValueError: a model rater without a client.
    """
    if backend == RULE:
        return rule_rating(final, initial, task, rater, team)
    if client is None:
        raise ValueError(f"the rater {backend!r} needs an LLMClient")
    return await model_rating(backend, client, final, task, rater)
