"""The client: any litellm model string, with caching, retries, limits and typed errors."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hasbench.llm import doubles, local
from hasbench.llm.base import ModelError, ModelResponse, ToolCallRequest
from hasbench.llm.cache import ResponseCache, request_key
from hasbench.trace import Usage

if TYPE_CHECKING:
    from types import ModuleType

RETRYABLE_KINDS = frozenset({"rate_limit", "timeout", "server"})
DEFAULT_CONCURRENCY: dict[str, int] = {"local": 1, "test": 1024}
"""Concurrent calls allowed per provider; providers not listed get ``FALLBACK_CONCURRENCY``."""
FALLBACK_CONCURRENCY = 16


@dataclass
class ClientStats:
    """Counters of one client: requests answered by a model or the cache, and retries."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0


class LLMClient:
    """Calls models through litellm with caching, retries and per-provider limits.

    Args:
        cache: Where responses are cached; None disables caching.
        max_retries: Retries after the first attempt for transient errors.
        concurrency: Maximum concurrent calls per provider prefix (``openai``, ``local``,
            ``test``, ...), merged over ``DEFAULT_CONCURRENCY``.
        timeout: Seconds litellm waits for one attempt.
        backoff: Seconds before the first retry; doubled on each further retry.
        max_backoff: Upper bound of one backoff pause.
        sleep: The coroutine used to pause between attempts (tests inject a fake).
    """

    def __init__(
        self,
        cache: ResponseCache | None = None,
        max_retries: int = 4,
        concurrency: dict[str, int] | None = None,
        *,
        timeout: float = 120.0,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.cache = cache
        self.max_retries = max_retries
        self.concurrency = {**DEFAULT_CONCURRENCY, **(concurrency or {})}
        self.timeout = timeout
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self.stats = ClientStats()
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    async def complete(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        temperature: float = 0.0,
        response_format: dict[str, Any] | None = None,
        seed: int | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> ModelResponse:
        """Answer a chat request, from the cache when possible.

        Args:
            model: A litellm model string, ``test/<name>`` or ``local/<name>``.
            messages: OpenAI-style chat messages.
            tools: OpenAI-style tool definitions (``{"type": "function", ...}``).
            temperature: Sampling temperature.
            response_format: Passed to the provider (e.g. ``{"type": "json_object"}``).
            seed: Sampling seed, for providers that support one.
            tool_choice: With tools: "auto" (the provider's default), "required" (a tool
                call, never prose), "none", or ``{"type": "function", "function": {"name":
                ...}}`` for one given tool.

        Returns:
            The response with usage, cost, cache flag and number of attempts.

        Raises:
            ModelError: On a permanent error, or a transient one after all retries.
        """
        key = request_key(model, messages, tools, temperature, response_format, seed, tool_choice)
        if self.cache is not None:
            record = self.cache.get(key)
            if record is not None:
                self.stats.cache_hits += 1
                return ModelResponse.model_validate({**record, "cached": True, "attempts": 0})
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "timeout": self.timeout}
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        kwargs["temperature"] = temperature
        if response_format is not None:
            kwargs["response_format"] = response_format
        if seed is not None:
            kwargs["seed"] = seed
        provider = provider_of(model)
        if provider not in _CUSTOM_PROVIDERS:
            kwargs["max_retries"] = 0  # retries happen here, not inside the SDK
        async with self._semaphore(provider):
            response = await self._attempt(model, kwargs)
        self.stats.calls += 1
        if self.cache is not None:
            self.cache.put(key, model, response.model_dump(exclude={"cached", "attempts"}))
        return response

    def _semaphore(self, provider: str) -> asyncio.Semaphore:
        per_loop = self._semaphores.setdefault(asyncio.get_running_loop(), {})
        if provider not in per_loop:
            limit = self.concurrency.get(provider, FALLBACK_CONCURRENCY)
            per_loop[provider] = asyncio.Semaphore(limit)
        return per_loop[provider]

    async def _attempt(self, model: str, kwargs: dict[str, Any]) -> ModelResponse:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await _dispatch(model, kwargs)
            except Exception as exc:  # every provider failure is classified below
                kind = error_kind(exc)
                if kind not in RETRYABLE_KINDS or attempt > self.max_retries:
                    self.stats.errors += 1
                    detail = exc.message if isinstance(exc, ModelError) else str(exc)
                    message = f"{model}: {detail} (after {attempt} attempt(s))"
                    raise ModelError(kind, redact(message)) from None
                self.stats.retries += 1
                await self._sleep(min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))
                continue
            return response.model_copy(update={"attempts": attempt})


async def _dispatch(model: str, kwargs: dict[str, Any]) -> ModelResponse:
    """One attempt: ``test/`` models are answered in-process, everything else by litellm."""
    if provider_of(model) == "test":
        return await doubles.reply(model.split("/", 1)[1], kwargs)
    litellm = _litellm()
    from litellm._internal_context import is_internal_call

    # The trace is the log: marking the call internal skips litellm's own logging
    # callbacks, which otherwise cost more CPU than the rest of the call.
    quiet = is_internal_call.set(True)
    try:
        raw = await litellm.acompletion(**kwargs)
    finally:
        is_internal_call.reset(quiet)
    return _convert(model, raw, 1)


def _convert(model: str, raw: Any, attempts: int) -> ModelResponse:
    """Turn a litellm ModelResponse into ours."""
    if not getattr(raw, "choices", None):
        raise ModelError("other", f"{model}: the provider returned no choices")
    message = raw.choices[0].message
    tool_calls = [
        ToolCallRequest(
            id=call.id or f"call_{index}",
            name=call.function.name or "",
            arguments=call.function.arguments or "{}",
        )
        for index, call in enumerate(message.tool_calls or [])
    ]
    usage = getattr(raw, "usage", None)
    cost = (getattr(raw, "_hidden_params", None) or {}).get("response_cost")
    return ModelResponse(
        model=model,
        content=message.content,
        tool_calls=tool_calls,
        usage=Usage(
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
        ),
        cost=float(cost) if cost is not None else None,
        attempts=attempts,
    )


def provider_of(model: str) -> str:
    """The provider prefix of a model string (``openai/gpt-4o`` -> ``openai``).

    A bare model name is resolved by litellm (``gpt-4o-mini`` -> ``openai``); an unknown
    one is its own provider.
    """
    if "/" in model:
        return model.split("/", 1)[0]
    try:
        return _litellm().get_llm_provider(model)[1]
    except Exception:  # litellm raises several types for unknown models
        return model


def error_kind(exc: BaseException) -> str:
    """Classify a provider exception (ours or litellm's) into a :class:`ModelError` kind."""
    if isinstance(exc, ModelError):
        return exc.kind
    import litellm

    ordered: list[tuple[type[BaseException], str]] = [
        (litellm.ContextWindowExceededError, "context_window"),
        (litellm.ContentPolicyViolationError, "content_policy"),
        (litellm.RateLimitError, "rate_limit"),
        (litellm.Timeout, "timeout"),
        (litellm.AuthenticationError, "auth"),
        (litellm.PermissionDeniedError, "auth"),
        (litellm.NotFoundError, "not_found"),
        (litellm.BadRequestError, "bad_request"),
        (litellm.UnprocessableEntityError, "bad_request"),
        (litellm.InternalServerError, "server"),
        (litellm.ServiceUnavailableError, "server"),
        (litellm.BadGatewayError, "server"),
        (litellm.APIConnectionError, "server"),
    ]
    for cls, kind in ordered:
        if isinstance(exc, cls):
            return kind
    return "other"


_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def redact(text: str) -> str:
    """Replace the value of every secret-looking environment variable in ``text``."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "[redacted]")
    return text


_CUSTOM_PROVIDERS = ("test", "local")
"""Providers served in this process (no SDK retries to switch off)."""
_LITELLM_LOCK = threading.Lock()
_litellm_module: ModuleType | None = None


def _litellm() -> ModuleType:
    """Import litellm once, quietly, with the hasbench custom providers installed."""
    global _litellm_module
    if _litellm_module is not None:
        return _litellm_module
    with _LITELLM_LOCK:
        if _litellm_module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            # litellm warns on every new event loop (each asyncio.run); keep only errors.
            logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            handlers = local.make_handlers(litellm)
            installed = {entry["provider"] for entry in litellm.custom_provider_map}
            litellm.custom_provider_map = list(litellm.custom_provider_map) + [
                {"provider": name, "custom_handler": handler}
                for name, handler in handlers.items()
                if name not in installed
            ]
            _litellm_module = litellm
    return _litellm_module
