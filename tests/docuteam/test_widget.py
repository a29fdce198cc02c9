"""Issue 17, point 1: the DocuTeam widget drives a live session and shows what it logs.

The widget is driven the way a browser drives it (setting a textarea's value, clicking
buttons) on the event loop, with scripted backends and a short debounce on the system
clock, as in a notebook.
"""

import asyncio
import html
import json

import ipywidgets as widgets
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


def classes(widget: widgets.Widget) -> list[str]:
    return list(widget._dom_classes)


def find(root: widgets.Widget, css: str) -> list[widgets.Widget]:
    """Every widget under ``root`` with a CSS class, depth first."""
    found = [root] if css in getattr(root, "_dom_classes", ()) else []
    for child in getattr(root, "children", ()):
        found += find(child, css)
    return found


def text_of(root: widgets.Widget) -> str:
    """The HTML of every HTML widget under ``root``."""
    own = root.value if isinstance(root, widgets.HTML) else ""
    return own + "".join(text_of(c) for c in getattr(root, "children", ()))


def test_an_edit_opens_a_discussion_beside_it_with_a_notice_and_reactions():
    async def main():
        w = live()
        w.document_pane.rows["b22"].text.value = NETWORKING_EDIT
        reading = text_of(w.document_pane.rows["b22"].anchor)
        await w.settle()
        return w, reading

    w, reading = asyncio.run(main())
    log = w.session.log
    assert log.of_type("edit")[-1].payload["after"] == NETWORKING_EDIT
    assert "reading this edit" in reading
    decision = log.of_type("trigger")[-1].payload
    assert decision["outcome"] == "opened" and decision["discussion"] == "d1"
    d = w.session.discussions["d1"]
    # The card sits beside the edited block: participants, mode, the question (red border).
    card = w.cards["d1"]
    assert card.box in w.document_pane.rows["b22"].anchor.children
    assert "hb-dt-agent-initiated" in classes(card.box) and "hb-dt-asks" in classes(card.box)
    for agent in d.participants:
        assert w.session.agents[agent].profile.name in card.html.value
    assert "Idea" in card.html.value and d.pending.question in card.html.value
    # Each scoring agent's short reaction shows beside the block and in the notice.
    reactions = [x["reaction"] for x in decision["scores"].values()]
    notice = text_of(w.notices)
    assert "d1" in notice and "Idea mode" in notice
    for reaction in reactions:
        assert reaction in text_of(w.document_pane.rows["b22"].anchor) and reaction in notice
    assert "reading this edit" not in text_of(w.document_pane.rows["b22"].anchor)


def test_opening_answering_and_applying_from_the_thread():
    async def main():
        w = live()
        w.document_pane.rows["b22"].text.value = NETWORKING_EDIT
        await w.settle()
        w.cards["d1"].open.click()
        d = w.session.discussions["d1"]
        shown = {
            "waiting": list(d.messages),
            "messages": text_of(w.thread.message_rows),
            "summary": text_of(w.thread.summary_rows),
            "clarification": w.thread.clarification.layout.display,
            "replies": [b.description for b in w.thread.reply_buttons],
        }
        w.thread.reply_buttons[1].click()
        await w.settle()
        last = [m for m in d.messages if m.kind == "utterance"][-1]
        w.thread.target.value = "b22"
        w.thread.placement.value = "replace"
        (apply,) = find(w.thread.message_rows, f"hb-dt-apply-{last.id}")
        apply.click()
        await w.settle()
        return w, shown, last

    w, shown, last = asyncio.run(main())
    d = w.session.discussions["d1"]
    log = w.session.log
    # Every message with its act; the summary links to messages; the question with its
    # two quick replies was shown while the discussion waited.
    asked = [e.payload for e in log.of_type("clarification") if e.payload["action"] == "asked"]
    assert shown["clarification"] is None and shown["replies"] == asked[0]["options"]
    assert shown["waiting"][-1].kind == "question"
    assert asked[0]["question"] in shown["messages"]
    for m in shown["waiting"]:
        assert f"id='hb-dt-{m.id}'" in shown["messages"]
        if m.kind == "utterance":
            assert f"hb-dt-act-{m.act}'>{m.act}</span>" in shown["messages"]
    assert all(f"id='hb-dt-{m.id}'" in text_of(w.thread.message_rows) for m in d.messages)
    utterances = [m for m in d.messages if m.kind == "utterance"]
    assert len(find(w.thread.message_rows, "hb-dt-apply")) == len(utterances)
    entries = summary_entries(d.summary)
    assert entries
    for entry in entries:
        assert f"href='#hb-dt-{entry.message_id}'" in text_of(w.thread.summary_rows)
    # The quick reply answered the question; the discussion went on and concluded.
    answered = [
        e.payload for e in log.of_type("clarification") if e.payload["action"] == "answered"
    ]
    assert answered[0]["option"] == 2 and answered[0]["answer"] == asked[0]["options"][1]
    assert d.status == "converged" and "concluded" in w.thread.activity.value
    assert w.thread.clarification.layout.display == "none" and w.thread.stop_button.disabled
    assert "hb-dt-asks" not in classes(w.cards["d1"].box)
    # Applying the message rewrote the block, and its textarea shows the new text.
    application = log.of_type("application")[-1].payload
    assert application["message_id"] == last.id and application["target"] == "b22"
    assert w.session.document.block("b22").text == application["text"] != NETWORKING_EDIT
    assert w.document_pane.rows["b22"].text.value == application["text"]


def test_answering_in_the_text_box_and_the_card_showing_the_bubble_summary():
    async def main():
        w = live()
        w.document_pane.rows["b22"].text.value = NETWORKING_EDIT
        await w.settle()
        w.cards["d1"].open.click()
        asking = w.cards["d1"].html.value
        w.thread.reply_text.value = "  About forty people, mostly students.  "
        w.thread.reply_send.click()
        await w.settle()
        return w, asking

    w, asking = asyncio.run(main())
    d = w.session.discussions["d1"]
    answered = [
        e.payload
        for e in w.session.log.of_type("clarification")
        if e.payload["action"] == "answered"
    ]
    assert answered == [
        {
            "action": "answered",
            "question": answered[0]["question"],
            "answer": "About forty people, mostly students.",
            "option": None,
        }
    ]
    assert answered[0]["question"] in asking and w.thread.reply_text.value == ""
    assert "You answered" in text_of(w.thread.message_rows)
    assert "About forty people" in text_of(w.thread.message_rows)
    # Once the discussion moves on, its card beside the block carries the bubble summary.
    assert d.status == "converged" and d.bubble
    card = w.cards["d1"].html.value
    assert html.escape(d.bubble) in card and "The agents ask you" not in card
    for agent in d.participants:
        assert w.session.agents[agent].profile.name in card


def test_starting_a_discussion_on_ticked_blocks_with_chosen_mode_and_agents():
    async def main():
        w = live()
        w.side.agent_boxes["budget"].value = True
        w.side.start_button.click()  # one agent: refused with a message
        refused = w.errors.value
        w.side.agent_boxes["program"].value = True
        w.side.start_button.click()  # no blocks ticked: refused
        unscoped = w.errors.value
        w.document_pane.rows["b8"].select.value = True
        w.document_pane.rows["b9"].select.value = True
        w.side.mode.value = "discussion"
        w.side.comment.value = "Where should the cuts come from?"
        w.side.start_button.click()
        await w.settle()
        return w, refused, unscoped

    w, refused, unscoped = asyncio.run(main())
    assert "choose 2 to 4 agents" in refused and "tick the blocks" in unscoped
    (d,) = w.session.discussions.values()
    assert d.initiator == "user" and d.mode == "discussion" and d.scope == ["b8", "b9"]
    assert d.participants == ["budget", "program"] and d.comment.startswith("Where should")
    assert (
        w.thread.opened == d.id and w.cards[d.id].box in w.document_pane.rows["b8"].anchor.children
    )
    assert "hb-dt-agent-initiated" not in classes(w.cards[d.id].box)
    assert not any(r.select.value for r in w.document_pane.rows.values())  # the form was cleared
    assert d.focus in w.thread.thread_header.value


def test_steering_a_discussion_from_the_thread():
    async def main():
        w = live()
        w.document_pane.rows["b9"].select.value = True
        for agent in ("budget", "program"):
            w.side.agent_boxes[agent].value = True
        w.side.start_button.click()
        await w.settle()
        w.thread.post_text.value = "Keep a keynote, but make it remote."
        w.thread.post_button.click()
        await w.settle()
        w.thread.add_agent.value = "attendee"
        w.thread.add_button.click()
        w.thread.remove_agent.value = "budget"
        w.thread.remove_button.click()
        w.thread.focus_text.value = "Which remote keynote fits the budget?"
        w.thread.focus_button.click()
        w.thread.mode_switch.value = "evaluation"
        w.thread.mode_button.click()
        w.thread.stop_button.click()  # disabled: the discussion has concluded
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
    assert "You" in text_of(w.thread.message_rows) and "Keep a keynote" in text_of(
        w.thread.message_rows
    )
    assert "Mina" in w.thread.thread_header.value and "Bora" not in w.thread.thread_header.value
    assert [label for label, _ in w.thread.add_agent.options] == ["Bora", "Sora"]


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
        w.document_pane.rows["b19"].select.value = True
        for agent in ("budget", "program"):
            w.side.agent_boxes[agent].value = True
        w.side.start_button.click()
        while w.session.discussions.get("d1") is None or not w.session.discussions["d1"].messages:
            await asyncio.sleep(0.01)
        thinking = w.thread.activity.value
        card = w.cards["d1"].html.value
        stop_enabled = not w.thread.stop_button.disabled
        w.document_pane.rows[
            "b13"
        ].text.value = "09:30 | Registration and coffee"  # the user keeps working
        edited_while_running = w.session.discussions["d1"].status == "running"
        w.thread.stop_button.click()
        await w.settle()
        return w, thinking, card, stop_enabled, edited_while_running

    w, thinking, card, stop_enabled, edited_while_running = asyncio.run(main())
    assert "thinking" in thinking and "Bora is preparing to speak" in thinking
    assert "thinking" in card and stop_enabled and edited_while_running
    assert w.session.document.block("b13").text == "09:30 | Registration and coffee"
    d = w.session.discussions["d1"]
    assert (
        d.status == "stopped"
        and "stopped" in w.thread.activity.value
        and w.thread.stop_button.disabled
    )
    assert d.agent_turns < w.session.config.turn_budget


def test_the_baseline_view_is_a_side_panel_chat():
    async def main():
        w = live("Baseline")
        w.document_pane.rows["b22"].text.value = NETWORKING_EDIT
        await asyncio.sleep(0.1)
        for agent in ("attendee", "program"):
            w.side.agent_boxes[agent].value = True
        w.side.start_button.click()
        await w.settle()
        d = w.session.discussions["d1"]
        if d.status == "waiting_for_user":
            w.thread.reply_text.value = "Small guided groups, please."
            w.thread.reply_send.click()
            await w.settle()
        said = [m for m in d.messages if m.kind == "utterance"][0]
        w.thread.target.value = "b19"
        w.thread.placement.value = "replace"
        find(w.thread.message_rows, f"hb-dt-apply-{said.id}")[0].click()
        await w.settle()
        return w, said

    w, said = asyncio.run(main())
    assert "hb-dt-baseline" in classes(w)
    assert all(r.select.layout.display == "none" for r in w.document_pane.rows.values())
    assert all(r.anchor.layout.display == "none" for r in w.document_pane.rows.values())
    assert not hasattr(w, "add_agent")  # no in-document steering
    assert not w.session.log.of_type("trigger")  # no proactive agents
    (d,) = w.session.discussions.values()
    assert d.scope is None and d.origin == "side_panel" and w.thread.opened == d.id
    assert "the whole document" in w.thread.thread_header.value
    application = w.session.log.of_type("application")[-1].payload
    assert application["adapted"] is False and application["text"] == said.text
    assert w.document_pane.rows["b19"].text.value == said.text


def test_adding_and_clearing_blocks_from_the_document_pane():
    async def main():
        w = live()
        w.document_pane.rows["b24"].add.click()
        new = w.session.document.ids()[w.session.document.ids().index("b24") + 1]
        w.document_pane.rows[new].text.value = "Book a photographer for the poster corner"
        w.document_pane.rows[new].text.value = ""
        await w.settle()
        return w, new

    w, new = asyncio.run(main())
    kinds = [e.payload["kind"] for e in w.session.log.of_type("edit")]
    assert kinds == ["insert", "update", "delete"]
    assert new not in w.document_pane.rows and new not in w.session.document.ids()
    assert [r.box for r in w.document_pane.rows.values()] == list(w.document_pane.children)


def test_session_widget_opens_a_task_by_name_and_names_the_known_ones():
    w = session_widget("sports_day", "Baseline")
    assert w.session.config.task_name == "sports_day" and w.baseline
    assert w.session.backends == RoleModels()
    with pytest.raises(FileNotFoundError, match="known: sports_day, workshop"):
        session_widget("picnic")
