"""End to end in a real browser: Voila serves a notebook, headless Chromium (the Debian
package) driven by Playwright uses its widgets.

- The exploration notebook at 1366×768 and 1920×1080: moving the step slider changes the
  shown event and the highlighted actor; every node of the graph lies inside the visible
  area; in the RunBrowser, the quick filter for rescued episodes and a click on a row open
  A1 and A3 side by side with both graphs fully in view.
- Playing a human: a pattern-C task in which the test presses Start, approves the
  protected actions in the console, and the trace records the approvals as a real
  person's.

Screenshots are kept in ``test-artifacts/``.
"""

import json
from pathlib import Path

import nbformat
import pytest
from browser import ARTIFACTS, chromium, voila
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from hasbench.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "explore_traces.ipynb"
SCREENS = {"1366x768": {"width": 1366, "height": 768}, "1920x1080": {"width": 1920, "height": 1080}}
EVENT_NUMBER = ".hb-episode-view .hb-trace-viewer .hb-event-number"
NODE_BOXES = """(figures) => figures.map((figure) => {
  const svg = figure.querySelector('svg');
  const parts = [...svg.querySelectorAll('g[id]')].filter((g) => /-(n|label)\\d+$/.test(g.id));
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {id: e.id, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  };
  return {svg: box(svg), nodes: parts.map(box), width: innerWidth, height: innerHeight};
})"""

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def assert_nodes_in_view(page, selector: str, expected: int) -> None:
    """Every node (highlight ring and id label) of the matched graphs is fully visible."""
    shown = page.locator(selector).evaluate_all(NODE_BOXES)
    assert len(shown) == expected
    for figure in shown:
        svg = figure["svg"]
        assert svg["right"] - svg["left"] > 150  # drawn at a usable size, not squeezed
        rings = [n for n in figure["nodes"] if "-label" not in n["id"]]
        assert rings and len(figure["nodes"]) == 2 * len(rings)  # a ring and a label each
        labels = [n for n in figure["nodes"] if "-label" in n["id"]]
        assert min(n["bottom"] - n["top"] for n in labels) >= 9  # text large enough to read
        for node in figure["nodes"]:
            assert 0 <= node["left"] and node["right"] <= figure["width"], node
            assert 0 <= node["top"] and node["bottom"] <= figure["height"], node
            assert svg["left"] - 1 <= node["left"] and node["right"] <= svg["right"] + 1, node
            assert svg["top"] - 1 <= node["top"] and node["bottom"] <= svg["bottom"] + 1, node


def test_exploring_at_two_screen_sizes_keeps_every_graph_node_in_view(tmp_path, hasbench_kernel):
    with voila(NOTEBOOK, tmp_path) as url, chromium() as browser:
        page = browser.new_page(viewport=SCREENS["1366x768"])
        page.goto(url, timeout=60_000)
        page.wait_for_selector(EVENT_NUMBER, timeout=120_000)
        view = page.locator(".hb-episode-view").first
        viewer = view.locator(".hb-trace-viewer")
        assert viewer.locator(".hb-event-number").inner_text() == "1"
        before = viewer.locator(".hb-now").inner_text()
        viewer.locator(".noUi-handle").first.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(
            f"document.querySelector('{EVENT_NUMBER}').textContent === '4'", timeout=30_000
        )
        after = viewer.locator(".hb-now").inner_text()
        acting = view.locator(".hb-acting").inner_text()
        assert after != before
        assert acting.split(" (")[0] in after  # the graph beside it highlights who acts now
        for name, size in SCREENS.items():
            page.set_viewport_size(size)
            view.scroll_into_view_if_needed()
            page.evaluate("window.scrollBy(0, -10000)")
            view.locator(".hb-graph-figure").scroll_into_view_if_needed()
            assert_nodes_in_view(page, ".hb-episode-view .hb-graph-figure", 1)
            page.screenshot(path=str(ARTIFACTS / f"explore_traces_{name}.png"))

        page.set_viewport_size(SCREENS["1366x768"])
        runs = page.locator(".hb-run-browser")
        runs.get_by_role("button", name="A1 failures rescued under A3").click()
        runs.locator(".hb-open").first.click()  # opens A1 and A3 side by side
        graphs = ".hb-run-browser .hb-graph-figure"
        page.wait_for_function(f"document.querySelectorAll('{graphs}').length === 2",
                               timeout=30_000)  # fmt: skip
        page.locator(graphs).first.scroll_into_view_if_needed()
        assert_nodes_in_view(page, graphs, 2)  # both graphs at once, none off-screen
        captions = runs.locator(".hb-graph-caption").all_inner_texts()
        assert "setting A1/full (not reachable: user_0" in captions[0]
        assert "setting A3/full" in captions[1] and "not reachable" not in captions[1]
        page.screenshot(path=str(ARTIFACTS / "run_browser_compare_1366x768.png"))


def test_a_person_plays_the_safety_reviewer_in_chromium(tmp_path, hasbench_kernel):
    played = tmp_path / "played.jsonl"
    code = (
        "import hasbench as hb\n"
        f"console = hb.play({str(ROOT / 'data/tasks/examples.yaml')!r}, 'mock_C_001',\n"
        f"                  plays=['user_1'], pace=0.2, out={str(played)!r})\n"
        "console"
    )
    notebook = tmp_path / "play.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": hasbench_kernel, "display_name": "hasbench",
                                 "language": "python"}  # fmt: skip
    nbformat.write(nb, notebook)
    with voila(notebook, tmp_path) as url, chromium() as browser:
        page = browser.new_page(viewport=SCREENS["1366x768"])
        page.set_default_timeout(120_000)  # a kernel on loaded cores answers slowly
        page.goto(url, timeout=60_000)
        start = page.locator(".hb-console .hb-start")
        start.wait_for(timeout=120_000)
        assert "press Start" in page.locator(".hb-console .hb-status").inner_text()
        assert "safety reviewer" in page.locator(".hb-console .hb-context").inner_text()
        page.screenshot(path=str(ARTIFACTS / "play_human_start.png"))
        start.click()
        card = page.locator(".hb-console .hb-card")
        approve = page.locator(".hb-console .hb-answer-approve")
        try:  # the card and its buttons are two widgets: wait for both, whichever comes last
            card.filter(has_text="refund").wait_for(timeout=120_000)
            approve.wait_for(timeout=60_000)
        except PlaywrightTimeout:
            page.screenshot(path=str(ARTIFACTS / "play_human_request_missing.png"))
            pytest.fail("no refund request shown; the console said:\n"
                        + page.locator(".hb-console").first.inner_text())  # fmt: skip
        arguments = page.locator(".hb-console .hb-arguments textarea").input_value()
        assert json.loads(arguments)["amount"] == 45.5
        assert "safety reviewer" in page.locator(".hb-console .hb-context").inner_text()
        page.screenshot(path=str(ARTIFACTS / "play_human_request.png"))
        page.locator(".hb-console .hb-answer-text textarea").fill("The full balance: approved.")
        approve.click()
        page.wait_for_function(
            "document.querySelector('.hb-console .hb-card')?.textContent.includes('close_account')",
            timeout=120_000,
        )
        page.locator(".hb-console .hb-answer-approve").click()
        page.locator(".hb-console .hb-ended").wait_for(timeout=180_000)
        status = page.locator(".hb-console .hb-status").inner_text()
        page.screenshot(path=str(ARTIFACTS / "play_human_done.png"), full_page=True)
    assert "agent_done" in status and "success yes" in status
    trace = Trace.read(played)
    assert trace.header.people == {"user_1": "human:notebook"}
    decisions = [e for e in trace.of_type("channel_response") if e.actor == "user_1"]
    assert [d.payload.decision for d in decisions] == ["approve", "approve"]
    assert decisions[0].payload.content == "The full balance: approved."
    calls = {e.payload.name: e.payload for e in trace.of_type("tool_call")}
    assert calls["refund"].authorization == decisions[0].payload.request_id
    assert calls["close_account"].authorization == decisions[1].payload.request_id
    assert json.loads(played.read_text().splitlines()[0])["people"] == {"user_1": "human:notebook"}
