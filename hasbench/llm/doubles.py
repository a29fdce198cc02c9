"""Test doubles: ``test/<name>`` models answered offline by a registered Python function."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from hasbench.llm.base import ModelError, ModelResponse, tool_call_requests
from hasbench.trace import Usage
from hasbench.vocab import canonical_json

Respond = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], dict[str, Any]]

_TEST_RESPONDERS: dict[str, tuple[Respond, float]] = {}


def register_test_provider(name: str, respond: Respond, delay: float = 0.0) -> str:
    """Serve the model ``test/<name>`` offline with a Python function.

    Args:
        name: The model name after ``test/``; registering it again replaces it.
        respond: Called as ``respond(messages, tools)``; returns ``{"content": str | None,
            "tool_calls": [{"name": str, "arguments": dict | str}]}`` (a str is passed on
            verbatim, so malformed JSON can be scripted). Raising :class:`ModelError`
            simulates a provider failure of that kind.
        delay: Seconds each call takes (an ``asyncio.sleep`` in async calls).

    Usage counts whitespace-separated words of the request and reply JSON as tokens.

    Returns:
        The model string ``test/<name>``.
    """
    if not name or "/" in name:
        raise ValueError(f"test provider name must be non-empty without '/': {name!r}")
    _TEST_RESPONDERS[name] = (respond, delay)
    return f"test/{name}"


def registered() -> list[str]:
    """The names registered with :func:`register_test_provider`, sorted."""
    return sorted(_TEST_RESPONDERS)


def _word_count(value: Any) -> int:
    """Whitespace-separated words of ``value`` as JSON: the test provider's token count."""
    return len(canonical_json(value).split()) if value is not None else 0


async def reply(name: str, kwargs: dict[str, Any]) -> ModelResponse:
    """Answer a ``test/<name>`` request with its registered respond function."""
    if name not in _TEST_RESPONDERS:
        raise ModelError("not_found", f"no test provider registered as test/{name}")
    respond, delay = _TEST_RESPONDERS[name]
    messages = kwargs["messages"]
    try:
        reply = respond(messages, kwargs.get("tools"))
    except ModelError:
        raise
    except Exception as exc:  # a bug in the script is permanent, never retried
        raise ModelError("bad_request", f"respond raised {type(exc).__name__}: {exc}") from None
    if not isinstance(reply, dict):
        raise ModelError("bad_request", f"respond returned {type(reply).__name__}")
    if delay:
        await asyncio.sleep(delay)
    model = f"test/{name}"
    calls = reply.get("tool_calls") or []
    return ModelResponse(
        model=model,
        content=reply.get("content"),
        tool_calls=tool_call_requests(model, messages, calls),
        usage=Usage(
            prompt_tokens=_word_count(messages),
            completion_tokens=_word_count(reply.get("content")) + _word_count(calls or None),
        ),
        cost=0.0,
        attempts=1,
    )
