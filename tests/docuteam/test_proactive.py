"""Point 5: agent-initiated discussions after edits (debounce, triviality, scores, damping)."""

import asyncio
import json

from docuteam_helpers import NETWORKING_EDIT, WORKSHOP, make_session

from hasbench.docuteam import Session, SessionConfig
from hasbench.docuteam.steps import RoleModels
from hasbench.docuteam.timing import EditBatcher
from hasbench.llm import LLMClient, register_test_provider


def test_the_batcher_waits_for_a_quiet_period():
    batcher = EditBatcher(debounce=2.0)
    assert not batcher.due(10.0)
    batcher.add("e1", at=0.0)
    batcher.add("e2", at=1.5)
    assert not batcher.due(3.0) and batcher.due(3.5)
    assert batcher.take() == ["e1", "e2"] and not batcher.due(100.0)


def test_edits_inside_the_debounce_window_form_one_batch():
    session = make_session()

    async def main():
        session.edit("b22", "Networking: TBD?")
        session.clock.advance(1.9)
        session.edit("b22", NETWORKING_EDIT)
        session.clock.advance(1.9)
        early = await session.tick()
        session.clock.advance(0.1)
        return early, await session.tick()

    early, decision = asyncio.run(main())
    assert early is None
    assert decision.edits == ["e1", "e2"] and decision.outcome == "opened"


def test_a_trivial_edit_opens_nothing():
    session = make_session()
    session.edit("b13", "09:30 | Registration and coffee")
    decision = asyncio.run(session.flush_edits())
    assert decision.outcome == "trivial" and not session.discussions
    assert session.log.of_type("trigger")[0].payload["outcome"] == "trivial"


def test_a_substantive_edit_is_interpreted_scored_and_opens_a_discussion_on_the_region():
    session = make_session(auto_run=False)
    session.edit("b22", NETWORKING_EDIT)
    decision = asyncio.run(session.flush_edits())
    assert decision.goal and decision.interpretation
    assert [s["id"] for s in decision.selected] == ["program", "logistics", "attendee"]
    for scored in decision.scores.values():
        assert all(0 <= v <= 1 for v in scored["scores"].values()) and scored["reaction"]
        assert len(scored["reaction"]) <= 40
    assert decision.means == {"idea": 0.9, "discussion": 0.85, "evaluation": 0.8}
    d = session.discussions[decision.discussion]
    assert (d.mode, d.scope, d.initiator, d.status) == ("idea", ["b22"], "agents", "open")
    assert d.participants == ["program", "logistics", "attendee"]
    logged = session.log.of_type("trigger")[0].payload
    assert logged["scores"] == decision.scores and logged["threshold"] == 0.75


def test_the_threshold_is_a_parameter():
    session = make_session(threshold=0.95)
    session.edit("b22", NETWORKING_EDIT)
    decision = asyncio.run(session.flush_edits())
    assert decision.outcome == "below_threshold" and decision.means["idea"] == 0.9
    assert not session.discussions


def test_an_open_discussion_nearby_damps_new_ones():
    session = make_session(auto_run=False)

    async def main():
        session.edit("b22", NETWORKING_EDIT)
        first = await session.flush_edits()
        session.edit("b21", "Poster corner during the breaks, or a poster walk with prizes?")
        near = await session.flush_edits()
        session.edit("b17", "14:00 | Workshop tracks, or open space sessions?")
        far = await session.flush_edits()
        return first, near, far

    first, near, far = asyncio.run(main())
    assert first.outcome == "opened"
    assert near.nearby == [first.discussion] and near.outcome == "below_threshold"
    assert all(v <= 0.2 for x in near.scores.values() for v in x["scores"].values())
    assert far.nearby == [] and far.outcome == "opened"


def test_the_engine_caps_the_mode_of_an_open_nearby_discussion():
    scores = {"idea": 0.9, "discussion": 0.8, "evaluation": 0.1, "reaction": "Lunch again!"}
    model = register_test_provider("docuteam-eager", lambda m, t: {"content": json.dumps(scores)})
    session = make_session(
        auto_run=False, backends=RoleModels(agents=model), client=LLMClient(cache=None)
    )

    async def main():
        await session.start_discussion(["budget", "attendee"], "idea", "b22", run=False)
        session.edit("b21", "Poster corner during the breaks, or a poster walk with prizes?")
        return await session.flush_edits()

    decision = asyncio.run(main())
    for scored in decision.scores.values():
        assert scored["raw"]["idea"] == 0.9 and scored["scores"]["idea"] == 0.2
        assert scored["scores"]["discussion"] == 0.8
    assert decision.mode == "discussion" and decision.outcome == "opened"


def test_a_failed_step_is_a_failed_decision_not_a_guess():
    model = register_test_provider("docuteam-mute", lambda m, t: {"content": ""})
    session = make_session(backends=RoleModels(trigger=model), client=LLMClient(cache=None))
    session.edit("b22", NETWORKING_EDIT)
    decision = asyncio.run(session.flush_edits())
    assert decision.outcome == "failed" and decision.reason == "read_edit"
    assert session.log.of_type("error")[0].payload["step"] == "read_edit"
    assert not session.discussions


def test_watching_edits_triggers_after_the_debounce_in_real_time():
    session = Session.from_folder(WORKSHOP, config=SessionConfig(debounce=0.05, auto_run=False))

    async def main():
        session.watch_edits()
        session.edit("b22", "Networking: TBD?")
        await asyncio.sleep(0.01)
        session.edit("b22", NETWORKING_EDIT)
        await asyncio.sleep(0.15)
        await session.settle()

    asyncio.run(main())
    triggers = session.log.of_type("trigger")
    assert len(triggers) == 1 and triggers[0].payload["edits"] == ["e1", "e2"]
    assert triggers[0].t >= 0.05
