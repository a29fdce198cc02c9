"""Issue 17, point 2 and issue 30, points 3-4: the DocuTeam UI in a real browser.

Voila serves ``notebooks/docuteam_session.ipynb`` (workshop plan, DocuTeam condition,
scripted backends); headless Chromium (Debian's package) driven by Playwright at 1366×768
types into a block (the agents react while the person has not left the block), sees the
agents' discussion open beside it without the text moving, answers the agents' question
with a quick reply, applies a message and a summary item, adds an agent to the team and
to the concluded discussion (it speaks), and checks that every button label is whole.
Screenshots of each stage are kept in ``test-artifacts/``.
"""

from pathlib import Path

import pytest
from browser import ARTIFACTS, chromium, voila
from docuteam_helpers import NETWORKING_EDIT

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "docuteam_session.ipynb"
BLOCK = '[data-block="b22"]'
CARD = '[data-card="d1"]'

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CLIPPED_BUTTONS = """() => [...document.querySelectorAll('.hb-dt-app button')]
  .filter((b) => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map((b) => b.textContent)"""


@pytest.fixture
def voila_url(tmp_path, hasbench_kernel):
    with voila(NOTEBOOK, tmp_path) as url:
        yield url


def box(page, selector):
    return page.locator(selector).first.bounding_box()


def place(page, selector):
    """A block's top within the document, and how much taller it is than its text."""
    return page.locator(selector).evaluate(
        "(row) => [row.offsetTop, row.offsetHeight - row.querySelector('textarea').offsetHeight]"
    )


def test_type_discuss_answer_apply_and_steer_in_chromium(voila_url):
    shots = {n: ARTIFACTS / f"docuteam_session_{n}.png" for n in
             ("1_typed", "2_question", "3_applied", "4_agent")}  # fmt: skip
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(voila_url, timeout=60_000)
        text = page.locator(f"{BLOCK} textarea")
        text.wait_for(timeout=120_000)
        original = text.input_value()
        text.scroll_into_view_if_needed()
        before = place(page, BLOCK)

        # Typing, without leaving the block: after the debounce the agents react and open
        # a discussion beside it; the block stays where it was.
        text.click()
        text.press("Control+A")
        page.keyboard.type(NETWORKING_EDIT, delay=15)
        page.wait_for_selector(f"{CARD}.hb-dt-by-agents", timeout=30_000)
        page.wait_for_selector('[data-notice="d1"]', timeout=10_000)
        focused = page.evaluate("document.activeElement.classList.contains('hb-dt-text')")
        after, row = place(page, BLOCK), box(page, BLOCK)
        card, notice = box(page, CARD), box(page, '[data-notice="d1"]')
        card_text = page.locator(CARD).inner_text()
        notice_text = page.locator('[data-notice="d1"]').inner_text()
        unread = page.locator(f"{CARD} .hb-dt-unread").count()
        page.screenshot(path=str(shots["1_typed"]))

        # The discussion asks the user: open it from the notice, answer with a quick reply.
        page.wait_for_selector(f"{CARD}.hb-dt-asks", timeout=30_000)
        page.locator('[data-notice="d1"] button', has_text="Open it").click()
        second = page.locator(".hb-dt-reply-2")
        second.wait_for(timeout=10_000)
        question = page.locator(".hb-dt-question").inner_text()
        reply = second.inner_text()
        clipped_thread = page.evaluate(CLIPPED_BUTTONS)
        page.screenshot(path=str(shots["2_question"]))
        second.click()
        page.wait_for_selector(f"{CARD}:not(.hb-dt-asks)", timeout=30_000)
        page.wait_for_function(
            "document.querySelector('.hb-dt-thread-status').textContent.includes('concluded')",
            timeout=30_000,
        )
        thread = page.locator(".hb-dt-messages").inner_text()

        # Apply the last agent message in place of the edited line, then a summary item.
        page.locator(".hb-dt-placement").select_option("replace")
        page.locator(".hb-dt-apply").last.click()
        page.wait_for_function(
            "(typed) => document.querySelector('[data-block=\"b22\"] textarea').value !== typed",
            arg=NETWORKING_EDIT,
            timeout=30_000,
        )
        applied = text.input_value()
        blocks = page.locator(".hb-dt-block").count()
        page.locator(".hb-dt-placement").select_option("after")
        page.locator(".hb-dt-apply-summary").first.click()
        page.wait_for_function(
            f"document.querySelectorAll('.hb-dt-block').length === {blocks + 1}", timeout=30_000
        )
        grown = text.evaluate("(t) => t.scrollHeight <= t.clientHeight + 2")
        page.screenshot(path=str(shots["3_applied"]))

        # A new agent joins the team, then the concluded discussion, and speaks.
        page.locator(".hb-dt-add-agent").click()
        form = page.locator(".hb-dt-agent-form")
        form.locator("input[name=name]").fill("Kai")
        form.locator("input[name=role]").fill("Sponsor liaison")
        form.locator("textarea[name=stance]").fill("Outside money can pay for what we cannot.")
        form.locator("input[name=expertise]").fill("sponsors, companies")
        form.locator("button", has_text="Add agent").click()
        page.wait_for_selector('[data-agent="kai"]', timeout=10_000)
        page.locator(".hb-dt-steer summary").click()
        offered = page.locator(".hb-dt-add-select option").all_inner_texts()
        page.locator(".hb-dt-add-select").select_option("kai")
        page.locator(".hb-dt-add-participant").click()
        page.wait_for_function(
            "[...document.querySelectorAll('.hb-dt-msg-head b')]"
            ".some((b) => b.textContent === 'Kai')",
            timeout=30_000,
        )
        page.wait_for_function(
            "document.querySelector('.hb-dt-thread-status').textContent.includes('concluded')",
            timeout=30_000,
        )
        clipped = page.evaluate(CLIPPED_BUTTONS)
        page.screenshot(path=str(shots["4_agent"]))

    assert original != NETWORKING_EDIT and focused
    assert after[0] == before[0] and after[1] <= 4 and before[1] <= 4
    # The card and the notice sit in the margin right of the text, level with the block.
    assert card["x"] >= row["x"] + row["width"] - 1 and notice["x"] >= card["x"] - 1
    assert abs(notice["y"] - row["y"]) < 60
    assert "Idea" in card_text and "by the agents" in card_text and unread == 1
    assert "started a discussion about this part" in notice_text
    assert "The agents ask you" in question and reply and "'s idea" not in reply
    assert "You answered" in thread and thread.rindex(reply) > thread.index("You answered")
    assert applied not in (original, NETWORKING_EDIT) and applied.startswith("Networking:")
    assert offered == ["Bora", "Kai"]
    assert grown and clipped_thread == [] and clipped == []
    assert all(shot.stat().st_size > 20_000 for shot in shots.values())
