"""The HTML export of an executed notebook shows its widgets in a browser with no kernel and
no network: Chromium opens the exported ``explore_traces`` page from disk with every network
request refused, and its widgets (the trace viewer, the graph, the RunBrowser table) are
there to read. A screenshot at 1366×768 goes to ``test-artifacts/``.
"""

import re

import pytest
from browser import ARTIFACTS, chromium

from hasbench.runner import run_notebook
from hasbench.runner.html_export import FOLDER, SCRIPTS_DIR, scripts_available

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, hasbench_kernel):
    if not scripts_available():
        pytest.skip(f"the widget scripts are not in {SCRIPTS_DIR} (make setup, with npm)")
    root = tmp_path_factory.mktemp("export")
    executed = run_notebook(
        "explore_traces",
        {"task_ids": ["mock_C_001"], "agents": ["scripted:standin?strong"],
         "results_dir": str(root / "store")},
        output_dir=root / "out", progress=False,
    )  # fmt: skip
    return executed.with_suffix(".html")


def test_the_export_names_no_cdn_and_carries_its_scripts(exported):
    page = exported.read_text(encoding="utf-8")
    assert f"widgetRendererSrc = '{FOLDER}/embed-amd.js'" in page
    assert f'<script src="{FOLDER}/require.js"' in page
    assert not re.search(r"""(?:src|href)=["']https?://""", page)  # nothing loads from afar
    assert "unpkg.com" not in page and "jsdelivr" not in page and "mathjax" not in page.lower()
    assert (exported.parent / FOLDER / "embed-amd.js").stat().st_size > 1_000_000


def test_its_widgets_render_offline_in_chromium(exported):
    refused = []
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1366, "height": 768}, offline=True)
        page = context.new_page()

        def refuse(route):
            refused.append(route.request.url)
            route.abort()

        page.route(re.compile(r"^https?://"), refuse)  # the network is blocked
        page.goto(exported.as_uri())
        table = page.locator(".hb-run-browser .hb-results-table")
        table.wait_for(state="visible", timeout=60_000)
        assert table.locator(".hb-open").first.is_visible()  # a row's task button
        assert "mock_C_001" in table.inner_text()
        graph = page.locator(".hb-graph-figure svg").first
        assert graph.is_visible() and graph.bounding_box()["width"] > 150
        assert page.locator(".hb-trace-viewer").first.is_visible()
        page.locator(".hb-run-browser").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "html_export_offline.png"))
        context.close()
    assert refused == []  # it never even tried to reach the network
