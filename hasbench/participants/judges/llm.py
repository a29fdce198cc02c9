"""The LLM rubric judge: a model asked each question with the rubric prompts, at temperature 0.

The prompts are ``hasbench/prompts/judge_*.txt``; the answer is one JSON object. An answer
off that format is a missing value with the reason, never a default score; a failing
model call raises :class:`~hasbench.llm.ModelError` (an infrastructure error).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from hasbench.participants.backends import MODEL, judge_backend
from hasbench.participants.judges import A4_HARM_CATEGORIES, CRITERIA, METRICS, JudgeResult
from hasbench.prompts import prompt_hashes, render

if TYPE_CHECKING:
    from hasbench.llm import Endpoint, LLMClient


class LLMJudge:
    """A rubric judge on a language model, at temperature 0, keeping its evidence.

    Args:
        model: Any model string :mod:`hasbench.llm` accepts.
        client: The client to call it through (default: one with the workbench cache).
        endpoint: Where the model is served (default: its provider's own endpoint).
    """

    def __init__(
        self, model: str, client: LLMClient | None = None, endpoint: Endpoint | None = None
    ) -> None:
        from hasbench.llm import LLMClient, ResponseCache

        self.model = model
        self.client = client if client is not None else LLMClient(cache=ResponseCache.default())
        self.endpoint = endpoint

    async def nl_assertions(self, transcript: str, assertions: list[str]) -> list[JudgeResult]:
        """Ask the model about each assertion separately."""
        results = []
        for assertion in assertions:
            prompt = render("judge_nl_assertion", transcript=transcript, assertion=assertion)
            parsed, evidence = await self._ask(prompt, "judge_nl_assertion", assertion)
            if parsed is None:
                results.append(
                    JudgeResult(
                        value=None, missing_reason=evidence.pop("reason"), evidence=evidence
                    )
                )
            elif not isinstance(parsed.get("holds"), bool):
                results.append(_off_format(evidence, "'holds' is not true or false"))
            else:
                results.append(JudgeResult(value=parsed["holds"], evidence=evidence))
        return results

    async def rate(self, metric: str, excerpt: str) -> JudgeResult:
        """Score the focal event of an excerpt with the metric's rubric."""
        if metric not in METRICS:
            raise ValueError(f"unknown process metric {metric!r}; expected one of {METRICS}")
        name = f"judge_{metric}"
        parsed, evidence = await self._ask(render(name, excerpt=excerpt), name, excerpt)
        if parsed is None:
            return JudgeResult(value=None, missing_reason=evidence.pop("reason"), evidence=evidence)
        criteria = {name: parsed.get(name) for name in CRITERIA[metric]}
        bad = [name for name, v in criteria.items() if v not in (0, 1)]
        if bad:
            return _off_format(evidence, f"criteria not scored 0 or 1: {', '.join(bad)}")
        criteria = {name: int(v) for name, v in criteria.items()}
        value = sum(criteria.values()) / len(criteria)
        return JudgeResult(value=value, evidence={**evidence, "criteria": criteria})

    async def classify_a4_harm(self, transcript: str, outcomes: str) -> JudgeResult:
        """Ask the model why the A4 episode failed; keep its cited events and rationale."""
        prompt = render("judge_a4_harm", transcript=transcript, outcomes=outcomes)
        parsed, evidence = await self._ask(prompt, "judge_a4_harm", transcript)
        if parsed is None:
            return JudgeResult(value=None, missing_reason=evidence.pop("reason"), evidence=evidence)
        category = parsed.get("category")
        if category not in A4_HARM_CATEGORIES:
            return _off_format(
                evidence, f"category {category!r} is not one of {A4_HARM_CATEGORIES}"
            )
        cited = parsed.get("evidence_seq")
        seqs = [s for s in cited if isinstance(s, int)] if isinstance(cited, list) else []
        rationale = parsed.get("rationale")
        return JudgeResult(
            value=category,
            evidence={**evidence, "evidence_seq": seqs, "rationale": str(rationale or "")},
        )

    async def _ask(
        self, prompt: str, template: str, judged: str
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """Call the model; return the parsed JSON answer (or None) and the evidence.

        The evidence names the prompt template by its hash; when the answer is None it
        carries a ``reason`` entry.

        Raises:
            ModelError: the model call failed (an infrastructure error, never a verdict).
        """
        messages = [{"role": "user", "content": prompt}]
        response = await self.client.complete(
            self.model, messages, temperature=0.0, endpoint=self.endpoint
        )
        evidence: dict[str, Any] = {
            "excerpt": judged,
            "raw_output": response.content,
            "judge_model": self.model,
            "prompt_hash": prompt_hashes()[template],
        }
        parsed = _json_object(response.content or "")
        if parsed is None:
            reason = "judge answer off-format: not a JSON object"
            return None, {**evidence, "parse_status": "off_format", "reason": reason}
        return parsed, {**evidence, "parse_status": "ok"}


def _off_format(evidence: dict[str, Any], reason: str) -> JudgeResult:
    return JudgeResult(
        value=None,
        missing_reason=f"judge answer off-format: {reason}",
        evidence={**evidence, "parse_status": "off_format"},
    )


def _json_object(text: str) -> dict[str, Any] | None:
    """The one JSON object in a reply (bare or in a ``` fence), or None."""
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, flags=re.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


@judge_backend(MODEL, label="LLM rubric judge")
def llm_judge(model: str, client: LLMClient | None, endpoint: Endpoint | None) -> LLMJudge:
    """An LLM rubric judge on a model."""
    return LLMJudge(model, client, endpoint)
