"""RunBrowser over a small offline results store."""

import json
import re
import shutil

import pytest

from hasbench.runner import ExperimentError
from hasbench.widgets import GraphViewer, RunBrowser, TraceViewer


def test_dropdowns_list_what_the_store_holds(store):
    directory, _ = store
    browser = RunBrowser(directory)
    assert browser.selectors["agent_model"].options == ("scripted:strong", "scripted:weak")
    assert browser.selectors["setting"].options == ("A1/full", "A3/full")
    assert browser.selectors["task_id"].options == ("mock_A_001", "mock_C_001")
    assert browser.selectors["seed"].options == (0,)
    assert browser.experiment.options == ("explore",)


def test_choosing_an_episode_opens_its_trace_and_graph_side_by_side(store):
    directory, _ = store
    browser = RunBrowser(directory)
    browser.select(agent_model="scripted:weak", setting="A3/full", task_id="mock_C_001")
    viewer, graph = browser.body.children
    assert isinstance(viewer, TraceViewer) and isinstance(graph, GraphViewer)
    header = viewer.trace.header
    assert (header.scenario_id, header.setting["agency"], header.backends["agent"]) == (
        "mock_C_001", "A3", "scripted:weak",
    )  # fmt: skip
    assert (
        "mock_C_001 · A3/full · scripted:weak · seed 0"
        in browser.children[-1].children[0].children[0].value
    )
    record = json.loads((directory / "episodes" / f"{_key(browser)}.json").read_text())
    expected = "true" if record["outcome"]["success"] else "false"
    assert re.search(rf"<td>success</td><td[^>]*>{expected}</td>", viewer.outcome_html.value)
    assert "<td>cqs_events</td>" in viewer.outcome_html.value
    viewer.slider.value = viewer.slider.max
    assert graph.actor == viewer.current.actor  # linked
    browser.selectors["task_id"].value = "mock_A_001"
    assert browser.viewer.trace.header.scenario_id == "mock_A_001"
    assert "star" in browser.graph_viewer.caption_html.value


def _key(browser: RunBrowser) -> str:
    row = browser._row(browser.selectors["setting"].value)
    return row["key"]


def test_compare_mode_steps_two_settings_with_one_slider(store):
    directory, _ = store
    browser = RunBrowser(directory)
    browser.select(agent_model="scripted:strong", setting="A1/full", task_id="mock_C_001")
    browser.other_setting.value = "A3/full"
    assert browser.other_setting.disabled
    browser.compare.value = True
    assert not browser.other_setting.disabled
    a1, a3 = browser.compare_viewers
    assert (a1.trace.header.setting["agency"], a3.trace.header.setting["agency"]) == ("A1", "A3")
    assert a1.trace.header.scenario_id == a3.trace.header.scenario_id == "mock_C_001"
    assert browser.compare_slider.max == max(a1.rows[-1].step, a3.rows[-1].step)
    for step in (1, 3, browser.compare_slider.max):
        browser.compare_slider.value = step
        for viewer in (a1, a3):
            assert viewer.current.step <= step
            later = viewer.slider.value + 1
            assert later == len(viewer.visible) or viewer.rows[viewer.visible[later]].step > step
    assert "hb-step-number'>1<" not in a3.position_html.value
    (columns,) = browser.body.children[0].children[1:]
    for column, viewer in zip(columns.children, (a1, a3), strict=True):
        shown_viewer, graph = column.children
        assert shown_viewer is viewer and isinstance(graph, GraphViewer)
        assert graph.actor == viewer.current.actor  # each graph follows its own trace
    browser.compare.value = False
    assert browser.compare_viewers == [] and isinstance(browser.viewer, TraceViewer)


def test_missing_combination_and_failed_episode_are_explained(store, tmp_path):
    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    browser = RunBrowser(copy)
    browser.select(agent_model="scripted:weak", setting="A1/full", task_id="mock_A_001")
    key = _key(browser)
    path = copy / "episodes" / f"{key}.json"
    record = json.loads(path.read_text())
    record.update(trace=None, error={"type": "RuntimeError", "message": "model down"})
    path.write_text(json.dumps(record))
    browser = RunBrowser(copy)
    browser.select(agent_model="scripted:weak", setting="A1/full", task_id="mock_A_001")
    assert browser.viewer is None and browser.body.children == ()
    assert "failed and has no trace: RuntimeError: model down" in browser.message.value
    browser.select(seed=0, setting="A3/full")
    assert isinstance(browser.viewer, TraceViewer) and browser.message.value == ""


def test_graph_is_replaced_by_a_reason_when_the_task_files_are_gone(store, tmp_path):
    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    text = (copy / "experiment.yaml").read_text().replace("examples.yaml", "gone.yaml")
    (copy / "experiment.yaml").write_text(text)
    browser = RunBrowser(copy)
    assert browser.graph_viewer is None and isinstance(browser.viewer, TraceViewer)
    reason = browser.body.children[1].value
    assert "No graph: cannot load the experiment" in reason
    assert "no such task file: data/tasks/gone.yaml" in reason


def test_a_folder_of_stores_and_a_folder_without_any(store, tmp_path):
    directory, _ = store
    shutil.copytree(directory, tmp_path / "second")
    shutil.copytree(directory, tmp_path / "first")
    browser = RunBrowser(tmp_path)
    assert browser.experiment.options == ("first", "second")
    browser.experiment.value = "second"
    assert browser.store == tmp_path / "second"
    assert isinstance(browser.viewer, TraceViewer)
    with pytest.raises(ExperimentError, match="no results store here"):
        RunBrowser(tmp_path / "first" / "traces")


def test_damaged_records_and_traces_are_skipped_and_named(store, tmp_path):
    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    browser = RunBrowser(copy)
    browser.select(agent_model="scripted:weak", setting="A1/full", task_id="mock_A_001")
    record = copy / "episodes" / f"{_key(browser)}.json"
    record.write_text(record.read_text()[:50])
    browser.select(agent_model="scripted:strong", setting="A3/full", task_id="mock_C_001")
    trace = copy / "traces" / f"{_key(browser)}.jsonl"
    trace.write_text(trace.read_text()[:-200])
    # damaged on disk after the store was read: the episode explains itself, nothing raises
    browser.select(agent_model="scripted:weak")
    browser.select(agent_model="scripted:strong")
    assert browser.viewer is None and "cannot be shown" in browser.message.value
    browser = RunBrowser(copy)
    assert len(browser.frame) == 6
    assert {s.split(":")[0] for s in browser.skipped} == {str(record), str(trace)}
    assert "Skipped 2 damaged file(s)" in browser.skipped_note.value
    assert str(trace) in browser.skipped_note.value
    browser.select(agent_model="scripted:strong", setting="A1/full", task_id="mock_C_001")
    assert isinstance(browser.viewer, TraceViewer)
