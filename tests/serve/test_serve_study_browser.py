"""Issue 30, point 4: the served DocuTeam study in real browsers (Debian's Chromium).

``hasbench serve study STUDY.yaml`` runs a three-participant study with one rater. In
separate browser contexts (each its own cookies): P01 goes through consent, both
sessions (DocuTeam: typing opens a discussion, answered with a quick reply; a reload
comes back to the same plan; Baseline: a chat started from the side panel) and both
questionnaires; P02 and P03 work at the same time and never see each other's plan; the
rater scores P01's plans, shown blind; the researcher's page shows the progress; a bad
link gets 403. Screenshots of every page at 1366×768 go to ``test-artifacts/``.
"""

import json
import urllib.error
import urllib.request

import pytest
from browser import ARTIFACTS, chromium, served
from docuteam_helpers import NETWORKING_EDIT

SCREEN = {"width": 1366, "height": 768}
CLIPPED_BUTTONS = """() => [...document.querySelectorAll('button')]
  .filter((b) => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map((b) => b.textContent)"""

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def shot(page, name):
    page.screenshot(path=str(ARTIFACTS / f"study_{name}.png"))
    return page.evaluate(CLIPPED_BUTTONS)


def answer_all(page, value):
    for item in page.locator(".hb-item").all():
        item.locator(f"input[value='{value}']").check()


def test_serve_study_participants_rater_and_researcher_in_chromium(tmp_path):
    study = tmp_path / "study.yaml"
    study.write_text(json.dumps({
        "title": "Planning with agents", "consent": "You agree to take part in this test.",
        "participants": ["P01", "P02", "P03"], "raters": ["R1"],
        "tasks": ["workshop", "sports_day"], "minutes_per_session": 10, "debounce": 1.0,
    }), encoding="utf-8")  # fmt: skip
    out = tmp_path / "folder"
    clipped = {}
    with (
        served(["study", str(study), "--out", str(out)], tmp_path) as (links, _),
        chromium() as browser,
    ):
        bad = links["P01"].rsplit("/", 1)[0] + "/wrong-token"
        assert status(bad) == 403 and status(links["P01"].replace("/join/", "/watch/")) == 403
        refused = browser.new_context(viewport=SCREEN).new_page()
        refused.goto(bad)
        shot(refused, "0_bad_link")

        # P01: consent, then the DocuTeam session on the workshop plan.
        p01 = browser.new_context(viewport=SCREEN).new_page()
        p01.goto(links["P01"])
        p01.locator("#hb-consent-text").filter(has_text="You agree").wait_for()
        clipped["consent"] = shot(p01, "1_consent")
        p01.locator("#hb-consent-go").click()
        p01.locator("#hb-problem").filter(has_text="tick the box").wait_for()
        p01.locator("#hb-agree").check()
        p01.locator("#hb-consent-go").click()
        p01.locator("#hb-brief-title").filter(has_text="Session 1 of 2").wait_for()
        brief = p01.locator("#hb-brief").inner_text()
        clipped["brief"] = shot(p01, "2_brief")
        p01.locator("#hb-start").click()
        block = p01.locator('[data-block="b22"] textarea')
        block.wait_for(timeout=20_000)
        block.click()
        block.press("Control+A")
        p01.keyboard.type(NETWORKING_EDIT, delay=10)
        p01.locator('[data-card="d1"].hb-dt-asks').wait_for(timeout=30_000)
        timer = p01.locator("#hb-timer").inner_text()
        clipped["session_docuteam"] = shot(p01, "3_session_docuteam")
        p01.reload()  # a reload comes back to the same plan and discussion
        block = p01.locator('[data-block="b22"] textarea')
        block.wait_for(timeout=20_000)
        reloaded = block.input_value()
        p01.locator('[data-notice="d1"] button', has_text="Open it").click()
        p01.locator(".hb-dt-reply-1").click()
        p01.locator('[data-card="d1"]:not(.hb-dt-asks)').wait_for(timeout=30_000)
        clipped["thread"] = shot(p01, "4_session_thread")
        p01.locator("#hb-finish").click()
        p01.locator("#hb-finish-yes").click()

        # The questionnaire: all fifteen items are needed.
        p01.locator("#hb-survey-title").filter(has_text="session 1").wait_for()
        items = p01.locator(".hb-item").count()
        p01.locator(".hb-item").first.locator("input[value='6']").check()
        p01.locator("#hb-survey-send").click()
        p01.locator("#hb-problem").filter(has_text="please answer every question").wait_for()
        answer_all(p01, 6)
        clipped["survey"] = shot(p01, "5_survey")
        p01.locator("#hb-survey-send").click()

        # Session 2 (Baseline, sports day): a chat about the whole plan from the side panel.
        p01.locator("#hb-brief-title").filter(has_text="Session 2 of 2").wait_for()
        p01.locator("#hb-start").click()
        p01.locator('[data-pick="safety"]').check()
        p01.locator('[data-pick="inclusion"]').check()
        p01.locator(".hb-dt-start-button").click()
        p01.locator(".hb-dt-msg-utterance").first.wait_for(timeout=30_000)
        p01.locator(".hb-dt-thread-status").filter(has_text="concluded").wait_for(timeout=30_000)
        clipped["session_baseline"] = shot(p01, "6_session_baseline")
        p01.locator("#hb-finish").click()
        p01.locator("#hb-finish-yes").click()
        p01.locator("#hb-survey-title").filter(has_text="session 2").wait_for()
        answer_all(p01, 3)
        p01.locator("#hb-survey-send").click()
        p01.locator("#hb-done").wait_for()
        clipped["done"] = shot(p01, "7_done")

        # P02 and P03 at the same time, each on their own plan.
        pages = {}
        for name in ("P02", "P03"):
            page = browser.new_context(viewport=SCREEN).new_page()
            page.goto(links[name])
            page.locator("#hb-agree").check()
            page.locator("#hb-consent-go").click()
            page.locator("#hb-start").click()
            pages[name] = page
        for name, page in pages.items():
            cell = page.locator('[data-block="b3"] textarea')
            cell.click()
            cell.press("Control+A")
            page.keyboard.type(f"Plan written by {name} only", delay=5)
        seen = {}
        for name, page in pages.items():  # what the server holds for each, after a reload
            page.wait_for_timeout(800)
            page.reload()
            page.locator('[data-block="b3"] textarea').wait_for(timeout=20_000)
            seen[name] = page.evaluate(
                "[...document.querySelectorAll('.hb-dt-app textarea')].map((t) => t.value)"
                ".join(' ')"
            )
        shot(pages["P02"], "8_second_participant")

        # The rater scores P01's two plans, shown blind.
        rater = browser.new_context(viewport=SCREEN).new_page()
        rater.goto(links["R1"])
        rater.locator(".hb-plan-entry").nth(1).wait_for(timeout=20_000)
        shown = rater.locator("main").inner_text()
        for _ in range(2):
            for dimension in rater.locator(".hb-item").all():
                dimension.locator("input[value='4']").check()
            rater.locator(".hb-save").click()
            rater.wait_for_timeout(500)
        rater.locator(".hb-plan-entry.hb-rated").nth(1).wait_for(timeout=10_000)
        clipped["rater"] = shot(rater, "9_rater")

        watch = browser.new_context(viewport=SCREEN).new_page()
        watch.goto(links["researcher"])
        watch.locator('[data-rater="R1"]').filter(has_text="2 of 2").wait_for(timeout=10_000)
        people = watch.locator("#hb-people").inner_text()
        clipped["researcher"] = shot(watch, "10_researcher")

    assert "10 minutes" in brief and "click any text" in brief.lower()
    assert timer.startswith("Time left: 9:") or timer.startswith("Time left: 10:")
    assert reloaded == NETWORKING_EDIT and items == 15
    assert "by P02 only" in seen["P02"] and "by P03" not in seen["P02"]
    assert "by P03 only" in seen["P03"] and "by P02" not in seen["P03"]
    assert "Plan 1" in shown and not any(w in shown for w in ("P01", "DocuTeam", "Baseline"))
    assert "Finished" in people and "Step 3 of 7" in people
    assert all(not buttons for buttons in clipped.values()), clipped
    surveys = [json.loads(line) for line in (out / "surveys.jsonl").read_text().splitlines()]
    assert [(s["participant"], s["order"]) for s in surveys] == [("P01", 1), ("P01", 2)]
    ratings = (out / "ratings.jsonl").read_text().splitlines()
    assert len(ratings) == 2 and {json.loads(r)["participant"] for r in ratings} == {"P01"}
