import math

import pandas as pd
import pytest

from hasbench.experiments import common


def test_resolve_domains_keeps_existing_and_falls_back_with_a_note(capsys, monkeypatch):
    assert common.resolve_domains(["retail", "mock"], "RQ") == (["retail", "mock"], [])
    kept, notes = common.resolve_domains(["nosuchdomain", "retail"], "RQ2")
    assert kept == ["retail"] and "no tasks for nosuchdomain" in notes[0]
    real_task_files = common.task_files
    monkeypatch.setattr(
        common,
        "task_files",
        lambda d, bench=None: [] if d in ("coding", "research") else real_task_files(d, bench),
    )
    kept, notes = common.resolve_domains(["coding", "research"], "RQ2")
    assert kept == common.existing_domains() and kept  # every paper domain with a task file
    assert "coding" not in kept and "retail" in kept
    assert "coding, research" in notes[0] and "Note: RQ2" in capsys.readouterr().out
    with pytest.raises(ValueError, match="no domain"):
        common.resolve_domains([], "RQ2")


def test_local_models_without_their_extra_are_left_out_with_a_note(monkeypatch):
    monkeypatch.setattr(common.importlib.util, "find_spec", lambda name: None)
    kept, notes = common.available_models(["scripted:user", "local/smollm2-135m"], "Rob")
    assert kept == ["scripted:user"] and "local/smollm2-135m is left out" in notes[0]


def test_mean_ci_ignores_missing_values_and_is_nan_without_any():
    ci = common.mean_ci([0.0, 100.0, float("nan"), None, 100.0])
    assert ci["n"] == 3 and ci["estimate"] == pytest.approx(200 / 3)
    assert ci["low"] <= ci["estimate"] <= ci["high"]
    empty = common.mean_ci([float("nan")])
    assert empty["n"] == 0 and math.isnan(empty["estimate"])


def test_latex_escapes_and_turns_markdown_bold_into_textbf():
    import pandas as pd

    shown = pd.DataFrame({"Pattern": ["A_1 & co"], "x": ["**48.0** [1, 2] (3/4)"], "y": ["–"]})
    tex = common.latex(shown)
    assert "A\\_1 \\& co" in tex and "\\textbf{48.0} [1, 2] (3/4)" in tex and " -- " in tex
    assert "{lrr}" in tex


def test_run_notes_count_the_episodes_in_error_by_kind():
    import pandas as pd

    frame = pd.DataFrame(
        {
            "agent_model": ["openai/gpt-4o-mini"] * 4,
            "error": [None, "auth: invalid key", "server: 503", "KeyError: boom"],
            "error_kind": [None, "auth", "server", None],  # no kind: a crash
        }
    )
    assert common.run_notes(frame) == [
        "3 of 4 episodes ended in error (1 auth, 1 crash, 1 server); they are left out of "
        "every number, and the next run retries them."
    ]
    assert common.run_notes(frame.iloc[:1]) == []


def test_a_figure_is_written_as_png_and_pdf_only_with_labelled_axes(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    left, right = fig.subplots(1, 2)
    left.bar([0, 1], [1, 2])
    left.set_xlabel("agent")
    left.set_ylabel("Pass@1 (%)")
    image = right.imshow([[0, 1]])
    right.set_title("grid")
    fig.colorbar(image, ax=right, label="Task Score (%)")
    with pytest.raises(ValueError, match="figure f: axes without a label in grid"):
        common.save_figure(fig, tmp_path, "f")
    assert not list(tmp_path.iterdir())
    right.set_xlabel("setting")
    right.set_ylabel("pattern")
    png, pdf = common.save_figure(fig, tmp_path, "f")
    assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")


def test_figure_ticks_name_models_and_the_stand_in_mark_is_said_once():
    labels = [common.model_label(m) for m in ("scripted:strong", "openai/gpt-4.1")]
    assert common.tick_labels(labels) == (
        ["scripted:strong", "openai/gpt-4.1"], common.STANDIN_FOOTNOTE,
    )  # fmt: skip
    assert common.tick_labels(["openai/gpt-4.1"]) == (["openai/gpt-4.1"], None)


def test_endings_for_want_of_language_understanding_are_counted_apart(tmp_path):
    """A small real grid: of two mock tasks the stand-in reads one and cannot read the other
    (a request in words its playbook has no rule for). The table counts that ending per
    model and domain from the episodes' terminations, and the run's notes say so."""
    import yaml

    from hasbench.experiments.common import execute, make_client
    from hasbench.paths import TASKS_DIR
    from hasbench.runner import Experiment, TaskSelection
    from hasbench.scenario import load_tasks
    from hasbench.simulator import Backends

    read = next(t for t in load_tasks(TASKS_DIR / "examples.yaml") if t.task_id == "mock_C_001")
    unread = read.model_copy(update={
        "task_id": "mock_C_902",
        "task": "A customer is moving abroad; sort out their account accordingly.",
    })  # fmt: skip
    path = tmp_path / "mock.yaml"
    path.write_text(yaml.safe_dump([t.model_dump(mode="json") for t in (read, unread)]))
    grid = Experiment(
        name="unread", tasks=TaskSelection(files=[str(path)]),
        backends=[Backends(agent="scripted:standin", user="scripted:user", judge="rule")],
    )  # fmt: skip
    _, results = execute(grid, tmp_path / "runs", make_client(grid), progress=False)
    counts = common.language_understanding_endings(results)
    assert counts[["agent_model", "domain", "episodes", "endings"]].values.tolist() == [
        ["scripted:standin", "mock", 2, 1]
    ]
    assert counts["share"].tolist() == [50.0]
    assert results.set_index("task_id").loc["mock_C_902", "termination"] == common.UNREAD
    assert any("1 of 2 episodes ended because a stand-in" in n for n in common.run_notes(results))
    none = common.language_understanding_endings(results.iloc[:0], keys=())
    assert none["episodes"].tolist() == [0] and math.isnan(none["share"].iloc[0])


def test_a_zero_bar_is_a_line_on_the_axis_and_an_undefined_value_a_large_dash():
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    common.bars(ax, [0, 1, 2, 5], [40.0, 0.0, float("nan"), 10.0], 0.8, "C0", "A3",
                low=[30, 0, float("nan"), 5], high=[50, 0, float("nan"), 15])  # fmt: skip
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.0, 10.0, 40.0]  # the NaN is not drawn as a bar
    (zero,) = [c for c in ax.collections if c.get_linewidth()[0] >= 3]  # the zero's line
    (segment,) = zero.get_segments()
    assert segment[0][1] == segment[1][1] == 0 and segment[1][0] - segment[0][0] > 0.7
    (dash,) = [t for t in ax.texts if t.get_text() == common.DASH]
    assert dash.get_position()[0] == 2 and dash.get_fontsize() >= 12
    assert ax.get_xlim()[1] >= 5.8  # every place in view


def test_table_notes_say_why_cells_are_undefined():
    from hasbench import report

    table = pd.DataFrame({"domain": ["airline", "retail"], "rr": [math.nan, 50.0],
                          "dr_a3": [math.nan, 80.0], "tasks": [3, 4]})  # fmt: skip
    frame = pd.DataFrame({"domain": ["airline", "retail"]})
    notes = report.undefined_notes(
        table, {"rr": "RR", "dr_a3": "DR@A3"},
        {"rr": "no A1 run failed", "dr_a3": report.undelivered(frame, "no episode finished")},
    )  # fmt: skip
    assert notes[0] == "RR is undefined (–) in 1 of 2 rows: no A1 run failed."
    assert notes[1].startswith("DR@A3 is undefined (–) in 1 of 2 rows: airline has no ")
    assert "Delivery Rate is not defined there" in notes[1]
    assert report.undefined_notes(table, {}, {"tasks": "x"}) == []  # nothing undefined
