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
  valid JSON by a grammar. Each runs in a process of its own: if llama.cpp crashes, that
  call fails (kind ``died``) and the next one starts the model again.

The client adds what a study needs around litellm: an on-disk response cache keyed by a
hash of the request and its endpoint (a warm rerun makes no model calls), retries for rate
limits, time-outs, server and connection errors (``Retry-After`` honoured, else
exponential backoff with jitter), a concurrency limit per provider, an optional budget of
calls and cost (:class:`CallBudget`), and token/cost accounting.

Where a model is served is an :class:`Endpoint`: the server's ``api_base``, the
environment variable holding its key (``api_key_env``), extra litellm parameters, and its
own timeout, retries and backoff. Without one, litellm's defaults apply: the provider's
server and its usual key variable (``OPENAI_API_KEY`` for ``openai/...``,
``ANTHROPIC_API_KEY`` for ``anthropic/...``, and so on). Keys are read from the environment
only; they are never part of a cache key, a cached record, a response or an error message.
The shared cache lives in ``CACHE_DIR`` (``HASBENCH_CACHE``), see
:meth:`ResponseCache.default`.

Every failure of a call is a :class:`ModelError` with a kind: transient kinds are retried
first, and a run stops a backend after ``STOP_AFTER`` episodes in a row end in one (per
endpoint: ``Endpoint.stop_after``); permanent kinds (``PERMANENT_KINDS``: auth,
not_found, quota, unreachable) mean no later call to that backend can succeed, and
``FIXES`` says what to change.

litellm is imported lazily, on the first model call, because importing it is slow.

The package has one module per job: :mod:`~hasbench.llm.client` (the client, retries,
error classification), :mod:`~hasbench.llm.cache` (the response cache),
:mod:`~hasbench.llm.doubles` (``test/`` models), :mod:`~hasbench.llm.local` (``local/``
models: the provider and the model's process) over :mod:`~hasbench.llm.llama` (what runs
in that process), on the shared types of :mod:`~hasbench.llm.base`.
"""

# The underscored names are internals that tests/test_llm.py and tests/test_local_model.py
# reach through the package, as they did when it was one module.
from hasbench.llm.base import (
    FIXES,
    PERMANENT_KINDS,
    RETRYABLE_KINDS,
    STOP_AFTER,
    TRANSIENT_KINDS,
    Endpoint,
    ModelError,
    ModelResponse,
    ToolCallRequest,
)
from hasbench.llm.cache import CACHE_FORMAT, ResponseCache, request_key
from hasbench.llm.client import (
    DEFAULT_CONCURRENCY,
    FALLBACK_CONCURRENCY,
    NO_KEY,
    CallBudget,
    ClientStats,
    LLMClient,
    did_you_mean,
    endpoint_identity,
    error_kind,
    load_litellm,
    model_problem,
    provider_of,
    redact,
    retry_after,
)
from hasbench.llm.client import _convert as _convert
from hasbench.llm.doubles import Respond, register_test_provider
from hasbench.llm.llama import (
    LOCAL_BATCH,
    LOCAL_CONTEXT,
    LOCAL_KEPT_BYTES,
    LOCAL_MAX_TOKENS,
    LOCAL_MODELS,
    LOCAL_SEED,
)
from hasbench.llm.llama import _grammar_safe as _grammar_safe
from hasbench.llm.llama import _local_messages as _local_messages
from hasbench.llm.llama import _parse_local_reply as _parse_local_reply

__all__ = [
    "CACHE_FORMAT", "DEFAULT_CONCURRENCY", "FALLBACK_CONCURRENCY", "FIXES", "LOCAL_BATCH",
    "LOCAL_CONTEXT", "LOCAL_KEPT_BYTES", "LOCAL_MAX_TOKENS", "LOCAL_MODELS", "LOCAL_SEED",
    "NO_KEY", "PERMANENT_KINDS", "RETRYABLE_KINDS", "STOP_AFTER", "TRANSIENT_KINDS", "CallBudget",
    "ClientStats", "Endpoint", "LLMClient", "ModelError", "ModelResponse", "Respond",
    "ResponseCache", "ToolCallRequest", "did_you_mean", "endpoint_identity", "error_kind",
    "load_litellm", "model_problem", "provider_of", "redact", "register_test_provider",
    "request_key", "retry_after",
]  # fmt: skip
