"""Issue 17, point 2: the DocuTeam widget in a real browser.

Voila serves ``notebooks/docuteam_session.ipynb`` (workshop plan, DocuTeam condition,
scripted backends); headless Chromium (Debian's package) driven by Playwright edits a
block substantively, sees the agents' discussion open beside it, answers the agents'
question with a quick reply, applies a message to the block and sees the block change.
Screenshots of each stage are kept in ``test-artifacts/``.
"""

from pathlib import Path

import pytest
from browser import ARTIFACTS, chromium, voila
from docuteam_helpers import NETWORKING_EDIT

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "docuteam_session.ipynb"
BLOCK = ".hb-dt-block-b22"
CARD = f"{BLOCK} .hb-dt-card"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def voila_url(tmp_path, hasbench_kernel):
    with voila(NOTEBOOK, tmp_path) as url:
        yield url


def test_edit_discuss_answer_and_apply_in_chromium(voila_url):
    shots = [ARTIFACTS / f"docuteam_session_{n}.png" for n in range(1, 4)]
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(voila_url, timeout=60_000)
        text = page.locator(f"{BLOCK} textarea")
        text.wait_for(timeout=120_000)
        original = text.input_value()

        # A substantive edit: after the debounce the agents open a discussion beside it.
        text.fill(NETWORKING_EDIT)
        text.press("Tab")
        page.wait_for_selector(f"{CARD}.hb-dt-agent-initiated", timeout=30_000)
        page.wait_for_selector(".hb-dt-notice-row", timeout=10_000)
        card = page.locator(CARD).inner_text()
        notice = page.locator(".hb-dt-notice-row").inner_text()
        page.screenshot(path=str(shots[0]), full_page=True)

        # The discussion asks the user: open it, answer with the second quick reply.
        page.wait_for_selector(f"{CARD}.hb-dt-asks", timeout=30_000)
        page.locator(f"{CARD} .hb-dt-open").click()
        second = page.locator(".hb-dt-reply-2")
        second.wait_for(timeout=10_000)
        page.locator(".hb-dt-messages .hb-dt-apply").first.wait_for(timeout=10_000)
        page.locator(".hb-dt-summary .hb-dt-apply-summary").first.wait_for(timeout=10_000)
        question = page.locator(".hb-dt-clarification").inner_text()
        reply = second.inner_text()
        page.screenshot(path=str(shots[1]), full_page=True)
        second.click()
        page.wait_for_selector(f"{CARD}:not(.hb-dt-asks)", timeout=30_000)
        page.wait_for_function(
            "document.querySelector('.hb-dt-activity').textContent.includes('concluded')",
            timeout=30_000,
        )
        thread = page.locator(".hb-dt-messages").inner_text()

        # Apply the last agent message in place of the edited line.
        page.locator(".hb-dt-placement select").select_option(label="replacing it")
        page.locator(".hb-dt-apply").last.click()
        page.wait_for_function(
            f"(edited) => document.querySelector('{BLOCK} textarea').value !== edited",
            arg=NETWORKING_EDIT,
            timeout=30_000,
        )
        applied = text.input_value()
        page.screenshot(path=str(shots[2]), full_page=True)

    assert original != NETWORKING_EDIT and "Idea" in card and "started by the agents" in card
    assert "d1" in notice and "Idea mode" in notice
    assert "The agents ask you" in question and reply.startswith("Go with")
    assert "You answered" in thread and thread.rindex(reply) > thread.index("You answered")
    assert applied not in (original, NETWORKING_EDIT) and applied.startswith("Networking:")
    assert all(shot.stat().st_size > 20_000 for shot in shots)
