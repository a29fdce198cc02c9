"""Issue 17, point 2: the DocuTeam widget in a real browser.

Voila serves ``notebooks/docuteam_session.ipynb`` (workshop plan, DocuTeam condition,
scripted backends); headless Chromium (Debian's package) driven by Playwright edits a
block substantively, sees the agents' discussion open beside it, answers the agents'
question with a quick reply, applies a message to the block and sees the block change.
Screenshots of each stage are kept in ``test-artifacts/``.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import NETWORKING_EDIT

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "docuteam_session.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
BLOCK = ".hb-dt-block-b22"
CARD = f"{BLOCK} .hb-dt-card"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _requirements() -> str | None:
    """Why the test cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
    for module in ("playwright", "voila"):
        try:
            __import__(module)
        except ImportError:
            return f"the Python package {module!r} is not installed (pip install -e '.[dev]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def voila_url(tmp_path, hasbench_kernel):
    reason = _requirements()
    if reason is not None:
        pytest.skip(reason)
    port = _free_port()
    log_path = tmp_path / "voila.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "voila", str(NOTEBOOK), "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--VoilaConfiguration.show_tracebacks=True"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Voila did not start:\n{log_path.read_text()}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # Voila and the kernel it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


def test_edit_discuss_answer_and_apply_in_chromium(voila_url):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    shots = [ARTIFACTS / f"docuteam_session_{n}.png" for n in range(1, 4)]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
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
        finally:
            browser.close()

    assert original != NETWORKING_EDIT and "Idea" in card and "started by the agents" in card
    assert "d1" in notice and "Idea mode" in notice
    assert "The agents ask you" in question and reply.startswith("Go with")
    assert "You answered" in thread and thread.rindex(reply) > thread.index("You answered")
    assert applied not in (original, NETWORKING_EDIT) and applied.startswith("Networking:")
    assert all(shot.stat().st_size > 20_000 for shot in shots)
