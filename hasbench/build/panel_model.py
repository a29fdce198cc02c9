"""A language model on one of the build's panels: asked once, at temperature 0, cached.

The pattern panel (:mod:`hasbench.build.patterns`) and the review panels
(:mod:`hasbench.build.validation`) ask their model members the same way: the prompt as
one user message, temperature 0, responses from the shared response cache. A failed call
and an off-format answer are the member's recorded error, never a verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

T = TypeVar("T")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", flags=re.DOTALL)


def json_answer(text: str) -> Any:
    """A model's JSON answer, bare or inside a ```json fence.

    Raises:
        ValueError: the text is not JSON.
    """
    stripped = text.strip()
    fenced = _FENCE.fullmatch(stripped)
    try:
        return json.loads(fenced.group(1) if fenced else stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None


@dataclass(frozen=True)
class PanelAnswer(Generic[T]):
    """What a panel model answered.

    Attributes:
        parsed: the parsed answer (None on an error).
        raw: the model's text (None when the call failed).
        error: ``model: ...`` for a failed call, ``off-format: ...`` for an answer that
            does not parse; None otherwise.
    """

    parsed: T | None = None
    raw: str | None = None
    error: str | None = None


class PanelModel:
    """A panel member played by a language model."""

    def __init__(self, model: str, client: LLMClient | None = None) -> None:
        from hasbench.llm import LLMClient, ResponseCache

        self.name = model
        self.client = client if client is not None else LLMClient(cache=ResponseCache.default())

    async def ask(self, prompt: str, parse: Callable[[str], T]) -> PanelAnswer[T]:
        """The model's answer to ``prompt``, parsed; a failure is recorded as the error."""
        from hasbench.llm import ModelError

        try:
            response = await self.client.complete(
                self.name, [{"role": "user", "content": prompt}], temperature=0.0
            )
        except ModelError as error:
            return PanelAnswer(error=f"model: {error}")
        raw = response.content or ""
        try:
            return PanelAnswer(parsed=parse(raw), raw=raw)
        except ValueError as error:
            return PanelAnswer(raw=raw, error=f"off-format: {error}")
