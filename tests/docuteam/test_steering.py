"""Point 6: steering (post, participants, focus, mode, stop, answer) and incorporation."""

import asyncio
import json

import pytest
from docuteam_helpers import make_session, networking_question

from hasbench.docuteam.steps import RoleModels
from hasbench.llm import LLMClient, ModelError, register_test_provider


def converged(session, agents=("budget", "program"), mode="idea", scope="b9"):
    d = asyncio.run(session.start_discussion(list(agents), mode, scope))
    assert d.status == "converged"
    return d


def test_a_user_message_reopens_a_closed_discussion_with_a_new_focus():
    session = make_session()
    d = converged(session)
    turns = len(d.messages)
    asyncio.run(session.post(d.id, "Could we ask a sponsor to pay for lunch instead?"))
    focuses = [e.payload["focus"] for e in session.log.of_type("focus")]
    assert len(focuses) == 2 and "sponsor" in focuses[1]
    reply = d.messages[turns + 1]
    assert d.messages[turns].kind == "post" and reply.kind == "utterance"
    assert d.status == "converged"
    assert [e.payload["action"] for e in session.log.of_type("steering")] == ["post"]


def test_a_new_participant_joins_and_speaks_a_removed_one_falls_silent():
    session = make_session()
    d = converged(session)
    session.add_participant(d.id, "attendee")
    session.remove_participant(d.id, "budget")
    asyncio.run(session.post(d.id, "What about the students who do not eat meat?"))
    later = [m.author for m in d.messages if m.kind == "utterance"][4:]
    assert later and later[0] == "attendee" and "budget" not in later
    actions = [e.payload for e in session.log.of_type("steering")]
    assert actions[:2] == [
        {"action": "add_participant", "agent": "attendee"},
        {"action": "remove_participant", "agent": "budget"},
    ]
    with pytest.raises(ValueError, match="2-4 participants"):
        session.remove_participant(d.id, "program")
    for extra in ("budget", "logistics"):
        session.add_participant(d.id, extra)
    with pytest.raises(ValueError, match="listed twice"):
        session.add_participant(d.id, "program")


def test_focus_and_mode_can_be_changed_by_the_user():
    session = make_session()

    async def main():
        d = await session.start_discussion(["budget", "program"], "idea", "b9", run=False)
        session.set_focus(d.id, "Find a lunch under 300,000 KRW.")
        session.set_mode(d.id, "evaluation")
        await session.run_discussion(d.id)
        return d

    d = asyncio.run(main())
    assert d.focus == "Find a lunch under 300,000 KRW." and d.mode == "evaluation"
    assert [m.act for m in d.messages][:2] == ["ISSUE", "ISSUE"]
    assert session.log.of_type("focus")[-1].actor == "user"


def test_answering_a_question_and_stopping_a_waiting_discussion():
    session = make_session()

    async def main():
        d = await networking_question(session)
        with pytest.raises(ValueError):
            await session.answer(d.id, 3)
        await session.answer(d.id, "Thirty people, mostly first-year students.", run=False)
        with pytest.raises(RuntimeError, match="not waiting"):
            await session.answer(d.id, 1)
        return await session.stop(d.id)

    d = asyncio.run(main())
    assert d.status == "stopped" and d.pending is None
    answered = session.log.of_type("clarification")[-1].payload
    assert answered["option"] is None and answered["answer"].startswith("Thirty people")


def test_applying_a_message_after_a_block_inserts_a_fitted_block():
    session = make_session()
    d = converged(session, agents=("attendee", "program"), scope="b22")
    message = next(m for m in d.messages if m.act == "CLAIM")
    op = asyncio.run(session.apply_message(d.id, message.id, "b21", placement="after"))
    assert op.kind == "insert" and op.anchor == "b21" and op.block_type == "list_item"
    block = session.document.block(op.block_id)
    assert session.document.ids().index(block.id) == session.document.ids().index("b21") + 1
    assert not block.text.endswith(".") and "I " not in block.text  # like its list neighbours
    assert session._trigger.batch.pending == [op]  # an ordinary edit: it waits for the trigger


def test_applying_a_summary_item_uses_its_text():
    session = make_session()
    d = converged(session, agents=("attendee", "program"), scope="b22")
    item = d.summary.clusters[0].items[0]
    op = asyncio.run(
        session.apply_message(d.id, item.message_id, "b17", placement="replace", text=item.text)
    )
    assert session.document.block("b17").text == f"14:00 | {item.text[:1].upper()}{item.text[1:]}"
    assert op.before == "14:00 | TBD"


def test_a_failed_rewrite_changes_nothing():
    model = register_test_provider("docuteam-garbled", lambda m, t: {"content": '{"text": ""}'})
    session = make_session(backends=RoleModels(incorporator=model), client=LLMClient(cache=None))
    d = converged(session)
    before = session.document.to_json()
    assert asyncio.run(session.apply_message(d.id, d.messages[0].id, "b9")) is None
    assert session.document.to_json() == before and not session.log.of_type("application")
    assert session.log.of_type("error")[-1].payload["step"] == "incorporate"


def test_a_message_while_the_last_run_is_still_finishing_runs_the_discussion_again():
    empty = json.dumps({"add": [], "update": [], "delete": []})

    def notes(messages, tools):
        if messages[0]["content"].startswith("The last message of a discussion"):
            raise ModelError("bad_request", "no notes on user messages")  # fails at once
        return {"content": empty}  # slow: closing summaries and memories take a while

    slow = register_test_provider("docuteam-slow-notes", notes, delay=0.05)
    session = make_session(backends=RoleModels(summarizer=slow), client=LLMClient(cache=None))

    async def main():
        d = await session.start_discussion(["budget", "program"], "idea", "b9", run=False)
        session.start(d.id)
        stream = session.log.stream()
        async for event in stream:
            if event.type == "status" and event.payload["status"] == "converged":
                break
        await stream.aclose()
        finishing = session._loop.loops[d.id]
        await session.post(d.id, "One more option: a quiz lunch with the other labs?")
        return d, finishing

    d, finishing = asyncio.run(main())
    assert finishing.done()
    kinds = [m.kind for m in d.messages]
    assert kinds[-2:] == ["post", "utterance"] and d.status == "converged"
