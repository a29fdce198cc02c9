"""What a model call returns, where it goes, and the errors it raises.

Shared by the client and the providers: :class:`ModelResponse` and
:class:`ToolCallRequest` (what came back), :class:`Endpoint` (where a backend's model is
served and how it is called) and :class:`ModelError` with its kinds.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


RETRYABLE_KINDS = frozenset({"rate_limit", "timeout", "server", "connection"})
"""Failures worth another attempt: retried with backoff, then raised."""
TRANSIENT_KINDS = RETRYABLE_KINDS | {"died"}
"""Failures that may clear by themselves (``died``: a local model's process died); a run
stops a backend after ``Endpoint.stop_after`` episodes in a row end in one."""
STOP_AFTER = 10
"""Episodes in a row ending in a transient failure after which a run stops their backend."""
PERMANENT_KINDS = frozenset({"auth", "not_found", "quota", "unreachable"})
"""Failures no later call to the same backend can avoid (a wrong or missing key, an unknown
model, an exhausted quota, an endpoint that never answered): a run stops the backend."""
FIXES: dict[str, str] = {
    "auth": (
        "put a valid key in the environment variable the backend reads (its api_key_env, "
        "or the provider's own, such as OPENAI_API_KEY)"
    ),
    "not_found": "check the model name and the endpoint's api_base",
    "quota": "the account behind the key has no quota left: add credit or use another key",
    "unreachable": "nothing answers at the endpoint: start the server or correct api_base",
}
"""What to fix, per permanent kind (the message a stopped backend prints)."""


class ModelError(Exception):
    """A model call failed for good.

    Every kind is a failure outside the participant's control (an infrastructure error):
    an episode that meets one is recorded as an error, never scored.

    Attributes:
        kind: Transient (raised once retries are exhausted): rate_limit, timeout, server,
            connection; died (a local model's process died: not retried, the next call
            starts a new one). Permanent for the backend: auth (wrong or missing key),
            not_found (unknown model or wrong api_base), quota, unreachable (an endpoint
            that never answered). Otherwise: context_window, content_policy, bad_request,
            budget (the run's call or cost budget is spent), other.
        message: What happened, with secrets redacted.
        retry_after: Seconds the server asked to wait before trying again, if it said.
    """

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        # every argument in args, so the error pickles across processes
        super().__init__(kind, message, retry_after)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    @property
    def permanent(self) -> bool:
        """Whether no later call to the same backend can succeed (see PERMANENT_KINDS)."""
        return self.kind in PERMANENT_KINDS


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED_PARAMS = frozenset(
    {
        "model", "messages", "tools", "tool_choice", "temperature", "seed", "response_format",
        "timeout", "max_retries", "num_retries", "api_base", "base_url", "api_key",
        "stream",
    }
)  # fmt: skip


class Endpoint(BaseModel):
    """Where one backend's model is served and how it is called.

    Attributes:
        api_base: The server's base URL (``http://127.0.0.1:8000/v1``); None: the
            provider's own.
        api_key_env: The environment variable holding the key. None: the provider's usual
            variable (``OPENAI_API_KEY``, ...) when ``api_base`` is None; with an
            ``api_base`` no key is sent unless named here, so a provider key never goes to
            another server.
        params: Extra litellm parameters (``max_tokens``, ``api_version``,
            ``extra_headers``, ...).
        timeout: Seconds one attempt may take (None: the client's).
        retries: Attempts after the first for transient failures (None: the client's).
        backoff: Seconds before the first retry, doubled each time, with jitter (None:
            the client's).
        stop_after: Episodes in a row ending in a transient failure (after their retries)
            after which a run stops this backend (None: :data:`STOP_AFTER`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_base: str | None = None
    api_key_env: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)
    retries: int | None = Field(default=None, ge=0)
    backoff: float | None = Field(default=None, ge=0)
    stop_after: int | None = Field(default=None, ge=1)

    @field_validator("api_base")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"must be an http:// or https:// URL, got {value!r}")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError(f"must be an environment variable name, got {value!r}")
        return value

    @field_validator("params")
    @classmethod
    def _params(cls, value: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(set(value) & _RESERVED_PARAMS)
        if "api_key" in reserved:
            raise ValueError("api_key: name the variable holding the key in api_key_env instead")
        if reserved:
            raise ValueError(f"set by hasbench itself, not through params: {reserved}")
        return value

    def identity(self, provider: str | None = None) -> dict[str, Any]:
        """What makes this endpoint answer differently (part of cache and episode keys).

        The server and the extra parameters; never the key nor the retry and stop policy. Without
        an ``api_base``, the server litellm takes from the environment for the model's
        ``provider`` (see :func:`environment_api_base`), when one is set.
        """
        found: dict[str, Any] = {}
        if self.api_base is not None:
            found["api_base"] = self.api_base.rstrip("/")
        elif provider is not None and (from_environment := environment_api_base(provider)):
            found["api_base_env"] = from_environment
        if self.params:
            found["params"] = self.params
        return found


def environment_api_base(provider: str) -> dict[str, str]:
    """The variables litellm may read a provider's server from when no api_base is given.

    ``<PROVIDER>_API_BASE`` and ``<PROVIDER>_BASE_URL`` (``OPENAI_API_BASE``,
    ``ANTHROPIC_BASE_URL``, ``OLLAMA_API_BASE``, ...) that are set: name -> URL.
    """
    names = [f"{provider.upper()}{suffix}" for suffix in ("_API_BASE", "_BASE_URL")]
    return {name: os.environ[name].rstrip("/") for name in names if os.environ.get(name)}


def call_id(model: str, messages: list[dict[str, Any]], index: int) -> str:
    """A deterministic tool-call id derived from the request."""
    digest = hashlib.sha256(canonical_json([model, messages, index]).encode("utf-8"))
    return "call_" + digest.hexdigest()[:16]


def tool_call_requests(
    model: str, messages: list[dict[str, Any]], calls: list[dict[str, Any]]
) -> list[ToolCallRequest]:
    """Tool calls answered here (``{"name", "arguments": dict | str}``), with ids from the request.

    Arguments given as a string are kept verbatim (malformed JSON included).
    """
    return [
        ToolCallRequest(
            id=call_id(model, messages, index),
            name=call["name"],
            arguments=call["arguments"]
            if isinstance(call["arguments"], str)
            else canonical_json(call["arguments"], ascii_only=False),
        )
        for index, call in enumerate(calls)
    ]
