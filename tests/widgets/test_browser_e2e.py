"""End to end in a real browser: Voila serves the exploration notebook, headless Chromium
(the Debian package) driven by Playwright moves the step slider, and the shown step changes.

The screenshot is kept as ``test-artifacts/explore_traces.png``.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "explore_traces.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
EVENT_NUMBER = ".hb-trace-viewer .hb-event-number"

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
    env = {**os.environ, "HASBENCH_RUNS": str(tmp_path / "runs")}
    log = (tmp_path / "voila.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "voila", str(NOTEBOOK), "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--VoilaConfiguration.show_tracebacks=True"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Voila did not start:\n{(tmp_path / 'voila.log').read_text()}")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # Voila and the kernel it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


def test_moving_the_slider_in_chromium_changes_the_shown_step(voila_url):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "explore_traces.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(voila_url, timeout=60_000)
            page.wait_for_selector(EVENT_NUMBER, timeout=120_000)
            viewer = page.locator(".hb-trace-viewer").first
            assert viewer.locator(".hb-event-number").inner_text() == "1"
            before = viewer.locator(".hb-events .hb-current").inner_text()
            viewer.locator(".noUi-handle").first.focus()
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(
                f"document.querySelector('{EVENT_NUMBER}').textContent === '4'", timeout=30_000
            )
            after = viewer.locator(".hb-events .hb-current").inner_text()
            acting = page.locator(".hb-acting").first.inner_text()
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    assert after != before
    assert acting.split(" (")[0] in after  # the linked graph highlights who acts now
    assert screenshot.stat().st_size > 10_000
