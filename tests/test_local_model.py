import asyncio
import json

import pytest
from pieces import needs_local_model

from hasbench.llm import LOCAL_MAX_TOKENS, LLMClient, ResponseCache

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    needs_local_model,
]

MODEL = "local/smollm2-135m"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order by its id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "cancel_order",
            "description": "Cancel a pending order.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "reason": {"type": "string", "enum": ["no longer needed", "mistake"]},
                },
                "required": ["order_id", "reason"],
            },
        },
    },
]
MESSAGES = [
    {"role": "system", "content": "You are a customer support agent for an online shop."},
    {"role": "user", "content": "Please cancel my order #W123, I ordered it by mistake."},
]


def assert_well_formed(response):
    if response.tool_calls:
        assert len(response.tool_calls) == 1
        call = response.tool_calls[0]
        assert call.name in {"get_order", "cancel_order"}
        arguments = json.loads(call.arguments)
        assert "order_id" in arguments and isinstance(arguments["order_id"], str)
    else:
        assert isinstance(response.content, str) and response.content.strip()
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0


def test_tool_request_gives_tool_call_or_message_and_repeat_is_cache_hit(tmp_path):
    cache_path = tmp_path / "responses.sqlite"
    client = LLMClient(cache=ResponseCache(cache_path))
    first = asyncio.run(client.complete(MODEL, MESSAGES, TOOLS))
    assert_well_formed(first)
    assert not first.cached and client.stats.calls == 1

    again = LLMClient(cache=ResponseCache(cache_path))
    second = asyncio.run(again.complete(MODEL, MESSAGES, TOOLS))
    assert second.cached and again.stats.calls == 0 and again.stats.cache_hits == 1
    assert second.model_dump(exclude={"cached", "attempts"}) == first.model_dump(
        exclude={"cached", "attempts"}
    )


def forget_states():
    from hasbench.llm import local

    local.stop_models()  # a new process keeps no prompt states


def test_reply_depends_on_the_request_only_not_on_earlier_calls():
    client = LLMClient()
    other = [{"role": "system", "content": "You simulate a customer. " * 30}] + MESSAGES[1:]
    history = MESSAGES + [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id": "#W123"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "pending"}'},
    ]

    async def sequence():
        await client.complete(MODEL, MESSAGES, TOOLS)
        await client.complete(MODEL, other)
        return await client.complete(MODEL, history, TOOLS)  # resumes a kept prompt state

    after_others = asyncio.run(sequence())
    assert_well_formed(after_others)
    forget_states()
    fresh = asyncio.run(client.complete(MODEL, history, TOOLS))
    assert fresh.model_dump() == after_others.model_dump()


def test_plain_chat_without_tools():
    response = asyncio.run(
        LLMClient().complete(MODEL, [{"role": "user", "content": "Say hello in one sentence."}])
    )
    assert response.content and not response.tool_calls
    assert response.usage.completion_tokens > 0


def test_json_response_format_without_tools():
    response = asyncio.run(
        LLMClient().complete(
            MODEL,
            [{"role": "user", "content": "Rate the answer 'Paris' from 1 to 5 as JSON."}],
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "rating",
                    "schema": {
                        "type": "object",
                        "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
                        "required": ["score"],
                    },
                },
            },
        )
    )
    assert json.loads(response.content)["score"] in {1, 2, 3, 4, 5}


def test_nested_tool_schemas_are_inlined_for_the_grammar():
    from pydantic import BaseModel

    from hasbench.llm import _grammar_safe

    class Flight(BaseModel):
        flight_number: str
        date: str

    class Booking(BaseModel):
        user_id: str
        flights: list[Flight]

    parameters = Booking.model_json_schema()
    assert "$defs" in parameters
    schema = _grammar_safe(parameters)
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema
    assert schema["properties"]["flights"]["items"]["required"] == ["flight_number", "date"]


def test_required_tool_choice_never_gives_prose():
    auto = asyncio.run(LLMClient().complete(MODEL, MESSAGES, TOOLS, tool_choice="auto"))
    required = asyncio.run(LLMClient().complete(MODEL, MESSAGES, TOOLS, tool_choice="required"))
    assert_well_formed(auto)
    assert required.content is None and len(required.tool_calls) == 1
    assert_well_formed(required)


def test_reply_is_the_same_on_one_thread_as_on_two(monkeypatch):
    from hasbench.llm import llama

    chat = [{"role": "user", "content": "Name three colours of a rainbow. " * 30}]  # > 1 batch
    path = llama.served_file("smollm2-135m")
    replies = []
    for threads in (1, 2):
        monkeypatch.setattr(llama, "LOCAL_THREADS", threads)
        model = llama._LocalModel("smollm2-135m", path)
        assert model.llama.context_params.n_threads_batch == threads
        replies.append(model.generate(chat, None, temperature=0.0, seed=0))
        model.llama.close()
    assert replies[0] == replies[1]


def test_a_reply_that_repeats_itself_ends_where_the_repeat_begins(monkeypatch):
    from hasbench.llm import llama

    model = llama._local_model("smollm2-135m")
    chat = [{"role": "user", "content": "List the numbers 1, 1, 1, 1, 1, 1, 1, 1 and keep going."}]
    cut, cut_usage = model.generate(chat, None, temperature=0.0, seed=0)
    monkeypatch.setattr(llama, "LOCAL_LOOP_TOKENS", llama.LOCAL_MAX_TOKENS + 1)
    whole, whole_usage = model.generate(chat, None, temperature=0.0, seed=0)
    assert whole_usage.completion_tokens == llama.LOCAL_MAX_TOKENS  # loops to the limit
    assert cut_usage.completion_tokens < 2 * llama.LOCAL_LOOP_TOKENS + 8
    assert cut.strip() and whole.startswith(cut) and len(whole) > 5 * len(cut)


def test_a_json_reply_is_never_cut_by_the_loop_stop():
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"enum": ["one"]}}},
        "required": ["items"],
    }
    response = asyncio.run(
        LLMClient().complete(
            MODEL,
            [{"role": "user", "content": "Give me a JSON list with 'one' forty times."}],
            response_format={"type": "json_schema", "json_schema": {"name": "l", "schema": schema}},
        )
    )
    # the same items over and over are what was asked: the reply runs to the token limit
    assert response.usage.completion_tokens == LOCAL_MAX_TOKENS
    assert response.content.count('"one"') > 40


def test_a_greedy_json_reply_is_llama_cpps_and_checks_few_steps_against_the_whole_grammar(
    monkeypatch,
):
    from llama_cpp.llama_grammar import LlamaGrammar

    from hasbench.llm import llama

    schema = {
        "type": "object",
        "properties": {"comment": {"type": "string"}, "rating": {"enum": [1, 2, 3, 4, 5]}},
        "required": ["comment", "rating"],
    }
    chat = [{"role": "user", "content": "Review this kettle: it boils fast but leaks a little."}]
    checks = []
    close = llama._GreedyGrammar.close
    monkeypatch.setattr(
        llama._GreedyGrammar, "close", lambda self: (checks.append(self.full_checks), close(self))
    )
    model = llama._LocalModel("smollm2-135m", llama.served_file("smollm2-135m"))
    text, usage = model.generate(chat, schema, temperature=0.0, seed=0)
    formatted = model.formatter(messages=chat)
    tokens = model.llama.tokenize(formatted.prompt.encode(), add_bos=False, special=True)
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    expected = model.llama.create_completion(  # llama.cpp's sampler checks every step
        prompt=tokens, max_tokens=LOCAL_MAX_TOKENS, temperature=0.0, grammar=grammar
    )
    model.llama.close()
    assert text == expected["choices"][0]["text"], checks
    assert json.loads(text)["rating"] in range(1, 6)
    assert 0 < checks[0] < usage.completion_tokens, text


def test_a_model_keeps_the_prompt_states_its_memory_allows_not_only_the_last_four(monkeypatch):
    from hasbench.llm import llama

    model = llama._LocalModel("smollm2-135m", llama.served_file("smollm2-135m"))
    evaluated = []
    evaluate = model.llama.eval
    monkeypatch.setattr(model.llama, "eval", lambda t: (evaluated.append(len(t)), evaluate(t))[1])

    def ask(number, more=""):
        text = f"Fact {number}: " + "the sky over the sea is blue at noon. " * 6 + "True?" + more
        evaluated.clear()
        model.generate([{"role": "user", "content": text}], {"type": "boolean"}, 0.0, 0)
        return evaluated[0]  # the prompt's tokens evaluated (the reply's come one by one)

    whole = ask(0)
    for number in range(1, 7):  # six other prompts, none sharing a batch with the first
        assert ask(number) == whole
    assert ask(0, " Answer in one word.") < whole  # the first prompt's state is still kept
    assert sum(len(state) for _, state in model._saved) <= llama.LOCAL_KEPT_BYTES
    model.llama.close()


def test_the_shipped_weights_are_served_as_q8_0_written_once_and_the_same_each_time(
    monkeypatch, tmp_path
):
    from llama_cpp import Llama

    from hasbench.llm import llama

    monkeypatch.setattr(llama, "CACHE_DIR", tmp_path)
    served = llama.served_file("smollm2-135m")
    assert served.parent == tmp_path / "models" and served.name.endswith(".Q8_0.gguf")
    digest = served.name.removesuffix(".Q8_0.gguf").rsplit("-", 1)[1]
    assert llama.weights_identity("smollm2-135m") == (
        f"SmolLM2-135M-Instruct.Q4_1.gguf sha256:{digest} served as Q8_0"
    )
    written = served.stat().st_mtime_ns
    assert llama.served_file("smollm2-135m") == served
    assert served.stat().st_mtime_ns == written  # reused, not written again
    again = tmp_path / "again.gguf"
    llama._reencode("smollm2-135m", llama.model_file("smollm2-135m"), again)
    assert again.read_bytes() == served.read_bytes()
    assert sorted(p.name for p in served.parent.iterdir()) == [served.name]  # no partial left
    model = Llama(model_path=str(served), vocab_only=True, verbose=False)
    assert model.metadata["general.file_type"] == "7"  # llama.cpp's LLAMA_FTYPE_MOSTLY_Q8_0
    model.close()
    monkeypatch.setattr(llama, "_LOCAL_LOADED", {})
    loaded = llama._local_model("smollm2-135m")  # what a model process answers with
    assert loaded.llama.model_path == str(served)
    loaded.llama.close()
