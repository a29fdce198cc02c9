"""Judges: what a judge answers and returns; the rule judge and the LLM rubric judge.

A judge answers three kinds of question and always returns :class:`JudgeResult` objects:

- ``nl_assertions(transcript, assertions)``: does each natural-language assertion about the
  agent's behaviour hold?
- ``rate(metric, excerpt)``: a process score in [0, 1] for one event, for ``metric`` in
  cqs, fur, crj, initiative. The score is the mean of the rubric's 0/1 criteria (see the
  ``hasbench/prompts/judge_<metric>.txt`` files).
- ``classify_a4_harm(transcript, outcomes)``: why an A4 episode failed on a task solved
  under A3 (the RQ2 failure analysis); the verdict is one of :data:`A4_HARM_CATEGORIES`.

Both judges read the judge log of :mod:`hasbench.transcript`: one JSON object per event,
the judged event marked ``"focus": true``. A judge that cannot give a verdict (the answer
is off-format, the rule does not apply) returns a missing value with the reason; it never
falls back to a default score. A judge model call that fails is an infrastructure error,
not a verdict: its :class:`~hasbench.llm.ModelError` is raised, and the runner records the
episode as an error.

The rule judge is :mod:`~hasbench.participants.judges.rule`, the LLM rubric judge
:mod:`~hasbench.participants.judges.llm`; each registers itself as a judge backend, and
:func:`hasbench.participants.backends.make_judge` builds the one a backend string names.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

METRICS = ("cqs", "fur", "crj", "initiative")
CRITERIA: dict[str, tuple[str, ...]] = {
    "cqs": ("precise", "necessary", "non_redundant"),
    "fur": ("actionable", "integrated"),
    "crj": ("warranted", "well_timed"),
    "initiative": ("self_initiated",),
}
"""The 0/1 criteria of each rubric; the score is their mean."""
A4_HARM_CATEGORIES = ("premature_intervention", "redundant_or_distracting", "other")
"""Why proactive human input (A4) broke a task solved under A3 (HAS paper §5.2.2)."""


class JudgeResult(BaseModel):
    """One verdict, or a missing value with the reason, plus the evidence behind it."""

    value: float | bool | str | None
    missing_reason: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    """excerpt, raw_output, parse_status, judge_model, prompt_hash (and criteria scores)."""


class Judge(Protocol):
    """What evaluation and metrics need from a judge."""

    model: str

    async def nl_assertions(self, transcript: str, assertions: list[str]) -> list[JudgeResult]:
        """Judge each assertion against the transcript."""
        ...

    async def rate(self, metric: str, excerpt: str) -> JudgeResult:
        """Score the focal event of an excerpt on one process metric."""
        ...

    async def classify_a4_harm(self, transcript: str, outcomes: str) -> JudgeResult:
        """Classify why an A4 episode failed on a task solved under A3."""
        ...
