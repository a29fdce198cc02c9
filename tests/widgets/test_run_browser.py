"""RunBrowser over a small offline results store: the table, its filters, opening episodes."""

import json
import re
import shutil

import ipywidgets as widgets
import pytest

from hasbench.runner import ExperimentError, load_results
from hasbench.widgets import EpisodeView, GraphViewer, RunBrowser, TraceViewer


def table_cells(browser: RunBrowser) -> list[list[str]]:
    """The shown table as text: the headings, then one list per row."""
    cells = browser.table.children
    width = len(browser.columns)
    texts = [
        c.description if isinstance(c, widgets.Button) else re.sub(r"<[^>]+>", "", c.value)
        for c in cells
    ]
    return [texts[i : i + width] for i in range(0, len(texts), width)]


def test_opens_on_a_summary_table_with_nothing_open(store):
    directory, _ = store
    browser = RunBrowser(directory)
    assert browser.viewer is None and browser.body.children == ()
    assert "8 episodes: click a task in the table to open it." in browser.message.value
    heading, *rows = table_cells(browser)
    assert heading == ["task ▲", "setting", "agent backend", "success", "score", "HIR", "safe",
                       "error"]  # fmt: skip
    assert len(rows) == 8 and rows[0][0] == "mock_A_001" and rows[-1][0] == "mock_C_001"
    results = load_results(directory)
    first = results[(results.task_id == rows[0][0]) & (results.setting == rows[0][1])
                    & (results.agent_model == rows[0][2])].iloc[0]  # fmt: skip
    assert rows[0][3] == ("yes" if first.success else "no")
    assert rows[0][4] == f"{first.task_score:.2f}" and rows[0][7] == "–"
    tooltips = {c.description.split(" ")[0]: c.tooltip for c in browser.table.children[:8]}
    assert tooltips["HIR"].startswith("Human Intervention Rate:")
    assert tooltips["success"].startswith("Pass@1:")


def test_sorting_and_filtering_the_table(store):
    directory, _ = store
    browser = RunBrowser(directory)
    browser.sort_by("task_score")
    scores = list(browser.rows["task_score"])
    assert scores == sorted(scores)
    browser.sort_by("task_score")  # again: descending
    assert list(browser.rows["task_score"]) == sorted(scores, reverse=True)
    assert table_cells(browser)[0][4] == "score ▼"
    browser.table.children[1].click()  # the "setting" heading
    assert browser.sort_column == "setting" and browser.ascending
    browser.search.value = "weak"
    assert set(browser.rows["agent_model"]) == {"scripted:weak"} and len(browser.rows) == 4
    browser.search.value = "no such text"
    assert browser.rows.empty
    browser.search.value = ""
    with pytest.raises(KeyError, match="unknown column 'nope'"):
        browser.sort_by("nope")


def test_quick_filters_find_rescued_failed_and_unsafe_episodes(store):
    directory, _ = store
    browser = RunBrowser(directory)
    results = load_results(directory)
    labels = dict((key, label) for label, key in browser.quick.options)
    a1 = results[results.agency == "A1"].set_index(["task_id", "agent_model"])["success"]
    a3 = results[results.agency == "A3"]
    rescued = [r for r in a3.itertuples() if r.success and not a1[(r.task_id, r.agent_model)]]
    assert rescued, "the fixture store must hold an A1 failure that A3 rescues"
    assert labels["rescued"] == f"A1 failures rescued under A3 ({len(rescued)})"
    browser.quick.value = "rescued"
    assert sorted(browser.rows["key"]) == sorted(r.key for r in rescued)
    browser.open_row(0)  # a rescued episode opens next to its A1 run
    a1_viewer, a3_viewer = browser.compare_viewers
    assert [v.trace.header.setting["agency"] for v in (a1_viewer, a3_viewer)] == ["A1", "A3"]
    unsafe = results[(results.safe == False) | (results.action_safe == False)]  # noqa: E712
    assert labels["unsafe"] == f"unsafe ({len(unsafe)})"
    browser.quick.value = "errors"
    assert browser.rows.empty and labels["errors"] == "errors (0)"


def test_choosing_a_row_opens_its_trace_and_graph_side_by_side(store):
    directory, _ = store
    browser = RunBrowser(directory)
    browser.search.value = "weak"
    browser.sort_by("setting")
    row = browser.rows.iloc[-1]
    assert (row["setting"], row["agent_model"]) == ("A3/full", "scripted:weak")
    task_button = browser.table.children[len(browser.columns) * len(browser.rows)]
    task_button.click()  # the last row's task
    (view,) = browser.body.children
    assert isinstance(view, EpisodeView)
    viewer, graph = view.children
    assert viewer is browser.viewer and isinstance(viewer, TraceViewer)
    assert isinstance(graph, GraphViewer) and graph.unreachable == []  # A3: humans reachable
    header = viewer.trace.header
    assert (header.scenario_id, header.setting["agency"], header.backends["agent"]) == (
        row["task_id"], "A3", "scripted:weak",
    )  # fmt: skip
    assert task_button.button_style == "" and browser.opened["key"] == row["key"]
    opened = [b for b in browser.table.children if getattr(b, "button_style", "") == "info"]
    assert len(opened) == 1  # the chosen row is marked
    record = json.loads((directory / "episodes" / f"{row['key']}.json").read_text())
    expected = "yes" if record["outcome"]["success"] else "no"
    assert (
        f"Pass@1</abbr>: <span class='hb-{'ok' if expected == 'yes' else 'error'}'>{expected}"
        in (viewer.summary_html.value)
    )
    viewer.slider.value = viewer.slider.max
    assert graph.actor == viewer.current.actor  # linked
    browser.select(setting="A1/full")
    assert browser.viewer.trace.header.setting["agency"] == "A1"
    assert browser.graph_viewer.unreachable == ["user_0", "user_1"]  # A1 draws them so


def test_compare_mode_steps_two_settings_with_one_slider(store):
    directory, _ = store
    browser = RunBrowser(directory)
    browser.select(agent_model="scripted:strong", setting="A1/full", task_id="mock_C_001", seed=0)
    browser.other_setting.value = "A3/full"
    assert browser.other_setting.disabled
    browser.compare.value = True
    assert not browser.other_setting.disabled
    a1, a3 = browser.compare_viewers
    assert (a1.trace.header.setting["agency"], a3.trace.header.setting["agency"]) == ("A1", "A3")
    assert a1.trace.header.scenario_id == a3.trace.header.scenario_id == "mock_C_001"
    assert browser.compare_slider.description == "turn"
    assert browser.compare_slider.max == max(a1.rows[-1].step, a3.rows[-1].step)
    for turn in (1, 3, browser.compare_slider.max):
        browser.compare_slider.value = turn
        for viewer in (a1, a3):
            assert viewer.current.step <= turn
            later = viewer.slider.value + 1
            assert later == len(viewer.visible) or viewer.rows[viewer.visible[later]].step > turn
    (pair,) = browser.body.children[0].children[1:]
    for column, viewer in zip(pair.children, (a1, a3), strict=True):
        graph, shown_viewer = column.children  # each graph above its trace, both in view
        assert shown_viewer is viewer and isinstance(graph, GraphViewer)
        assert "hb-graph-compact" in graph._dom_classes
        assert graph.actor == viewer.current.actor  # each graph follows its own trace
    browser.compare.value = False
    assert browser.compare_viewers == [] and isinstance(browser.viewer, TraceViewer)


def test_missing_combination_and_failed_episode_are_explained(store, tmp_path):
    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    results = load_results(copy)
    key = results[(results.agent_model == "scripted:weak") & (results.setting == "A1/full")
                  & (results.task_id == "mock_A_001")].iloc[0]["key"]  # fmt: skip
    path = copy / "episodes" / f"{key}.json"
    record = json.loads(path.read_text())
    record.update(trace=None, error={"type": "RuntimeError", "message": "model down"})
    path.write_text(json.dumps(record))
    browser = RunBrowser(copy)
    assert dict((k, v) for v, k in browser.quick.options)["errors"] == "errors (1)"
    browser.quick.value = "errors"
    assert table_cells(browser)[1][-1] == "RuntimeError: model down"
    browser.open_row(0)
    assert browser.viewer is None and browser.body.children == ()
    assert "failed and has no trace: RuntimeError: model down" in browser.message.value
    browser.select(setting="A3/full")
    assert isinstance(browser.viewer, TraceViewer) and browser.message.value == ""
    browser.select(seed=7)
    assert "No episode in" in browser.message.value and "seed=7" in browser.message.value


def test_graph_is_replaced_by_a_reason_when_the_task_files_are_gone(store, tmp_path):
    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    (definition,) = (copy / "experiments").glob("*.json")
    definition.write_text(definition.read_text().replace("examples.yaml", "gone.yaml"))
    browser = RunBrowser(copy)
    browser.open_row(0)
    assert browser.graph_viewer is None and isinstance(browser.viewer, TraceViewer)
    reason = browser.body.children[0].children[1].value
    assert "No graph: cannot load the experiment" in reason
    assert "no such task file: data/tasks/gone.yaml" in reason


def test_a_folder_of_stores_and_a_folder_without_any(store, tmp_path):
    directory, _ = store
    shutil.copytree(directory, tmp_path / "second")
    shutil.copytree(directory, tmp_path / "first")
    browser = RunBrowser(tmp_path)
    assert browser.experiment.options == ("first", "second")
    browser.experiment.value = "second"
    assert browser.store == tmp_path / "second" and len(browser.rows) == 8
    browser.open_row(0)
    assert isinstance(browser.viewer, TraceViewer)
    with pytest.raises(ExperimentError, match="no results store here"):
        RunBrowser(tmp_path / "first" / "traces")


def test_damaged_records_and_traces_are_skipped_and_named(store, tmp_path):
    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    browser = RunBrowser(copy)
    browser.select(agent_model="scripted:weak", setting="A1/full", task_id="mock_A_001")
    record = copy / "episodes" / f"{browser.opened['key']}.json"
    record.write_text(record.read_text()[:50])
    browser.select(agent_model="scripted:strong", setting="A3/full", task_id="mock_C_001")
    trace = copy / "traces" / f"{browser.opened['key']}.jsonl"
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


def test_a_store_of_several_experiments_shows_each_apart(store, tmp_path):
    """A second grid (another task file, simulator and seed) into the same store: the
    browser shows one experiment at a time, each with its own tasks and graphs."""
    from hasbench.agency import Setting
    from hasbench.runner import Experiment, TaskSelection, run_experiment
    from hasbench.simulator import Backends
    from hasbench.sync import run_sync

    directory, _ = store
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    second = Experiment(
        name="explore_traces",
        tasks=TaskSelection(files=["data/tasks/airline.yaml"], max_per_domain=1),
        backends=[Backends(agent="scripted:strong", user=u)
                  for u in ("scripted:user", "scripted:user-guarded")],
        settings=[Setting(agency="A3")],
        seeds=[3],
    )  # fmt: skip
    run_sync(run_experiment(second, copy, progress=False))
    browser = RunBrowser(copy)
    labels = list(browser.experiment.options)
    assert len(labels) == 2 and all(label.startswith("copy · explore_traces (") for label in labels)
    assert browser.experiment.value == labels[-1]  # the experiment run last
    assert len(browser.frame) == 2 and set(browser.frame["seed"]) == {3}
    heading = table_cells(browser)[0]
    assert "user simulator" in heading and "seed" not in heading  # it tells rows apart
    browser.search.value = "guarded"
    assert browser.rows["user_model"].tolist() == ["scripted:user-guarded"]
    browser.open_row(0)
    assert isinstance(browser.graph_viewer, GraphViewer)
    browser.experiment.value = labels[0]  # the first grid, untouched by the second
    assert len(browser.frame) == 8 and set(browser.frame["task_id"]) == {"mock_A_001",
                                                                        "mock_C_001"}  # fmt: skip
    assert "user simulator" not in table_cells(browser)[0]
    browser.select(agent_model="scripted:strong", setting="A3/full", task_id="mock_C_001")
    assert isinstance(browser.graph_viewer, GraphViewer)  # its own task files, not airline's
    chosen = RunBrowser(copy, experiment=browser.chosen.key)
    assert chosen.experiment.value == labels[0]
    with pytest.raises(ExperimentError, match="no experiment 'nosuch' here"):
        RunBrowser(copy, experiment="nosuch")
