"""Point 7: the Baseline condition on the same engine."""

import asyncio

import pytest
from docuteam_helpers import NETWORKING_EDIT, make_session

from hasbench.docuteam import ConditionError, session_measures


def spy_inputs(session):
    seen = []
    original = session._state.steps.run

    async def spy(name, data, discussion=None):
        seen.append((name, data))
        return await original(name, data, discussion)

    session._state.steps.run = spy
    return seen


def test_baseline_has_no_agent_initiated_discussions():
    session = make_session(condition="Baseline")
    session.edit("b22", NETWORKING_EDIT)
    session.clock.advance(5.0)
    assert asyncio.run(session.tick()) is None and asyncio.run(session.flush_edits()) is None
    assert session.log.of_type("edit") and not session.log.of_type("trigger")
    assert not session.discussions


def test_baseline_discussions_come_from_the_side_panel_grounded_in_the_whole_document():
    session = make_session(condition="Baseline")
    seen = spy_inputs(session)
    with pytest.raises(ConditionError, match="whole document"):
        asyncio.run(session.start_discussion(["budget", "program"], "idea", "b9"))
    d = asyncio.run(
        session.start_discussion(["budget", "program"], "idea", comment="Cheaper lunch?")
    )
    assert d.scope is None and d.origin == "side_panel" and d.status == "converged"
    utterance = next(data for name, data in seen if name == "utterance")
    assert utterance.scope.whole_document and len(utterance.scope.blocks) == len(session.document)
    # the same engine: the same steps run in both conditions
    assert {name for name, _ in seen} >= {"focus", "moderator", "utterance", "summary", "bubble"}


def test_docuteam_discussions_are_anchored():
    with pytest.raises(ConditionError, match="anchored"):
        asyncio.run(make_session().start_discussion(["budget", "program"], "idea"))


def test_baseline_allows_chat_steering_but_not_in_document_steering():
    session = make_session(condition="Baseline")
    d = asyncio.run(session.start_discussion(["budget", "program"], "discussion"))
    asyncio.run(session.post(d.id, "I would rather cut the keynote than the lunch."))
    for action in (
        lambda: session.add_participant(d.id, "attendee"),
        lambda: session.remove_participant(d.id, "budget"),
        lambda: session.set_focus(d.id, "Keynote only"),
        lambda: session.set_mode(d.id, "evaluation"),
    ):
        with pytest.raises(ConditionError, match="Baseline does not offer"):
            action()
    assert session_measures(session.log)["steering_messages"] == 1


def test_baseline_applies_text_as_it_is():
    session = make_session(condition="Baseline")
    seen = spy_inputs(session)
    d = asyncio.run(session.start_discussion(["budget", "program"], "idea"))
    message = d.messages[0]
    op = asyncio.run(session.apply_message(d.id, message.id, "b9", placement="after"))
    assert session.document.block(op.block_id).text == message.text
    assert session.log.of_type("application")[0].payload["adapted"] is False
    assert "incorporate" not in {name for name, _ in seen}
    assert session_measures(session.log)["messages_applied"] == 1
