"""Points 3 and 4: discussions (scope, mode, focus, moderator, acts, budget) and summaries."""

import asyncio
import itertools
import json

import pytest
from docuteam_helpers import make_session

from hasbench.docuteam.agents import Agent, AgentProfile
from hasbench.docuteam.schemas import DiscussionSummary, EvaluationSummary, sentences
from hasbench.docuteam.steps import RoleModels
from hasbench.llm import LLMClient, register_test_provider


def start(session, *args, **kwargs):
    return asyncio.run(session.start_discussion(*args, **kwargs))


def test_a_discussion_has_scope_mode_focus_and_participants():
    session = make_session()
    d = start(
        session,
        ["budget", "program", "logistics"],
        "evaluation",
        ("b12", "b18"),
        comment="Is the day too packed?",
    )
    assert d.scope == [f"b{i}" for i in range(12, 19)]
    assert [b.id for b in session.scope_blocks(d.id)] == d.scope
    assert d.focus.startswith("Judge the strengths and gaps of") and "too packed" in d.focus
    assert d.participants == ["budget", "program", "logistics"] and d.origin == "document"
    opened = session.log.of_type("discussion_opened")[0].payload
    assert opened["scope"] == d.scope and opened["initiator"] == "user"


@pytest.mark.parametrize(
    ("agents", "problem"),
    [
        (["budget"], "2-4 participants, not 1"),
        (["budget", "program", "logistics", "attendee", "guest"], "2-4 participants, not 5"),
        (["budget", "budget"], "listed twice"),
        (["budget", "nobody"], "unknown agent"),
    ],
)
def test_two_to_four_known_participants(agents, problem):
    session = make_session()
    profile = AgentProfile(id="guest", name="Gil", role="Guest", stance="Curious.", expertise=["x"])
    session.agents["guest"] = Agent(profile)
    with pytest.raises(ValueError, match=problem):
        start(session, agents, "idea", "b22")
    assert not session.discussions


def test_the_moderator_walks_the_stages_of_each_mode():
    session = make_session()
    d = start(session, ["budget", "program", "logistics"], "evaluation", ("b14", "b16"))
    stages = [e.payload["dialog_state"]["stage"] for e in session.log.of_type("moderator")]
    assert stages == ["evaluation"] * 3 + ["improvement_suggestion"] * 3 + ["evaluation_wrapup"]
    acts = [m.act for m in d.messages]
    assert acts == ["ISSUE"] * 3 + ["CLAIM"] * 3
    assert d.status == "converged"
    decisions = [e.payload for e in session.log.of_type("moderator")]
    spoken = [p["next_speaker_id"] for p in decisions if p["decision"] == "speak"]
    assert spoken == [m.author for m in d.messages]
    assert all(p["speaking_direction"] for p in decisions if p["decision"] == "speak")
    # Evaluation summary: one evaluation and one suggestion per agent who spoke.
    assert isinstance(d.summary, EvaluationSummary)
    assert sorted(e.agent_id for e in d.summary.evaluations) == ["budget", "logistics", "program"]
    assert len(sentences(d.bubble)) == 1 and d.bubble.startswith("Suggested improvements include")


def test_discussion_summary_separates_consensus_and_conflicts():
    session = make_session()
    d = start(session, ["budget", "attendee", "program"], "discussion", ("b8", "b9"))
    assert isinstance(d.summary, DiscussionSummary)
    assert d.summary.conflicts and all(len(c.sides) == 2 for c in d.summary.conflicts)
    ids = {m.id for m in d.messages}
    assert all(c.message_id in ids for c in d.summary.conflicts)
    summaries = session.log.of_type("summary")
    assert summaries[-1].payload["summary"] == d.summary.model_dump()
    assert session.log.of_type("bubble")[-1].payload["text"] == d.bubble


def test_the_turn_budget_ends_a_run():
    session = make_session(turn_budget=3)
    d = start(session, ["budget", "program", "logistics"], "idea", "b22")
    assert d.status == "budget_exhausted" and len(d.messages) == 3
    assert session.log.of_type("status")[-1].payload["reason"].startswith("3 rounds")


def test_invalid_agent_output_skips_the_turn_and_is_never_invented():
    model = register_test_provider(
        "docuteam-rambling",
        lambda messages, tools: {"content": '{"act": "CLAIM", "utterance": "One sentence only."}'},
    )
    session = make_session(
        turn_budget=4, backends=RoleModels(agents=model), client=LLMClient(cache=None)
    )
    d = start(session, ["budget", "program"], "idea", "b22")
    assert d.messages == [] and d.status == "budget_exhausted"
    errors = session.log.of_type("error")
    assert len(errors) == 4 and all(e.payload["step"] == "utterance" for e in errors)
    assert all("exactly two sentences" in e.payload["message"] for e in errors)
    assert len(session.log.of_type("model_call")) == 8  # two attempts per turn
    assert not session.log.of_type("summary")  # nothing to summarise


def distinct_utterances(delay):
    counter = itertools.count()
    words = [
        "lunch boxes",
        "a food truck",
        "a potluck",
        "cafe vouchers",
        "a picnic",
        "pizza",
        "bento",
        "soup",
    ]

    def respond(messages, tools):
        n = next(counter)
        text = (
            f"Idea {n} is {words[n % len(words)]} for everyone. People in group {n} would like it."
        )
        return {"content": json.dumps({"act": "CLAIM", "utterance": text})}

    return register_test_provider(f"docuteam-slow-{delay}", respond, delay=delay)


def test_a_running_discussion_can_be_stopped_and_its_events_watched():
    model = distinct_utterances(0.02)
    session = make_session(backends=RoleModels(agents=model), client=LLMClient(cache=None))
    seen = []
    session.subscribe(lambda event: seen.append(event.type))

    async def main():
        d = await session.start_discussion(
            ["budget", "program", "logistics"], "idea", "b22", run=False
        )
        task = session.start(d.id)  # in the background
        stream = session.log.stream()
        async for event in stream:
            if event.type == "message":
                break
        await stream.aclose()
        stopped = await session.stop(d.id)
        assert task.done()
        return stopped

    d = asyncio.run(main())
    assert d.status == "stopped"
    assert 1 <= len(d.messages) < 6
    assert seen.count("message") == len(d.messages) and "steering" in seen
    assert session.log.of_type("steering")[-1].payload["action"] == "stop"
    # the stopped discussion still gets its summary and memory update
    assert session.log.of_type("summary") and session.log.of_type("memory")


def test_concurrent_discussions_run_side_by_side():
    model = distinct_utterances(0.01)
    session = make_session(
        backends=RoleModels(agents=model), client=LLMClient(cache=None), turn_budget=2
    )

    async def main():
        a = await session.start_discussion(["budget", "program"], "idea", "b9", run=False)
        b = await session.start_discussion(["attendee", "logistics"], "idea", "b22", run=False)
        await asyncio.gather(session.run_discussion(a.id), session.run_discussion(b.id))
        return a, b

    a, b = asyncio.run(main())
    order = [e.discussion for e in session.log.of_type("message")]
    assert order[:2] == ["d1", "d2"]  # interleaved, not one after the other
    assert len(a.messages) == len(b.messages) == 2
