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

The package has one module per job: :mod:`~hasbench.llm.client` (the client, retries,
error classification), :mod:`~hasbench.llm.cache` (the response cache),
:mod:`~hasbench.llm.doubles` (``test/`` models) and :mod:`~hasbench.llm.local`
(``local/`` models), on the shared types of :mod:`~hasbench.llm.base`.
"""

# The underscored names are internals that tests/test_llm.py and tests/test_local_model.py
# reach through the package, as they did when it was one module.
from hasbench.llm.base import ModelError, ModelResponse, ToolCallRequest
from hasbench.llm.cache import CACHE_FORMAT, ResponseCache, request_key
from hasbench.llm.client import (
    DEFAULT_CONCURRENCY,
    FALLBACK_CONCURRENCY,
    RETRYABLE_KINDS,
    ClientStats,
    LLMClient,
    error_kind,
    provider_of,
    redact,
)
from hasbench.llm.client import _convert as _convert
from hasbench.llm.client import _litellm as _litellm
from hasbench.llm.doubles import Respond, register_test_provider
from hasbench.llm.local import _LOCAL_LOADED as _LOCAL_LOADED
from hasbench.llm.local import (
    LOCAL_BATCH,
    LOCAL_CONTEXT,
    LOCAL_KEPT_STATES,
    LOCAL_MAX_TOKENS,
    LOCAL_MODELS,
    LOCAL_SEED,
)
from hasbench.llm.local import _grammar_safe as _grammar_safe
from hasbench.llm.local import _local_messages as _local_messages
from hasbench.llm.local import _parse_local_reply as _parse_local_reply

__all__ = [
    "CACHE_FORMAT", "DEFAULT_CONCURRENCY", "FALLBACK_CONCURRENCY", "LOCAL_BATCH",
    "LOCAL_CONTEXT", "LOCAL_KEPT_STATES", "LOCAL_MAX_TOKENS", "LOCAL_MODELS", "LOCAL_SEED",
    "RETRYABLE_KINDS", "ClientStats", "LLMClient", "ModelError", "ModelResponse", "Respond",
    "ResponseCache", "ToolCallRequest", "error_kind", "provider_of",
    "redact", "register_test_provider", "request_key",
]  # fmt: skip
