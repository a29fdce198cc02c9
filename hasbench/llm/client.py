"""The client: any litellm model string, with caching, retries, limits and typed errors."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hasbench.llm import doubles, llama, local
from hasbench.llm.base import RETRYABLE_KINDS, Endpoint, ModelError, ModelResponse, ToolCallRequest
from hasbench.llm.cache import ResponseCache, request_key
from hasbench.trace import Usage

if TYPE_CHECKING:
    from types import ModuleType

DEFAULT_CONCURRENCY: dict[str, int] = {"local": 1, "test": 1024}
"""Concurrent calls allowed per provider; providers not listed get ``FALLBACK_CONCURRENCY``."""
FALLBACK_CONCURRENCY = 16
NO_KEY = "no-key"
"""The key sent to an ``api_base`` whose endpoint names no ``api_key_env`` (OpenAI-style
clients insist on some key; servers that check one answer 401, a clear auth error)."""
_NO_ENDPOINT = Endpoint()


@dataclass
class ClientStats:
    """Counters of one client: requests answered by a model or the cache, retries, spending."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    cost: float = 0.0
    """Dollars of the calls made (cache hits cost nothing); calls of unknown price add 0."""


@dataclass
class CallBudget:
    """A limit on the model calls of a run and on what they cost (cache hits are free).

    A call is counted when it starts, so calls in flight never exceed ``max_calls``; cost
    is known only when a call returns, so calls already in flight may pass ``max_cost``.

    Attributes:
        max_calls: Most model calls (None: no limit).
        max_cost: Most dollars (None: no limit).
        calls: Calls started so far.
        cost: Dollars spent so far.
    """

    max_calls: int | None = None
    max_cost: float | None = None
    calls: int = 0
    cost: float = 0.0

    def exhausted(self) -> str | None:
        """Why no further call may start, or None while the budget lasts."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            return f"the run's budget of {self.max_calls} model calls is spent"
        if self.max_cost is not None and self.cost >= self.max_cost:
            return f"the run's budget of ${self.max_cost:g} is spent (${self.cost:.4f})"
        return None


@dataclass(frozen=True)
class _Policy:
    timeout: float
    retries: int
    backoff: float


class LLMClient:
    """Calls models through litellm with caching, retries and per-provider limits.

    Each call may name an :class:`~hasbench.llm.base.Endpoint` (server, key variable,
    extra parameters, and its own timeout, retries and backoff); what it leaves unset
    comes from the client.

    Transient failures (rate limits, time-outs, server and connection errors) are retried:
    after the time the server asked for (``Retry-After``), else after an exponential
    backoff with jitter (``backoff * 2**(n-1)``, at most ``max_backoff``, times a factor
    drawn from [0.5, 1)). A server that asks for more than ``max_backoff`` seconds gets no
    retry: the error is raised at once.

    Args:
        cache: Where responses are cached; None disables caching.
        max_retries: Retries after the first attempt for transient errors.
        concurrency: Maximum concurrent calls per provider prefix (``openai``, ``local``,
            ``test``, ...), merged over ``DEFAULT_CONCURRENCY``.
        timeout: Seconds litellm waits for one attempt.
        backoff: Seconds before the first retry; doubled on each further retry.
        max_backoff: Upper bound of one pause, and of a server's ``Retry-After`` honoured.
        sleep: The coroutine used to pause between attempts (tests inject a fake).
        rng: Draws the jitter (seed it for reproducible pauses; default: unseeded).
        budget: A limit on calls and cost shared by every call of this client.

    Raises:
        ValueError: a concurrency limit below 1.
    """

    def __init__(
        self,
        cache: ResponseCache | None = None,
        max_retries: int = 4,
        concurrency: dict[str, int] | None = None,
        *,
        timeout: float = 120.0,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: np.random.Generator | None = None,
        budget: CallBudget | None = None,
    ) -> None:
        low = {name: limit for name, limit in (concurrency or {}).items() if limit < 1}
        if low:
            raise ValueError(f"concurrency: every limit must be at least 1, got {low}")
        self.cache = cache
        self.max_retries = max_retries
        self.concurrency = {**DEFAULT_CONCURRENCY, **(concurrency or {})}
        self.timeout = timeout
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.budget = budget
        self._sleep = sleep
        self._rng = rng if rng is not None else np.random.default_rng()
        self.stats = ClientStats()
        self._reached: set[tuple[str, str | None]] = set()
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
        endpoint: Endpoint | None = None,
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
            endpoint: Where the model is served and how to call it (default: the
                provider's own endpoint with the client's policy).

        Returns:
            The response with usage, cost, cache flag and number of attempts.

        Raises:
            ModelError: On a permanent error, a transient one after all retries, or when
                the budget is spent.
        """
        endpoint = endpoint or _NO_ENDPOINT
        key = request_key(
            model, messages, tools, temperature, response_format, seed, tool_choice,
            endpoint_identity(endpoint, model),
        )  # fmt: skip
        if self.cache is not None:
            record = self.cache.get(key)
            if record is not None:
                self.stats.cache_hits += 1
                return ModelResponse.model_validate({**record, "cached": True, "attempts": 0})
        api_key = _api_key(model, endpoint)
        policy = _Policy(
            timeout=endpoint.timeout if endpoint.timeout is not None else self.timeout,
            retries=endpoint.retries if endpoint.retries is not None else self.max_retries,
            backoff=endpoint.backoff if endpoint.backoff is not None else self.backoff,
        )
        kwargs: dict[str, Any] = {
            **endpoint.params,
            "model": model,
            "messages": messages,
            "timeout": policy.timeout,
        }
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
            if endpoint.api_base is not None:
                kwargs["api_base"] = endpoint.api_base
            if api_key is not None:
                kwargs["api_key"] = api_key
            elif endpoint.api_base is not None:
                kwargs["api_key"] = NO_KEY
        async with self._semaphore(provider):
            self._charge(model)
            response = await self._attempt(
                model, kwargs, policy, (model, endpoint.api_base), [api_key or ""]
            )
        self.stats.calls += 1
        self.stats.cost += response.cost or 0.0
        if self.budget is not None:
            self.budget.cost += response.cost or 0.0
        if self.cache is not None:
            self.cache.put(key, model, response.model_dump(exclude={"cached", "attempts"}))
        return response

    def _charge(self, model: str) -> None:
        """Count a call against the budget, or refuse it when the budget is spent."""
        if self.budget is None:
            return
        spent = self.budget.exhausted()
        if spent is not None:
            raise ModelError("budget", f"{model}: not called: {spent}")
        self.budget.calls += 1

    def _semaphore(self, provider: str) -> asyncio.Semaphore:
        per_loop = self._semaphores.setdefault(asyncio.get_running_loop(), {})
        if provider not in per_loop:
            limit = self.concurrency.get(provider, FALLBACK_CONCURRENCY)
            per_loop[provider] = asyncio.Semaphore(limit)
        return per_loop[provider]

    async def _attempt(
        self,
        model: str,
        kwargs: dict[str, Any],
        policy: _Policy,
        where: tuple[str, str | None],
        secrets: list[str],
    ) -> ModelResponse:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await _dispatch(model, kwargs)
            except Exception as raised:  # every provider failure is classified below
                exc = own_error(raised) or raised
                kind = error_kind(exc)
                if kind != "connection":
                    self._reached.add(where)  # the server answered, if only with an error
                wait = retry_after(exc)
                too_long = wait is not None and wait > self.max_backoff
                if kind not in RETRYABLE_KINDS or attempt > policy.retries or too_long:
                    self.stats.errors += 1
                    if kind == "connection" and where not in self._reached:
                        kind = "unreachable"
                    detail = exc.message if isinstance(exc, ModelError) else str(exc)
                    if too_long:
                        detail += f"; the server asked to wait {wait:g} s, more than max_backoff"
                    message = f"{model}: {detail} (after {attempt} attempt(s))"
                    raise ModelError(kind, redact(message, secrets)) from None
                self.stats.retries += 1
                if wait is None:
                    ceiling = min(self.max_backoff, policy.backoff * 2 ** (attempt - 1))
                    wait = ceiling * (0.5 + 0.5 * float(self._rng.random()))
                await self._sleep(wait)
                continue
            self._reached.add(where)
            return response.model_copy(update={"attempts": attempt})


def _api_key(model: str, endpoint: Endpoint) -> str | None:
    """The key an endpoint names by its variable (None when it names none).

    Raises:
        ModelError: (auth) the variable is not set.
    """
    if endpoint.api_key_env is None:
        return None
    value = os.environ.get(endpoint.api_key_env, "")
    if not value:
        raise ModelError(
            "auth", f"{model}: the environment variable {endpoint.api_key_env} (api_key_env) "
            "is not set",
        )  # fmt: skip
    return value


async def _dispatch(model: str, kwargs: dict[str, Any]) -> ModelResponse:
    """One attempt: ``test/`` and ``local/`` models are answered here, the rest by litellm."""
    provider, _, name = model.partition("/")
    if provider == "test":
        return await doubles.reply(name, kwargs)
    if provider == "local":
        return await local.reply(name, kwargs)
    litellm = load_litellm()
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
        raise ModelError("server", f"{model}: the provider returned no choices")
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


def endpoint_identity(endpoint: Endpoint | None, model: str) -> dict[str, Any]:
    """What makes ``model`` answer differently (part of cache and episode keys).

    The endpoint's server and extra parameters (:meth:`Endpoint.identity`) and, for a
    ``local/`` model, the weights it is served from (:func:`~hasbench.llm.llama.weights_identity`).
    """
    found = (endpoint or _NO_ENDPOINT).identity(provider_of(model))
    provider, _, name = model.partition("/")
    if provider == "local" and name in llama.LOCAL_MODELS:
        found = {**found, "weights": llama.weights_identity(name)}
    return found


def provider_of(model: str) -> str:
    """The provider prefix of a model string (``openai/gpt-4o`` -> ``openai``).

    A registered backend is its prefix (``scripted:oracle`` -> ``scripted``, ``rule``); a
    bare model name is resolved by litellm (``gpt-4o-mini`` -> ``openai``); an unknown one
    is its own provider.
    """
    if "/" in model:
        return model.split("/", 1)[0]
    if ":" in model or model == "rule":
        return model.split(":", 1)[0]
    try:
        return load_litellm().get_llm_provider(model)[1]
    except Exception:  # litellm raises several types for unknown models
        return model


def model_problem(model: str) -> str | None:
    """Why a model string cannot name a model, or None; known before any call is made.

    A ``provider/model`` string needs a provider litellm knows (or ``local``, ``test``);
    ``local/`` names one of :data:`~hasbench.llm.llama.LOCAL_MODELS`; a bare name is one
    litellm can place (``gpt-4o-mini``). The model names a provider serves are not checked
    (a server may serve any). Problems end with a "did you mean" where one is close.
    """
    provider, _, name = model.partition("/") if "/" in model else ("", "", model)
    if provider == "test":
        return None if name else "test/ needs a name (register_test_provider)"
    if provider == "local":
        if name in llama.LOCAL_MODELS:
            return None
        return f"unknown local model {model!r}" + did_you_mean(
            model, [f"local/{known}" for known in llama.LOCAL_MODELS]
        )
    litellm = load_litellm()
    providers = sorted({getattr(p, "value", p) for p in litellm.provider_list} | {"local", "test"})
    if provider:
        if provider in providers:
            return None
        close = did_you_mean(provider, providers)
        return f"unknown provider {provider!r} (not a litellm provider){close}"
    try:
        litellm.get_llm_provider(model)
        return None
    except Exception:  # litellm raises several types for a name it cannot place
        pass
    known = (litellm.model_cost.get(model) or {}).get("litellm_provider")
    hint = f"; did you mean {known + '/' + model!r}?" if known else did_you_mean(
        model, litellm.model_list
    )  # fmt: skip
    return f"unknown model {model!r}: it names no provider (provider/model){hint}"


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate, or "" when none is close."""
    import difflib

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


_MISSING_KEY = re.compile(
    r"missing credentials|missing [\w ]{0,20}api key|api_key client option must be set"
    r"|no api key",
    re.IGNORECASE,
)
_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota", re.IGNORECASE)


def own_error(exc: BaseException) -> ModelError | None:
    """The :class:`ModelError` a provider of this package raised, if litellm wrapped one."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ModelError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def error_kind(exc: BaseException) -> str:
    """Classify a provider exception (ours or litellm's) into a :class:`ModelError` kind."""
    own = own_error(exc)
    if own is not None:
        return own.kind
    import litellm

    text = str(exc)
    if _MISSING_KEY.search(text):
        return "auth"  # SDKs report a missing key in several guises, some as server errors
    if isinstance(exc, litellm.RateLimitError) and _QUOTA.search(text):
        return "quota"
    if isinstance(exc, litellm.Timeout):
        return "timeout"
    if _connection_failed(exc):
        return "connection"
    ordered: list[tuple[type[BaseException], str]] = [
        (litellm.ContextWindowExceededError, "context_window"),
        (litellm.ContentPolicyViolationError, "content_policy"),
        (litellm.RateLimitError, "rate_limit"),
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


def _connection_failed(exc: BaseException) -> bool:
    """Whether the request never reached a server, or the connection broke (its causes)."""
    import httpx
    import openai

    network = (ConnectionError, httpx.TransportError, openai.APIConnectionError)
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, network) and not isinstance(
            cause, httpx.TimeoutException | openai.APITimeoutError
        ):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def retry_after(exc: BaseException) -> float | None:
    """Seconds a failed call's server asked to wait (``retry-after-ms`` or ``Retry-After``)."""
    if isinstance(exc, ModelError):
        return exc.retry_after
    headers = getattr(exc, "litellm_response_headers", None) or getattr(
        getattr(exc, "response", None), "headers", None
    )
    if not headers:
        return None
    found = {str(name).lower(): str(value) for name, value in dict(headers).items()}
    try:
        if "retry-after-ms" in found:
            return max(0.0, float(found["retry-after-ms"]) / 1000)
        if "retry-after" in found:
            return max(0.0, float(found["retry-after"]))
    except ValueError:
        pass
    if "retry-after" not in found:
        return None
    try:
        when = email.utils.parsedate_to_datetime(found["retry-after"])
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace ``secrets`` and every secret-looking environment variable's value in ``text``."""
    values = [v for name, v in os.environ.items() if _SECRET_NAME.search(name)]
    for value in [*secrets, *values]:
        if len(value) >= 8 and value in text:
            text = text.replace(value, "[redacted]")
    return text


_CUSTOM_PROVIDERS = ("test", "local")
"""Providers served in this process (no SDK retries to switch off)."""
_LITELLM_LOCK = threading.Lock()
_litellm_module: ModuleType | None = None


def load_litellm() -> ModuleType:
    """Import litellm once, quietly."""
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
            _litellm_module = litellm
    return _litellm_module
