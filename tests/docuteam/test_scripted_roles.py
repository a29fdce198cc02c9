"""Issue 28, point 5: the scripted DocuTeam roles read what they are shown and keep it.

Applying a message carries its substance into the document and never loses the user's
text; agents use their memory and the user's answers.
"""

import asyncio

from docuteam_helpers import NETWORKING_EDIT, adapted, make_session, networking_question

from hasbench.docuteam import Document
from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import MemoryUpdate, NewEntry
from hasbench.docuteam.demo import DEMOS, run_demo
from hasbench.docuteam.scripted.reading import idea_of, user_choice
from hasbench.docuteam.words import content_stems, plan_terms

OPTIONS = (
    "random tables of five during lunch",
    "structured speed rounds in the seminar room after the talks",
)


def demo_session():
    session = make_session()
    asyncio.run(run_demo(session, DEMOS["workshop"]))
    return session


def answered(option: int):
    """A session where the agents ask about the networking line and the user picks ``option``."""
    session = make_session()

    async def main():
        d = await networking_question(session)
        await session.answer(d.id, option)
        return d

    return session, asyncio.run(main())


def test_applying_any_message_carries_its_substance_whole():
    session = demo_session()
    messages = [m for d in session.discussions.values() for m in d.messages]
    utterances = [m for m in messages if m.kind == "utterance"]
    assert len(utterances) >= 10
    names = {a.profile.name for a in session.agents.values()}
    for target_id in ("b22", "b17", "b21"):
        target = session.document.block(target_id)
        for message in utterances:
            for placement in ("after", "replace"):
                text = adapted(message, sorted(names), target, placement)
                # Every plan term of the message is in the block text (names are not plan).
                ignore = content_stems(" ".join(names))
                lost = plan_terms(message.text, ignore) - plan_terms(text, ignore)
                assert not lost, (message.text, text)
                assert len(text.split()) > 8  # not a clipped gist
                assert "I would" not in text and "matters to me" not in text


def test_replacing_a_block_keeps_what_it_replaced_in_the_block_history():
    doc = Document.load("data/docuteam/workshop/plan.md")
    doc.update("b22", NETWORKING_EDIT)
    doc.update("b22", "Networking: random tables of five during lunch", source="application")
    history = doc.block_history("b22")
    assert [op.before for op in history] == ["Networking: TBD", NETWORKING_EDIT]
    assert history[-1].source == "application"

    session = demo_session()
    application = session.log.of_type("application")[0].payload
    assert application["placement"] == "replace" and application["replaced"] == NETWORKING_EDIT
    texts = [op.before for op in session.document.block_history("b22")]
    assert NETWORKING_EDIT in texts  # both options the user wrote


def test_a_quick_reply_leads_to_the_option_it_picks():
    for option in (1, 2):
        session, d = answered(option)
        picked = d.messages[-2]
        # The quick reply states the option itself (it reads as an answer without the
        # thread), never who proposed it.
        assert picked.kind == "answer" and picked.text.lower() in OPTIONS
        names = [session.agents[a].profile.name for a in d.participants]
        assert not any(name in picked.text for name in names) and "idea" not in picked.text
        chosen = picked.text.lower()
        other = next(o for o in OPTIONS if o != chosen)
        reply = d.messages[-1]
        assert reply.kind == "utterance" and chosen in reply.text and other not in reply.text
        # The summary puts the reply that took up the choice first; the bubble names it.
        first = d.summary.clusters[0]
        assert first.label == "Chosen by the user" and first.items[0].message_id == reply.id
        assert chosen in d.bubble
        # Every participant remembers the choice by its idea, not by the reply's words.
        for agent_id in d.participants:
            memory = [e.content for e in session.agents[agent_id].memory.entries]
            assert any(c.startswith(f"The user chose {chosen}") for c in memory)
        # Applying the reply in place of the line keeps the picked option, drops the other.
        asyncio.run(session.apply_message(d.id, reply.id, "b22", placement="replace"))
        line = session.document.block("b22").text
        assert line.startswith(f"Networking: {chosen}") and other not in line


def test_agents_propose_what_the_user_asked_for_when_they_remember_it():
    def claims(remember: bool):
        session = make_session()
        if remember:
            preference = "User preference: I would rather keep a keynote but make it a remote talk."
            session.agents["budget"].memory.apply(
                MemoryUpdate(add=[NewEntry(type="preference", content=preference)])
            )
        d = asyncio.run(session.start_discussion(["budget", "program"], "discussion", "b8"))
        return [m.text for m in d.messages if m.author == "budget"]

    remembered, forgotten = claims(True), claims(False)
    assert "remote talk" in remembered[0] and "what you asked for" in remembered[0]
    assert not any("remote talk" in text for text in forgotten)


def test_a_memory_about_another_topic_is_not_used():
    session = make_session()
    chose = "The user chose random tables of five during lunch (asked: Which way for Networking)"
    session.agents["budget"].memory.apply(
        MemoryUpdate(add=[NewEntry(type="summary", content=chose)])
    )
    d = asyncio.run(session.start_discussion(["budget", "program"], "discussion", "b8"))
    assert not any("random tables" in m.text for m in d.messages)


def test_agents_do_not_repeat_an_idea_already_said_in_the_discussion():
    session = demo_session()
    for d in session.discussions.values():
        claims = [m for m in d.messages if m.act == "CLAIM"]
        ideas = [idea_of(m.text) for m in claims]
        assert claims and len(set(ideas)) == len(ideas), [m.text for m in claims]


def test_a_long_user_message_is_taken_up_in_a_two_sentence_reply():
    session = make_session()
    d = asyncio.run(session.start_discussion(["budget", "program"], "discussion", "b8"))
    wish = (
        "Keep a keynote but make it a remote talk from a senior researcher in another city, "
        "with a live question round run by two student volunteers and a short recorded "
        "introduction for people who join late. The money saved goes to a better lunch. "
    )
    asyncio.run(session.post(d.id, wish * 2))
    reply = d.messages[-1]
    assert reply.kind == "utterance" and len(s.sentences(reply.text)) == 2
    assert "remote talk from a senior researcher" in reply.text and len(reply.text) <= 400
    assert not session.log.of_type("error")


def test_a_quick_reply_cut_to_fit_still_leads_to_the_whole_option():
    said = "I would go with a long guided tour of the three labs with a stop at each poster."
    messages = [
        s.Message(id="m1", author="kai", author_name="Kai", kind="utterance", act="CLAIM",
                  text=f"{said} It matters because people meet on the way."),
        s.Message(id="m2", author="user", author_name="You", kind="answer",
                  text="A long guided tour of the three labs"),
    ]  # fmt: skip
    whole = "long guided tour of the three labs with a stop at each poster"
    assert user_choice(messages) == whole


def test_a_new_agent_added_to_a_concluded_discussion_speaks_from_its_own_angle():
    session, d = answered(2)
    assert d.status == "converged"
    before = [m.text for m in d.messages]
    kai = session.add_agent(
        "Kai", "Sponsor liaison", "Outside money can pay for what we cannot.", ["sponsors", "firms"]
    )
    session.add_participant(d.id, kai.id)
    asyncio.run(session.run_discussion(d.id))
    assert not session.log.of_type("error")  # no turn was refused
    new = [m for m in d.messages[len(before) :] if m.kind == "utterance"]
    assert new and new[0].author == kai.id
    # It takes up the option the user picked before it joined, never the other one.
    chosen = next(m.text.lower() for m in d.messages if m.kind == "answer")
    other = next(o for o in OPTIONS if o != chosen)
    assert chosen in new[0].text
    for message in (m for m in new if m.author == kai.id):
        # Its own expertise as the angle and its own stance as the reason, in new words.
        assert other not in message.text
        assert "sponsors" in message.text or "firms" in message.text
        assert "outside money can pay for what we cannot" in message.text
        assert s.repeats(message.text, before) is None
