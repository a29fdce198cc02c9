"""Point 2: agent profiles from YAML; memory updates by existing id only; when memory changes."""

import asyncio

import pytest
from docuteam_helpers import SPORTS_DAY, WORKSHOP, make_session

from hasbench.docuteam.agents import (
    AgentProfileError,
    EntryRewrite,
    Memory,
    MemoryUpdate,
    MemoryUpdateError,
    NewEntry,
    load_agents,
)
from hasbench.docuteam.schemas import (
    DiscussionMemoryInput,
    DiscussionMemoryOutput,
    PublicProfile,
    StepOutputError,
)


def test_profiles_load_from_yaml():
    agents = load_agents(WORKSHOP / "agents.yaml")
    assert list(agents) == ["budget", "attendee", "program", "logistics"]
    bora = agents["budget"].profile
    assert (bora.name, bora.role) == ("Bora", "Budget keeper")
    assert bora.stance and bora.expertise == ["budget", "catering costs", "speaker fees"]
    assert len(load_agents(SPORTS_DAY / "agents.yaml")) == 4


def test_starting_memory_comes_from_yaml(tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n"
        "  - {id: a, name: A, role: R, stance: S, expertise: [x],\n"
        "     memory: [{type: preference, content: The user wants a printed programme.}]}\n"
        "  - {id: b, name: B, role: R, stance: S, expertise: [y]}\n"
    )
    agents = load_agents(path)
    assert [(e.id, e.type) for e in agents["a"].memory.entries] == [("m1", "preference")]


A = "  - {id: a, name: A, role: R, stance: S, expertise: [x]}\n"
B = "  - {id: b, name: B, role: R, stance: S, expertise: [y]}\n"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("agents:\n" + A.replace("stance: S, ", "") + B, "agents[0].stance"),
        ("agents:\n" + A, "agents"),
        ("agents:\n" + A + B.replace("id: b", "id: a"), "agents[1].id"),
        ("agents: [", "not valid YAML"),
    ],
)
def test_bad_profiles_name_file_and_field(tmp_path, text, where):
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    with pytest.raises(AgentProfileError) as info:
        load_agents(path)
    assert str(path) in str(info.value) and where in str(info.value)


def test_memory_add_update_delete_by_id():
    memory = Memory()
    first = memory.add("agreement", "Lunch stays under 500,000 KRW")
    second = memory.add("preference", "The user likes small groups")
    change = memory.apply(
        MemoryUpdate(
            add=[NewEntry(type="summary", content="Discussed the keynote")],
            update=[EntryRewrite(id=first.id, content="Lunch stays under 400,000 KRW")],
            delete=[second.id],
        )
    )
    assert [e.content for e in change["updated"]] == ["Lunch stays under 400,000 KRW"]
    assert [e.id for e in change["deleted"]] == [second.id]
    assert [(e.id, e.content) for e in memory.entries] == [
        ("m1", "Lunch stays under 400,000 KRW"),
        ("m3", "Discussed the keynote"),
    ]


def test_memory_refuses_unknown_ids_and_changes_nothing():
    memory = Memory()
    memory.add("agreement", "Keep the poster corner")
    before = memory.snapshot()
    with pytest.raises(MemoryUpdateError, match="m7"):
        memory.apply(MemoryUpdate(add=[NewEntry(type="summary", content="x")], delete=["m7"]))
    assert memory.snapshot() == before


def test_a_model_memory_update_naming_unknown_ids_fails_its_check():
    agent = PublicProfile(id="a", name="A", role="R", stance="S", expertise=["x"])
    data = DiscussionMemoryInput(agent=agent, mode="idea", focus="f", messages=[], entries=[])
    output = DiscussionMemoryOutput(update=[EntryRewrite(id="m1", content="new")])
    with pytest.raises(StepOutputError, match="m1"):
        output.check(data)


def test_memory_changes_after_a_user_message_and_after_a_discussion():
    session = make_session()

    async def main():
        d = await session.start_discussion(["budget", "attendee"], "idea", "b9", run=False)
        await session.post(d.id, "hi", run=False)  # a greeting: nothing to remember
        greeting = len(session.log.of_type("memory"))
        await session.post(d.id, "I prefer a sandwich lunch from the student cafe.", run=False)
        after_post = [e.payload for e in session.log.of_type("memory")][greeting:]
        await session.run_discussion(d.id)
        return greeting, after_post, d

    greeting, after_post, d = asyncio.run(main())
    assert greeting == 0
    assert [(p["agent"], p["cause"]) for p in after_post] == [
        ("budget", "user_message"),
        ("attendee", "user_message"),
    ]
    assert after_post[0]["added"][0]["type"] == "preference"
    assert d.status == "converged"
    closing = [
        e.payload for e in session.log.of_type("memory") if e.payload["cause"] == "discussion"
    ]
    assert {p["agent"] for p in closing} == {"budget", "attendee"}
    assert all(p["added"] or p["updated"] for p in closing)
