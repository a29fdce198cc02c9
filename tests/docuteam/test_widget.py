"""Issue 17, point 1 and issue 30, point 3: the DocuTeam UI drives a live session.

The widget is driven the way its page drives it (the JSON actions the page sends, through
:meth:`DocuTeamWidget.act`) on the event loop, with scripted backends and a short
debounce on the system clock, as in a notebook; what the page shows is its ``state``.
"""

import asyncio
import json

import pytest
from docuteam_helpers import NETWORKING_EDIT, WORKSHOP

from hasbench.docuteam import Session, SessionConfig, SystemClock
from hasbench.docuteam.discussion import summary_entries
from hasbench.docuteam.steps import RoleModels
from hasbench.docuteam.widget import DocuTeamWidget, session_widget
from hasbench.llm import LLMClient, register_test_provider


def live(condition="DocuTeam", backends=None, **config) -> DocuTeamWidget:
    config = {"condition": condition, "debounce": 0.05, "task_name": "workshop", **config}
    session = Session.from_folder(
        WORKSHOP,
        config=SessionConfig(**config),
        backends=backends or RoleModels(),
        client=LLMClient(cache=None) if backends else None,
        clock=SystemClock(),
    )
    return DocuTeamWidget(session)


def card(w: DocuTeamWidget, discussion_id: str) -> dict:
    return next(d for d in w.state["discussions"] if d["id"] == discussion_id)


def ok(w: DocuTeamWidget, **action) -> None:
    assert w.act(action) is None


def test_an_edit_opens_a_discussion_beside_it_with_a_notice_and_reactions():
    async def main():
        w = live()
        ok(w, do="edit", block="b22", text=NETWORKING_EDIT)
        reading = w.controller.state()["beside"]["b22"]
        await w.settle()
        return w, reading

    w, reading = asyncio.run(main())
    log = w.session.log
    assert log.of_type("edit")[-1].payload["after"] == NETWORKING_EDIT
    assert reading == {"reading": True}
    decision = log.of_type("trigger")[-1].payload
    assert decision["outcome"] == "opened" and decision["discussion"] == "d1"
    d = w.session.discussions["d1"]
    # The card sits beside the edited block: participants, mode, the question (red border).
    shown = card(w, "d1")
    assert shown["anchor"] == "b22" and shown["initiator"] == "agents"
    assert shown["participants"] == d.participants and shown["mode_label"] == "Idea"
    assert shown["question"] == d.pending.question and shown["options"] == d.pending.options
    assert shown["unread"] == len(d.messages) - 0  # nothing read yet
    # Each scoring agent's short reaction and the notice sit beside the edited block.
    beside = w.state["beside"]["b22"]
    reactions = [x["reaction"] for x in decision["scores"].values()]
    assert [r["text"] for r in beside["reactions"]] == reactions
    assert beside["notices"] == ["d1"] and "reading" not in beside
    assert {a["id"] for a in w.state["agents"]} >= set(d.participants)


def test_opening_answering_and_applying_from_the_thread():
    async def main():
        w = live()
        ok(w, do="edit", block="b22", text=NETWORKING_EDIT)
        await w.settle()
        ok(w, do="open", discussion="d1")
        w.refresh()
        waiting = dict(w.state["thread"]), card(w, "d1")
        ok(w, do="answer", discussion="d1", option=2)
        await w.settle()
        d = w.session.discussions["d1"]
        last = [m for m in d.messages if m.kind == "utterance"][-1]
        ok(w, do="apply", discussion="d1", message=last.id, target="b22", placement="replace")
        await w.settle()
        return w, waiting, last

    w, (thread, waiting_card), last = asyncio.run(main())
    d = w.session.discussions["d1"]
    log = w.session.log
    asked = [e.payload for e in log.of_type("clarification") if e.payload["action"] == "asked"]
    # The open thread shows every message with its act; the summary links to messages;
    # the question with its two quick replies was shown while the discussion waited.
    assert waiting_card["options"] == asked[0]["options"] and waiting_card["unread"] == 0
    assert thread["messages"][-1]["kind"] == "question"
    assert thread["messages"][-1]["text"] == asked[0]["question"]
    assert all(m["act"] for m in thread["messages"] if m["kind"] == "utterance")
    assert thread["target"] == "b22"
    entries = summary_entries(d.summary)
    assert entries and [e["message_id"] for e in w.state["thread"]["summary"]] == [
        e.message_id for e in entries
    ]
    # The quick reply answered the question; the discussion went on and concluded.
    answered = [
        e.payload for e in log.of_type("clarification") if e.payload["action"] == "answered"
    ]
    assert answered[0]["option"] == 2 and answered[0]["answer"] == asked[0]["options"][1]
    shown = card(w, "d1")
    assert d.status == "converged" and shown["status_label"] == "concluded"
    assert shown["question"] is None and not shown["active"]
    # Applying the message rewrote the block, and the page's document shows the new text.
    application = log.of_type("application")[-1].payload
    assert application["message_id"] == last.id and application["target"] == "b22"
    assert w.session.document.block("b22").text == application["text"] != NETWORKING_EDIT
    blocks = {b["id"]: b["text"] for b in w.state["blocks"]}
    assert blocks["b22"] == application["text"]


def test_answering_in_the_text_box_and_the_card_showing_the_bubble_summary():
    async def main():
        w = live()
        ok(w, do="edit", block="b22", text=NETWORKING_EDIT)
        await w.settle()
        ok(w, do="open", discussion="d1")
        w.refresh()
        asking = card(w, "d1")
        refused = w.act({"do": "answer", "discussion": "d1", "text": "   "})
        ok(w, do="answer", discussion="d1", text="  About forty people, mostly students.  ")
        await w.settle()
        return w, asking, refused

    w, asking, refused = asyncio.run(main())
    d = w.session.discussions["d1"]
    answered = [
        e.payload
        for e in w.session.log.of_type("clarification")
        if e.payload["action"] == "answered"
    ]
    assert refused == "choose an answer or write one"
    assert answered == [
        {
            "action": "answered",
            "question": answered[0]["question"],
            "answer": "About forty people, mostly students.",
            "option": None,
        }
    ]
    assert answered[0]["question"] == asking["question"]
    said = w.state["thread"]["messages"]
    assert any(m["kind"] == "answer" and m["text"].startswith("About forty") for m in said)
    # Once the discussion moves on, its card beside the block carries the bubble summary.
    shown = card(w, "d1")
    assert d.status == "converged" and d.bubble and shown["bubble"] == d.bubble
    assert shown["question"] is None


def test_starting_a_discussion_on_ticked_blocks_with_chosen_mode_and_agents():
    async def main():
        w = live()
        refused = w.act({"do": "start", "agents": ["budget"], "mode": "idea", "blocks": []})
        unscoped = w.act({"do": "start", "agents": ["budget", "program"], "mode": "idea"})
        ok(
            w,
            do="start",
            agents=["budget", "program"],
            mode="discussion",
            blocks=["b9", "b8"],
            comment="Where should the cuts come from?",
        )
        await w.settle()
        return w, refused, unscoped

    w, refused, unscoped = asyncio.run(main())
    assert "choose 2 to 4 agents" in refused and "tick the blocks" in unscoped
    (d,) = w.session.discussions.values()
    assert d.initiator == "user" and d.mode == "discussion" and d.scope == ["b8", "b9"]
    assert d.participants == ["budget", "program"] and d.comment.startswith("Where should")
    assert w.state["thread"]["id"] == d.id and card(w, d.id)["anchor"] == "b8"
    assert card(w, d.id)["initiator"] == "user" and card(w, d.id)["focus"] == d.focus


def test_steering_a_discussion_from_the_thread():
    async def main():
        w = live()
        ok(w, do="start", agents=["budget", "program"], mode="idea", blocks=["b9"])
        await w.settle()
        ok(w, do="post", discussion="d1", text="Keep a keynote, but make it remote.")
        await w.settle()
        ok(w, do="add_participant", discussion="d1", agent="attendee")
        ok(w, do="remove_participant", discussion="d1", agent="budget")
        ok(w, do="set_focus", discussion="d1", focus="Which remote keynote fits the budget?")
        ok(w, do="set_mode", discussion="d1", mode="evaluation")
        await w.settle()
        ok(w, do="stop", discussion="d1")  # nothing to stop: the discussion has concluded
        await w.settle()
        return w

    w = asyncio.run(main())
    d = w.session.discussions["d1"]
    steering = [(e.payload["action"], e.discussion) for e in w.session.log.of_type("steering")]
    assert steering == [
        (action, "d1")
        for action in (
            "post",
            "add_participant",
            "remove_participant",
            "set_focus",
            "set_mode",
        )
    ]
    assert d.participants == ["program", "attendee"] and d.mode == "evaluation"
    assert d.focus == "Which remote keynote fits the budget?" and d.status == "converged"
    said = w.state["thread"]["messages"]
    assert any(m["kind"] == "post" and m["text"].startswith("Keep a keynote") for m in said)
    assert card(w, "d1")["participants"] == ["program", "attendee"]


def test_an_agent_added_to_a_concluded_discussion_speaks():
    async def main():
        w = live()
        ok(w, do="start", agents=["budget", "program"], mode="idea", blocks=["b9"])
        await w.settle()
        before = len(w.session.discussions["d1"].messages)
        status = w.session.discussions["d1"].status
        ok(w, do="add_participant", discussion="d1", agent="attendee")
        await w.settle()
        return w, before, status

    w, before, status = asyncio.run(main())
    d = w.session.discussions["d1"]
    assert status == "converged" and d.status == "converged"
    later = [m for m in d.messages[before:] if m.kind == "utterance"]
    assert later and later[0].author == "attendee"
    reasons = [e.payload["reason"] for e in w.session.log.of_type("status")]
    assert "reopened: Mina joined" in reasons


SLOW = 0.15


def slow_moderator(messages, tools):
    """A moderator that takes a while and always lets Bora speak (focus too is its step)."""
    if messages[0]["content"].startswith("You set the focus"):
        return {"content": json.dumps({"focus": "Options for the afternoon slot."})}
    return {
        "content": json.dumps(
            {
                "reasoning": "Bora goes on.",
                "dialog_state": {},
                "decision": "speak",
                "next_speaker_id": "budget",
                "speaking_direction": "CLAIM: add one more option.",
            }
        )
    }


def test_a_running_discussion_shows_thinking_leaves_the_widget_usable_and_stops():
    model = register_test_provider("docuteam-widget-slow", slow_moderator, delay=SLOW)

    async def main():
        w = live(backends=RoleModels(moderator=model))
        ok(w, do="start", agents=["budget", "program"], mode="idea", blocks=["b19"])
        while w.session.discussions.get("d1") is None or not w.session.discussions["d1"].messages:
            await asyncio.sleep(0.01)
        await asyncio.sleep(SLOW / 2)
        thinking = w.controller.state()
        ok(w, do="edit", block="b13", text="09:30 | Registration and coffee")
        edited_while_running = w.session.discussions["d1"].status == "running"
        ok(w, do="stop", discussion="d1")
        await w.settle()
        return w, thinking, edited_while_running

    w, thinking, edited_while_running = asyncio.run(main())
    shown = next(d for d in thinking["discussions"] if d["id"] == "d1")
    assert shown["status_label"] == "thinking" and shown["next_speaker"] == "budget"
    assert shown["active"] and edited_while_running
    assert w.session.document.block("b13").text == "09:30 | Registration and coffee"
    d = w.session.discussions["d1"]
    assert d.status == "stopped" and card(w, "d1")["status_label"] == "stopped"
    assert not card(w, "d1")["active"]
    assert d.agent_turns < w.session.config.turn_budget


def test_the_baseline_view_is_a_side_panel_chat():
    async def main():
        w = live("Baseline")
        ok(w, do="edit", block="b22", text=NETWORKING_EDIT)
        await asyncio.sleep(0.1)
        ok(w, do="start", agents=["attendee", "program"], mode="idea")
        await w.settle()
        d = w.session.discussions["d1"]
        if d.status == "waiting_for_user":
            ok(w, do="answer", discussion="d1", text="Small guided groups, please.")
            await w.settle()
        said = [m for m in d.messages if m.kind == "utterance"][0]
        ok(w, do="apply", discussion="d1", message=said.id, target="b19", placement="replace")
        refused = w.act({"do": "add_participant", "discussion": "d1", "agent": "budget"})
        await w.settle()
        return w, said, refused

    w, said, refused = asyncio.run(main())
    assert w.state["baseline"] and w.state["beside"] == {}
    assert "Baseline does not offer" in refused  # no in-document steering
    assert not w.session.log.of_type("trigger")  # no proactive agents
    (d,) = w.session.discussions.values()
    assert d.scope is None and d.origin == "side_panel" and w.state["thread"]["id"] == d.id
    assert card(w, d.id)["anchor"] is None and card(w, d.id)["scope"] is None
    application = w.session.log.of_type("application")[-1].payload
    assert application["adapted"] is False and application["text"] == said.text
    assert {b["id"]: b["text"] for b in w.state["blocks"]}["b19"] == said.text


def test_adding_and_clearing_blocks_from_the_document():
    async def main():
        w = live()
        ok(w, do="insert", after="b24")
        new = w.session.document.ids()[w.session.document.ids().index("b24") + 1]
        ok(w, do="edit", block=new, text="Book a photographer for the poster corner")
        ok(w, do="edit", block=new, text="")
        await w.settle()
        return w, new

    w, new = asyncio.run(main())
    kinds = [e.payload["kind"] for e in w.session.log.of_type("edit")]
    assert kinds == ["insert", "update", "delete"]
    assert new not in [b["id"] for b in w.state["blocks"]]
    assert [b["id"] for b in w.state["blocks"]] == w.session.document.ids()


def test_agents_can_be_added_and_edited_and_join_discussions():
    async def main():
        w = live()
        refused = w.act({"do": "add_agent", "name": "Kai", "role": "", "stance": "x"})
        ok(
            w,
            do="add_agent",
            name="Kai",
            role="Sponsor liaison",
            stance="Outside money can pay for what the budget cannot.",
            expertise="sponsors, companies, funding",
        )
        ok(
            w,
            do="edit_agent",
            agent="kai",
            name="Kai",
            role="Sponsor liaison",
            stance="Sponsors pay for lunch.",
            expertise=["sponsors", "lunch"],
        )
        ok(w, do="start", agents=["kai", "budget"], mode="idea", blocks=["b9"])
        await w.settle()
        return w, refused

    w, refused = asyncio.run(main())
    assert refused == "an agent needs a role, expertise"
    kai = next(a for a in w.state["agents"] if a["id"] == "kai")
    assert kai["stance"] == "Sponsors pay for lunch." and kai["expertise"] == ["sponsors", "lunch"]
    events = [e.payload for e in w.session.log.of_type("agent")]
    assert [e["action"] for e in events] == ["added", "edited"]
    assert events[1]["before"]["stance"].startswith("Outside money")
    d = w.session.discussions["d1"]
    assert "kai" in [m.author for m in d.messages if m.kind == "utterance"]


def test_threads_with_new_messages_are_unread_until_opened():
    async def main():
        w = live()
        ok(w, do="start", agents=["budget", "program"], mode="idea", blocks=["b9"])
        await w.settle()
        ok(w, do="close")
        ok(w, do="edit", block="b22", text=NETWORKING_EDIT)  # the agents open d2
        await w.settle()
        unread = card(w, "d2")["unread"], card(w, "d1")["unread"]
        ok(w, do="open", discussion="d2")
        w.refresh()
        return w, unread

    w, (unread_d2, unread_d1) = asyncio.run(main())
    assert unread_d2 == len(w.session.discussions["d2"].messages) > 0 and unread_d1 == 0
    assert card(w, "d2")["unread"] == 0 and "notices" not in w.state["beside"].get("b22", {})


def test_every_summary_item_can_be_applied_including_points_in_dispute():
    async def main():
        w = live()
        ok(w, do="start", agents=["budget", "program", "attendee"], mode="discussion",
           blocks=["b9"])  # fmt: skip
        await w.settle()
        summary = w.state["thread"]["summary"]
        disputed = next(e for e in summary if e["section"] == "In dispute")
        ok(w, do="apply", discussion="d1", message=disputed["message_id"], target="b9",
           placement="after", text=disputed["text"])  # fmt: skip
        await w.settle()
        return w, disputed

    w, disputed = asyncio.run(main())
    application = w.session.log.of_type("application")[-1].payload
    assert application["message_id"] == disputed["message_id"]
    assert application["snippet"] == disputed["text"]


def test_session_widget_opens_a_task_by_name_and_names_the_known_ones():
    w = session_widget("sports_day", "Baseline")
    assert w.session.config.task_name == "sports_day" and w.baseline
    assert w.session.backends == RoleModels()
    with pytest.raises(FileNotFoundError, match="known: sports_day, workshop"):
        session_widget("picnic")
