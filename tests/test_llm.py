import asyncio
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from hasbench.llm import (
    LLMClient,
    ModelError,
    ResponseCache,
    redact,
    register_test_provider,
    request_key,
)

MESSAGES = [{"role": "user", "content": "Where is my order #W1?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]


class Script:
    """A respond function that counts calls and can fail a given number of times."""

    def __init__(self, fail_kind=None, failures=0, reply=None):
        self.calls = 0
        self.fail_kind = fail_kind
        self.failures = failures
        self.reply = reply or {
            "content": None,
            "tool_calls": [{"name": "get_order", "arguments": {"order_id": "#W1"}}],
        }

    def __call__(self, messages, tools):
        self.calls += 1
        if self.fail_kind and self.calls <= self.failures:
            raise ModelError(self.fail_kind, f"scripted {self.fail_kind} #{self.calls}")
        return self.reply


class FakeSleep:
    def __init__(self):
        self.delays = []

    async def __call__(self, seconds):
        self.delays.append(seconds)


def run(coro):
    return asyncio.run(coro)


def test_cache_hit_and_rerun_makes_zero_calls(tmp_path):
    script = Script()
    model = register_test_provider("cache", script)
    cache_path = tmp_path / "responses.sqlite"

    async def session():
        client = LLMClient(cache=ResponseCache(cache_path))
        out = []
        for text in ["a", "b", "a"]:
            messages = [{"role": "user", "content": text}]
            out.append(await client.complete(model, messages, TOOLS))
        return client, out

    first_client, first = run(session())
    assert script.calls == 2  # the repeated "a" was a hit already
    assert (first_client.stats.calls, first_client.stats.cache_hits) == (2, 1)
    assert [r.cached for r in first] == [False, False, True]

    second_client, second = run(session())
    assert script.calls == 2  # warm rerun: zero model calls
    assert (second_client.stats.calls, second_client.stats.cache_hits) == (0, 3)
    assert all(r.cached and r.attempts == 0 for r in second)
    fields = {"cached", "attempts"}
    assert [r.model_dump(exclude=fields) for r in second] == [
        r.model_dump(exclude=fields) for r in first
    ]


def test_cache_key_covers_every_request_field():
    base = dict(
        model="test/x",
        messages=MESSAGES,
        tools=TOOLS,
        temperature=0.0,
        response_format=None,
        seed=None,
    )
    key = request_key(**base)
    assert key == request_key(**{**base, "messages": [dict(reversed(MESSAGES[0].items()))]})
    variants = [
        {"model": "test/y"},
        {"messages": [{"role": "user", "content": "Where is my order #W2?"}]},
        {"tools": None},
        {"temperature": 0.7},
        {"response_format": {"type": "json_object"}},
        {"seed": 1},
    ]
    keys = {request_key(**{**base, **change}) for change in variants}
    assert key not in keys and len(keys) == len(variants)
    assert request_key(**base, tool_choice=None) == key
    assert request_key(**base, tool_choice="required") not in keys | {key}


def test_rate_limits_are_retried_with_exponential_backoff_and_jitter():
    def pauses(seed):
        script = Script(fail_kind="rate_limit", failures=3)
        model = register_test_provider("flaky", script)
        sleep = FakeSleep()
        client = LLMClient(max_retries=4, sleep=sleep, backoff=0.5, rng=np.random.default_rng(seed))
        response = run(client.complete(model, MESSAGES, TOOLS))
        assert script.calls == 4
        assert response.attempts == 4
        assert client.stats.retries == 3 and client.stats.calls == 1
        assert response.tool_calls[0].name == "get_order"
        return sleep.delays

    delays = pauses(seed=7)
    for delay, ceiling in zip(delays, [0.5, 1.0, 2.0], strict=True):
        assert ceiling / 2 <= delay < ceiling  # exponential, with jitter in [0.5, 1)
    assert pauses(seed=7) == delays  # seeded: the same pauses
    assert pauses(seed=8) != delays  # jitter: another seed, other pauses


def test_transient_errors_give_up_after_max_retries():
    script = Script(fail_kind="timeout", failures=100)
    model = register_test_provider("slowpoke", script)
    sleep = FakeSleep()
    client = LLMClient(max_retries=2, sleep=sleep)
    with pytest.raises(ModelError) as info:
        run(client.complete(model, MESSAGES))
    assert info.value.kind == "timeout"
    assert "3 attempt" in info.value.message
    assert script.calls == 3 and len(sleep.delays) == 2


@pytest.mark.parametrize("kind", ["auth", "bad_request", "not_found"])
def test_permanent_errors_raise_model_error_at_once(kind):
    script = Script(fail_kind=kind, failures=100)
    model = register_test_provider(f"broken_{kind}", script)
    sleep = FakeSleep()
    client = LLMClient(sleep=sleep)
    with pytest.raises(ModelError) as info:
        run(client.complete(model, MESSAGES))
    assert info.value.kind == kind
    assert script.calls == 1 and sleep.delays == []
    assert client.stats.errors == 1


def test_a_crashing_script_is_a_permanent_error():
    def respond(messages, tools):
        raise KeyError("missing")

    model = register_test_provider("crashing", respond)
    sleep = FakeSleep()
    with pytest.raises(ModelError) as info:
        run(LLMClient(sleep=sleep).complete(model, MESSAGES))
    assert info.value.kind == "bad_request"
    assert "KeyError" in info.value.message
    assert sleep.delays == []


def test_unregistered_test_model_is_not_found():
    with pytest.raises(ModelError) as info:
        run(LLMClient().complete("test/never_registered", MESSAGES))
    assert info.value.kind == "not_found"


def test_concurrency_limit_per_provider_is_respected():
    model = register_test_provider("latency", Script(), delay=0.1)

    async def burst(client):
        started = time.perf_counter()
        await asyncio.gather(
            *(client.complete(model, [{"role": "user", "content": str(i)}]) for i in range(8))
        )
        return time.perf_counter() - started

    limited = run(burst(LLMClient(concurrency={"test": 2})))
    assert limited >= 0.4  # 8 calls of 0.1 s, two at a time
    unlimited = run(burst(LLMClient()))
    assert unlimited < limited


def test_client_is_reusable_across_event_loops():
    model = register_test_provider("loops", Script(), delay=0.01)
    client = LLMClient(concurrency={"test": 1})

    async def two():
        await asyncio.gather(
            *(client.complete(model, [{"role": "user", "content": c}]) for c in "xy")
        )

    run(two())
    run(two())
    assert client.stats.calls == 4


def test_usage_tool_calls_and_raw_arguments_are_returned():
    reply = {
        "content": "Looking it up.",
        "tool_calls": [
            {"name": "get_order", "arguments": {"order_id": "#W1"}},
            {"name": "get_order", "arguments": "{not json"},
        ],
    }
    model = register_test_provider("usage", Script(reply=reply))
    response = run(LLMClient().complete(model, MESSAGES, TOOLS))
    assert response.content == "Looking it up."
    assert [c.arguments for c in response.tool_calls] == ['{"order_id":"#W1"}', "{not json"]
    assert len({c.id for c in response.tool_calls}) == 2
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.cost == 0.0 and response.attempts == 1 and not response.cached
    again = run(LLMClient().complete(model, MESSAGES, TOOLS))
    assert [c.id for c in again.tool_calls] == [c.id for c in response.tool_calls]


def test_respond_receives_messages_and_tools():
    seen = {}

    def respond(messages, tools):
        seen["messages"], seen["tools"] = messages, tools
        return {"content": "ok"}

    model = register_test_provider("seen", respond)
    run(LLMClient().complete(model, MESSAGES, TOOLS))
    assert seen["messages"][-1]["content"] == MESSAGES[0]["content"]
    assert [t["function"]["name"] for t in seen["tools"]] == ["get_order"]


def test_cost_comes_from_litellm_cost_map():
    import litellm

    from hasbench.llm import _convert, load_litellm

    load_litellm()
    raw = run(
        litellm.acompletion(model="openai/gpt-4o-mini", messages=MESSAGES, mock_response="hi")
    )
    response = _convert("openai/gpt-4o-mini", raw, attempts=1)
    assert response.content == "hi"
    assert response.cost is not None and response.cost > 0


def test_no_api_key_in_cache_response_or_error(tmp_path, monkeypatch):
    secret = "sk-hasbench-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    model = register_test_provider("secret", Script())
    cache_path = tmp_path / "responses.sqlite"
    cache = ResponseCache(cache_path)
    response = run(LLMClient(cache=cache).complete(model, MESSAGES, TOOLS))
    cache.close()
    assert secret not in response.model_dump_json()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert secret.encode() not in stored and b"get_order" in stored

    def leaky(messages, tools):
        raise ModelError("auth", f"key {os.environ['OPENAI_API_KEY']} was rejected")

    bad = register_test_provider("leaky", leaky)
    with pytest.raises(ModelError) as info:
        run(LLMClient().complete(bad, MESSAGES))
    assert info.value.kind == "auth" and secret not in str(info.value)
    assert redact(f"Bearer {secret}") == "Bearer [redacted]"


WRITER = """
import sys
from hasbench.llm import ResponseCache
cache = ResponseCache(sys.argv[1])
for i in range(200):
    cache.put(f"{sys.argv[2]}-{i}", "test/x", {"content": str(i)})
"""


def test_cache_is_shared_safely_by_two_processes(tmp_path):
    path = tmp_path / "shared.sqlite"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name]) for name in "ab"]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 400
    assert cache.get("b-199") == {"content": "199"}
    assert json.dumps(cache.get("a-0")) == '{"content": "0"}'


def test_import_does_not_load_litellm():
    code = "import sys, hasbench.llm; print('litellm' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_unknown_local_model_is_not_found():
    with pytest.raises(ModelError) as info:
        run(LLMClient().complete("local/no-such-model", MESSAGES))
    assert info.value.kind == "not_found" and "local/smollm2-135m" in info.value.message


def test_local_model_without_extra_names_the_extra(monkeypatch):
    from hasbench import llm

    monkeypatch.setitem(llm.LOCAL_MODELS, "ghost", ("no_such_weights_pkg", "ghost.gguf"))
    with pytest.raises(ModelError) as info:
        run(LLMClient().complete("local/ghost", MESSAGES))
    assert info.value.kind == "not_found" and "hasbench[local]" in info.value.message


def test_local_messages_show_tool_history_in_the_reply_format():
    from hasbench.llm import _local_messages

    history = [
        {"role": "system", "content": "Be helpful."},
        {"role": "user", "content": "Status of #W1?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "function": {"name": "get_order", "arguments": '{"order_id":"#W1"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "pending"},
        {"role": "assistant", "content": "It is pending."},
    ]
    chat = _local_messages(history, [t["function"] for t in TOOLS])
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant"]
    assert chat[0]["content"].startswith("Be helpful.") and "get_order" in chat[0]["content"]
    assert json.loads(chat[2]["content"]) == {"tool": "get_order", "arguments": {"order_id": "#W1"}}
    assert chat[3]["content"] == "Result of get_order: pending"
    assert json.loads(chat[4]["content"]) == {"message": "It is pending."}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"tool": "get_order", "arguments": {"order_id": "#W1"}}',
            {
                "content": None,
                "tool_calls": [{"name": "get_order", "arguments": '{"order_id":"#W1"}'}],
            },
        ),
        ('{"message": "Which order?"}', {"content": "Which order?"}),
        (
            '{"tool": "delete_all", "arguments": {}}',
            {"content": '{"tool": "delete_all", "arguments": {}}'},
        ),
        ('{"tool": "get_order", "argum', {"content": '{"tool": "get_order", "argum'}),
    ],
)
def test_local_reply_parsing(text, expected):
    from hasbench.llm import _parse_local_reply

    assert _parse_local_reply(text, [t["function"] for t in TOOLS]) == expected


def test_model_error_reads_well_and_survives_pickling():
    import pickle

    error = pickle.loads(pickle.dumps(ModelError("rate_limit", "slow down")))
    assert (error.kind, error.message, str(error)) == (
        "rate_limit",
        "slow down",
        "rate_limit: slow down",
    )


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (("InternalServerError", "Missing credentials. Please pass an `api_key`"), "auth"),
        (("APIConnectionError", "Missing Gemini API key. Set GEMINI_API_KEY."), "auth"),
        (("RateLimitError", "You exceeded your current quota (insufficient_quota)"), "quota"),
        (("RateLimitError", "Rate limit reached for requests"), "rate_limit"),
        (("InternalServerError", "The server had an error"), "server"),
    ],
)
def test_provider_errors_are_classified_by_what_a_user_must_do(error, kind):
    import litellm

    from hasbench.llm import error_kind

    name, message = error
    exc = getattr(litellm, name)(message=message, llm_provider="openai", model="openai/x")
    assert error_kind(exc) == kind


@pytest.mark.parametrize("limit", [0, -2])
def test_a_concurrency_limit_below_one_is_refused(limit):
    with pytest.raises(ValueError, match="concurrency: every limit must be at least 1"):
        LLMClient(concurrency={"openai": limit})


def test_the_loop_stop_fires_on_a_repeated_run_not_on_a_repeated_look():
    from hasbench.llm.llama import LOCAL_LOOP_TOKENS, _LoopStop

    prompt = [7, 7, 7]
    stop = _LoopStop(len(prompt))
    reply = list(range(100, 100 + LOCAL_LOOP_TOKENS + 4))
    for end in range(1, len(reply) + 1):
        assert not stop(prompt + reply[:end], None)
    assert not stop(prompt + reply, None)  # llama.cpp may look at the same reply twice
    looped = reply + reply[:LOCAL_LOOP_TOKENS]
    fired = [stop(prompt + looped[:end], None) for end in range(len(reply) + 1, len(looped) + 1)]
    assert fired == [False] * (LOCAL_LOOP_TOKENS - 1) + [True]
    assert stop.kept == reply


def test_a_local_model_s_cached_replies_and_episode_keys_belong_to_its_weights(
    monkeypatch, tmp_path
):
    """Replies cached from other weights (another release, another encoding) are not taken."""
    from hasbench.llm import ModelResponse, client, llama
    from hasbench.simulator import Backends

    asked = []

    async def answer(model, kwargs):
        asked.append(model)
        return ModelResponse(model=model, content=f"reply {len(asked)}")

    monkeypatch.setattr(client, "_dispatch", answer)
    llm = LLMClient(cache=ResponseCache(tmp_path / "responses.sqlite"))
    model = "local/smollm2-135m"
    identities = []
    for weights in ("Q4_1 weights", "Q4_1 weights", "Q8_0 weights"):
        monkeypatch.setattr(llama, "weights_identity", lambda name, w=weights: w)
        run(llm.complete(model, MESSAGES))
        identities.append(Backends(user=model).identity())
    assert len(asked) == 2 and llm.stats.cache_hits == 1  # the same weights: a cache hit
    assert identities[0] == identities[1] != identities[2]
    assert identities[2]["endpoints"]["user"] == {"weights": "Q8_0 weights"}
