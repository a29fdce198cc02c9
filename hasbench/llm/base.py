"""What a model call returns and the errors it raises; shared by the client and providers."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hasbench.trace import Usage
from hasbench.vocab import canonical_json


class ToolCallRequest(BaseModel):
    """A tool call the model asked for; ``arguments`` is the raw JSON text it produced."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    arguments: str


class ModelResponse(BaseModel):
    """What one :meth:`LLMClient.complete` call returned.

    ``usage`` and ``cost`` are those of the call that produced the response; a cache hit
    (``cached=True``, ``attempts=0``) reports the original call's values.
    """

    model_config = ConfigDict(extra="forbid")

    model: str
    content: str | None = None
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    cached: bool = False
    attempts: int = 1


class ModelError(Exception):
    """A model call failed for good.

    Attributes:
        kind: One of rate_limit, timeout, server (transient, raised once retries are
            exhausted), auth, not_found, context_window, content_policy, bad_request,
            other.
        message: What happened, with secrets redacted.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(kind, message)  # both in args, so the error pickles across processes
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def call_id(model: str, messages: list[dict[str, Any]], index: int) -> str:
    """A deterministic tool-call id derived from the request."""
    digest = hashlib.sha256(canonical_json([model, messages, index]).encode("utf-8"))
    return "call_" + digest.hexdigest()[:16]
