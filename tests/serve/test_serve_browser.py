"""Issue 29, point 4: a served episode played by two people at once, in real browsers.

``hasbench serve`` runs ``mock_D_001`` (a customer disputes a charge; the billing manager
sets and approves the refund). Two Chromium contexts (two people, each with their own
cookies) play its two humans to the end, one of them reloading mid-answer; a third is the
researcher. Bad and used-up links get 403. Screenshots at 1366×768 go to
``test-artifacts/``.
"""

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser import ARTIFACTS, chromium, served

from hasbench.metrics import person_steps
from hasbench.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "data" / "tasks" / "examples.yaml")
SCREEN = {"width": 1366, "height": 768}

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_serve_two_people_play_mock_d_001_to_the_end_in_chromium(tmp_path):
    out = tmp_path / "runs"
    args = [TASKS, "mock_D_001", "--people", "user_0,user_1=P02", "--out", str(out),
            "--pace", "0.3", "--wait", "300"]  # fmt: skip
    with served(args, tmp_path) as (links, server), chromium() as browser:
        watch = browser.new_context(viewport=SCREEN).new_page()
        watch.goto(links["researcher"])
        watch.locator("#hb-people tr").nth(1).wait_for()
        assert "Not started" in watch.locator("#hb-status").inner_text()
        watch.screenshot(path=str(ARTIFACTS / "serve_watch_before.png"))

        customer = browser.new_context(viewport=SCREEN).new_page()
        customer.goto(links["user_0"])
        customer.locator("#hb-title").filter(has_text="You are the customer").wait_for()
        part = customer.locator("#hb-part").inner_text()
        assert "t.wren@example.org" in part and "approved amount" in part  # facts, unknowns
        customer.screenshot(path=str(ARTIFACTS / "serve_person_waiting_to_start.png"))

        manager = browser.new_context(viewport=SCREEN).new_page()
        manager.goto(links["user_1"])
        manager.locator("#hb-title").filter(has_text="You are the billing manager").wait_for()
        part = manager.locator("#hb-part").inner_text()
        assert "Approve a refund of exactly that amount" in part  # its rules
        assert "30.00" in part and "t.wren@example.org" not in part  # own facts only

        # The customer is asked for their email, and answers it.
        card = customer.locator("article.hb-card")
        card.wait_for(timeout=30_000)
        assert "asks you a question" in card.inner_text()
        customer.screenshot(path=str(ARTIFACTS / "serve_customer_question.png"))
        card.locator("textarea").fill("My email is t.wren@example.org")
        card.locator(".hb-choice-send").click()
        card.wait_for(state="detached")
        # ... and speaks up on their own: information for the agents.
        customer.locator("#hb-own-kind").select_option("inform")
        customer.locator("#hb-own-text").fill("I would like the whole balance back.")
        customer.locator("#hb-own-send").click()
        customer.locator("#hb-log").get_by_text("I would like the whole balance back.").wait_for(
            timeout=30_000
        )

        # The manager is asked for the amount; types, reloads, and the draft is still there.
        card = manager.locator("article.hb-card")
        card.wait_for(timeout=30_000)
        card.locator("textarea").fill("The approved amount is 30.00")
        manager.reload()
        card = manager.locator("article.hb-card")
        card.wait_for()
        assert card.locator("textarea").input_value() == "The approved amount is 30.00"
        card.locator(".hb-choice-send").click()

        # Then the refund to approve: the action with its values, and every decision.
        card = manager.locator("article.hb-card-control")
        card.wait_for(timeout=30_000)
        text = card.inner_text()
        assert "Should agent_1 run refund with account_id = A101, amount = 30.0?" in text
        for label in ("Approve", "Deny", "Approve with changes", "Override", "Stop the episode"):
            assert card.get_by_role("button", name=label, exact=True).is_visible()
        assert card.locator("input.hb-argument").nth(1).input_value() == "30.0"  # as asked
        manager.screenshot(path=str(ARTIFACTS / "serve_manager_approval.png"))
        watch.screenshot(path=str(ARTIFACTS / "serve_watch_running.png"))
        card.locator("textarea").fill("Exactly the approved amount.")
        card.get_by_role("button", name="Approve", exact=True).click()

        for page in (customer, manager):
            page.locator(".hb-status.hb-phase-ended").wait_for(timeout=30_000)
        assert "ended" in customer.locator("#hb-status").inner_text()
        conversation = manager.locator("#hb-log").inner_text()
        assert "Exactly the approved amount." in conversation
        manager.screenshot(path=str(ARTIFACTS / "serve_manager_ended.png"), full_page=True)
        customer.screenshot(path=str(ARTIFACTS / "serve_customer_ended.png"), full_page=True)
        watch.locator("#hb-outcome-box").wait_for(timeout=30_000)
        outcome = watch.locator("#hb-outcome").inner_text()
        assert "user_0: 2, user_1: 2" in outcome  # an answer and an inform; two answers
        watch.screenshot(path=str(ARTIFACTS / "serve_watch_ended.png"), full_page=True)

        # A bad link, and a link another browser already claimed, are refused.
        base = links["user_0"].rsplit("/join/", 1)[0]
        assert status(base + "/join/" + "x" * 43) == 403
        assert status(links["user_0"]) == 403  # no cookie: opened elsewhere already
        stranger = browser.new_context(viewport=SCREEN).new_page()
        response = stranger.goto(links["user_1"])
        assert response.status == 403
        assert "already opened in another browser" in stranger.content()
        stranger.screenshot(path=str(ARTIFACTS / "serve_link_refused.png"))

    (path,) = out.glob("mock_D_001-*.jsonl")
    trace = Trace.read(path)
    assert trace.termination.reason == "agent_done"
    assert trace.header.people == {"user_0": "human:serve", "user_1": "human:serve?person=P02"}
    mine = person_steps(trace)
    assert {e.actor for e in mine} == {"user_0", "user_1"}
    (own,) = [e for e in trace.of_type("channel_request") if e.initiator == "human"]
    assert (own.actor, own.payload.form) == ("user_0", "inform")
    answers = {e.actor: e.payload for e in trace.of_type("channel_response")}
    assert answers["user_0"].info == {"email": "t.wren@example.org"}
    assert answers["user_1"].decision == "approve"
    assert json.loads(path.read_text().splitlines()[-1])["kind"] == "termination"
