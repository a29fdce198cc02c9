"""Blind ratings of a final plan: novelty, workability, relevance and specificity (1-5).

A rater sees the task sheet and the final plan (the rule rater also the starting plan),
never the condition or the session. Two kinds:

- ``rule``: a deterministic rubric over the final document, documented here; each score
  comes with the words, blocks and counts it was computed from.

  * *changed blocks* are the blocks whose text is not the same as in the starting plan
    (new blocks included); *content words* are :func:`~hasbench.docuteam.scripted.content_stems`.
  * **Novelty** counts the content words of the changed blocks that appear neither in the
    starting plan nor in the task sheet (ideas beyond the brief): 1 below 3 words, 2
    below 8, 3 below 15, 4 below 25, else 5.
  * **Relevance** counts the task sheet's requests (its bullets and its constraints
    sentence) that a changed block addresses — shares at least two content words with:
    1 + round(4 x addressed / requests).
  * **Specificity** counts concrete details written into the plan: numbers in changed
    blocks that the starting plan did not have, plus changed blocks of at least eight
    words: 1 below 1 detail, 2 below 3, 3 below 6, 4 below 10, else 5.
  * **Workability** counts the points the plan leaves open — blocks other than headings
    and to-dos that still say ``TBD``/``TODO`` or ask a question: 5 minus that count,
    at least 1.

- any model string: the model is given the four dimensions (after the DocuTeam paper's
  App. B.1) and replies with a score and its evidence per dimension; an unusable reply
  (after one retry) or a failed call is a recorded missing rating, never a default.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from hasbench.docuteam import schemas as s
from hasbench.docuteam.document import Block, Document
from hasbench.docuteam.scripted import OPEN_MARKERS, content_stems
from hasbench.docuteam.steps import ask_model, parse_reply
from hasbench.llm import LLMClient
from hasbench.prompts import render

RULE = "rule"
DIMENSIONS: tuple[str, ...] = ("novelty", "workability", "relevance", "specificity")
NOVELTY_STEPS = (3, 8, 15, 25)
SPECIFICITY_STEPS = (1, 3, 6, 10)
LONG_BLOCK_WORDS = 8
SHARED_WORDS = 2
_NUMBER = re.compile(r"\d[\d,.:]*")


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
    return block.type not in ("heading", "todo") and any(
        marker in block.text.lower() for marker in OPEN_MARKERS
    )


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


def rule_rating(final: Document, initial: Document, task: str, rater: str = "R1") -> PlanRating:
    """The rule rubric of the module docstring."""
    before = {b.id: b.text for b in initial.blocks}
    changed = [b for b in final.blocks if before.get(b.id) != b.text]
    changed_text = " ".join(b.text for b in changed)

    new_words = sorted(
        content_stems(changed_text) - content_stems(initial.text()) - content_stems(task)
    )
    addressed = []
    for request in task_requests(task):
        wanted = content_stems(request)
        hits = [(b.id, sorted(wanted & content_stems(b.text))) for b in changed]
        best = max(hits, key=lambda hit: len(hit[1]), default=(None, []))
        addressed.append(
            {
                "request": request,
                "addressed": len(best[1]) >= SHARED_WORDS,
                "block": best[0],
                "shared": best[1],
            }
        )
    old_numbers = set(_NUMBER.findall(initial.text()))
    numbers = [n for b in changed for n in _NUMBER.findall(b.text) if n not in old_numbers]
    long_blocks = [b.id for b in changed if len(b.text.split()) >= LONG_BLOCK_WORDS]
    still_open = open_points(final)

    n_addressed = sum(a["addressed"] for a in addressed)
    scores = {
        "novelty": _level(len(new_words), NOVELTY_STEPS),
        "workability": max(1, 5 - len(still_open)),
        "relevance": 1 + round(4 * n_addressed / len(addressed)) if addressed else 1,
        "specificity": _level(len(numbers) + len(long_blocks), SPECIFICITY_STEPS),
    }
    evidence = {
        "changed_blocks": [b.id for b in changed],
        "novelty": {"new_words": new_words, "count": len(new_words)},
        "relevance": {"addressed": n_addressed, "requests": addressed},
        "specificity": {"new_numbers": numbers, "long_blocks": long_blocks},
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
) -> PlanRating:
    """Rate a final plan with the rule rubric (``rule``) or a model.

    Raises:
        ValueError: a model rater without a client.
    """
    if backend == RULE:
        return rule_rating(final, initial, task, rater)
    if client is None:
        raise ValueError(f"the rater {backend!r} needs an LLMClient")
    return await model_rating(backend, client, final, task, rater)
