"""The notebook console of a person playing a human, driven headlessly in an event loop."""

import asyncio
import json

import pytest

from hasbench.trace import Trace
from hasbench.widgets import EpisodeView, HumanConsole, play


async def until(condition, timeout=10.0):
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the console never got there")


def test_approving_in_the_console_runs_the_action_and_shows_the_outcome(scenario, tmp_path):
    out = tmp_path / "played.jsonl"

    async def session():
        console = play(scenario, plays=["user_1"], pace=0, out=out)
        assert isinstance(console, HumanConsole) and console.played == ["user_1"]
        console.start_button.click()
        await until(lambda: console.waiting is not None)
        assert "waiting for you" in console.status_html.value
        card = console.request_html.value
        assert "agent_2 asks for your approval" in card
        assert "Should agent_2 run refund with account_id = A101, amount = 45.5?" in card
        assert "Please approve refund: Please approve" not in card  # the head is not repeated
        assert "<code>refund</code> (write, risk high)" in card
        assert json.loads(console.arguments_text.value) == {"account_id": "A101", "amount": 45.5}
        assert list(console.buttons) == ["approve", "deny", "modify", "override", "stop"]
        assert console.buttons["modify"].description == "Approve with changes"
        context = console.context_html.value
        assert "You play user_1 (safety reviewer)" in context
        assert "Your rules:" in context and "full remaining balance" in context
        assert "approve or deny protected account actions" in context  # responsibilities
        assert "no facts of your own" in context and "(nothing)" not in context
        console.answer_text.value = "Correct amount."
        console.buttons["approve"].click()
        await until(lambda: console.waiting is not None and console.waiting.number == 2)
        assert "close_account" in console.request_html.value
        console.arguments_text.value = "not json"
        console.buttons["modify"].click()  # refused: the arguments are not JSON
        assert "hb-error" in console.problem_html.value and console.waiting.number == 2
        console.buttons["approve"].click()
        await console.task
        return console

    console = asyncio.run(session())
    assert "ended: <b>agent_done</b>" in console.status_html.value
    assert "success <b>yes</b>" in console.status_html.value
    assert "Correct amount." in console.log_html.value  # what user_1 said, in its log
    assert console.stop.disabled and console.own_send.disabled
    (view,) = console.result.children
    assert isinstance(view, EpisodeView)
    assert "played by a person: <b>user_1 (human:notebook)</b>" in view.viewer.summary_html.value
    trace = Trace.read(out)
    assert trace.header.people == {"user_1": "human:notebook"}
    decisions = [e.payload for e in trace.of_type("channel_response") if e.actor == "user_1"]
    assert [(d.decision, d.content) for d in decisions] == [
        ("approve", "Correct amount."), ("approve", ""),
    ]  # fmt: skip


def test_own_feedback_and_the_stop_button(scenario):
    async def session():
        console = play(scenario, plays=["user_0"], pace=0.05)
        console.start()
        await until(lambda: console.waiting is not None)  # the email question
        console.answer_text.value = ""
        console.buttons["send"].click()  # refused: no answer written
        assert "write an answer (or decline)" in console.problem_html.value
        console.answer_text.value = "It is t.wren@example.org"
        console.buttons["send"].click()
        console.own_kind.value = "feedback"
        console.own_text.value = "Please check the balance first."
        console.own_send.click()
        assert console.own_text.value == ""
        await until(lambda: console.episode.step_no >= 3)
        console.stop.click()
        await console.task
        return console

    console = asyncio.run(session())
    trace = console.trace
    assert trace.termination.reason == "user_stop"
    own = [e for e in trace.of_type("channel_request") if e.initiator == "human"]
    assert [(e.actor, e.channel, e.payload.form) for e in own] == [
        ("user_0", "feedback", "comment"), ("user_0", "control", "stop"),
    ]  # fmt: skip
    assert "ended: <b>user_stop</b>" in console.status_html.value


def test_nothing_runs_before_the_person_presses_start(scenario):
    async def session():
        console = play(scenario, plays=["user_1"], pace=0)
        await asyncio.sleep(0.3)  # an unstarted episode would have asked by now
        assert console.task is None and console.episode.step_no == 0
        assert console.waiting is None and console.episode.trace.events == []
        assert "press Start" in console.status_html.value
        assert "You play user_1 (safety reviewer)" in console.context_html.value  # read first
        assert console.start_button.layout.display != "none"
        assert console.stop.disabled and console.own_send.disabled
        console.start_button.click()
        task = console.task
        assert task is not None and console.start() is task  # a second start changes nothing
        assert console.start_button.layout.display == "none" and not console.stop.disabled
        await until(lambda: console.waiting is not None)
        console.stop.click()
        await task
        return console

    console = asyncio.run(session())
    assert console.trace.termination.reason == "user_stop"


def test_play_needs_the_notebook_event_loop(scenario):
    with pytest.raises(RuntimeError, match="--user human:terminal"):
        play(scenario)
