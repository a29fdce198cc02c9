"""Point 9: a whole DocuTeam session on the workshop plan, offline with scripted backends."""

import asyncio

from docuteam_helpers import NETWORKING_EDIT, make_session

from hasbench.docuteam import SessionLog, session_measures
from hasbench.docuteam.demo import DEMOS, run_demo
from hasbench.docuteam.measures import final_document
from hasbench.docuteam.schemas import IdeaSummary, sentences


def run_scenario(tmp_path):
    session = make_session(tmp_path, participant="P01", task_name="workshop", order=1)
    memory_before = {a: agent.memory.snapshot() for a, agent in session.agents.items()}
    asyncio.run(run_demo(session, DEMOS["workshop"]))
    return session, memory_before


def test_offline_session_end_to_end(tmp_path):
    session, memory_before = run_scenario(tmp_path)
    log = session.log
    triggers = log.of_type("trigger")

    # The typo fix is trivial; the two edits of the networking line form one batch
    # that opens an Idea discussion anchored on the edited block.
    assert [t.payload["outcome"] for t in triggers[:2]] == ["trivial", "opened"]
    opened = triggers[1].payload
    assert opened["edits"] == ["e2", "e3"] and opened["mode"] == "idea"
    assert opened["means"]["idea"] > 0.75
    assert 2 <= len(opened["selected"]) <= 4 and all(s["reason"] for s in opened["selected"])
    assert all(
        set(x["scores"]) == {"idea", "discussion", "evaluation"} for x in opened["scores"].values()
    )
    agent_started = session.discussions["d1"]
    assert agent_started.initiator == "agents" and agent_started.scope == ["b22"]

    # The moderator asked the user (two quick replies), the answer was recorded,
    # and the discussion then converged with a summary and a one-sentence bubble.
    asked = [e.payload for e in log.of_type("clarification") if e.payload["action"] == "asked"]
    assert len(asked) == 1 and len(asked[0]["options"]) == 2
    answered = [
        e.payload for e in log.of_type("clarification") if e.payload["action"] == "answered"
    ]
    assert answered[0]["answer"] == asked[0]["options"][1]
    assert agent_started.status == "converged"
    assert isinstance(agent_started.summary, IdeaSummary)
    ids = {m.id for m in agent_started.messages}
    assert all(i.message_id in ids for c in agent_started.summary.clusters for i in c.items)
    assert len(sentences(agent_started.bubble)) == 1

    # Every agent turn is one of the five acts in two sentences, and followed the act
    # the moderator's direction asked for.
    turns = [m for m in agent_started.messages if m.kind == "utterance"]
    assert len(turns) == 7
    for message in turns:
        assert len(sentences(message.text)) == 2
        assert message.direction.startswith(message.act)

    # The user-started Discussion converged, took a steering message, and ran again.
    user_started = session.discussions["d2"]
    assert user_started.initiator == "user" and user_started.mode == "discussion"
    assert user_started.status == "converged"
    assert [m.kind for m in user_started.messages].count("post") == 1

    # The user's quick reply picked Sora's idea (the reply states the idea, not Sora); the
    # agent who answered took up that option, and applying its message rewrote the
    # networking line with it: the option the user
    # picked, the agent's addition and its reason, nothing clipped. The line the user wrote
    # (both options) stays in the block's history. The edit went to the trigger again (and
    # stayed below the threshold: the line already gives its reason).
    assert answered[0]["answer"] == "Random tables of five during lunch"
    applied = agent_started.messages[-1]
    assert applied.author == "program" and applied.text.startswith(
        "Then we go with random tables of five during lunch, and I would add research talks."
    )
    assert session.document.block("b22").text == (
        "Networking: random tables of five during lunch, and research talks, "
        "because a clear structure beats a packed agenda"
    )
    application = log.of_type("application")[0].payload
    assert application["message_id"] == applied.id and application["adapted"] is True
    assert application["replaced"] == NETWORKING_EDIT
    op = next(e.payload for e in log.of_type("edit") if e.payload["id"] == application["edit"])
    assert op["source"] == "application" and op["before"] == NETWORKING_EDIT
    assert NETWORKING_EDIT in [e.before for e in session.document.block_history("b22")]
    assert triggers[-1].payload["outcome"] == "below_threshold" and triggers[-1].payload[
        "edits"
    ] == [op["id"]]

    # Memories changed: the user's answer and preference, and each discussion's summary.
    for agent_id, agent in session.agents.items():  # each took part in a discussion
        assert len(agent.memory.entries) > len(memory_before[agent_id])
    budget_memory = [e.content for e in session.agents["budget"].memory.entries]
    assert any(
        c.startswith("User preference: I would rather keep a keynote") for c in budget_memory
    )
    updates = [e.payload for e in log.of_type("memory") if e.payload["updated"]]
    assert updates, "closing d2 a second time rewrites its summary entry by id"

    # The log's measures are what this session did.
    measures = session_measures(log)
    assert measures == {
        "steering_messages": 1,
        "steering_actions": 0,
        "clarifications_answered": 1,
        # 1 (typo) + "TBD" -> the applied line's 17 words on the networking line
        "draft_word_changes": 18,
        "messages_applied": 1,
        "user_discussions": 1,
        "agent_discussions": 1,
        "model_calls": 0,
        "step_errors": 0,
        "steps_lost": 0,
        "idea_mode": 0,
        "discussion_mode": 1,
        "evaluation_mode": 0,
    }

    # The log on disk is the log in memory, and replaying its edits gives the document.
    on_disk = SessionLog.read(tmp_path / "session.jsonl")
    assert [e.model_dump() for e in on_disk.events] == [e.model_dump() for e in log.events]
    assert final_document(on_disk).to_markdown() == session.document.to_markdown()


def test_offline_session_is_deterministic(tmp_path):
    first, _ = run_scenario(tmp_path / "a")
    second, _ = run_scenario(tmp_path / "b")
    assert (tmp_path / "a" / "session.jsonl").read_text() == (
        tmp_path / "b" / "session.jsonl"
    ).read_text()
    assert first.document.to_json() == second.document.to_json()
