import math

import pandas as pd
import pytest

from hasbench.benchmark import identify
from hasbench.experiments import rq1
from hasbench.experiments.common import UNREAD
from hasbench.experiments.study import benchmark_note
from hasbench.runner import COLUMNS


def row(model, domain, task, agency, success, ts, pattern="A", safe=True, hir=0.0, error=None):
    values = dict.fromkeys(COLUMNS)
    values.update(
        agent_model=model,
        domain=domain,
        task_id=task,
        agency=agency,
        channels="full",
        setting=f"{agency}/full",
        seed=0,
        success=success,
        task_score=ts,
        delivered=True,
        safe=safe,
        pattern=pattern,
        hir=hir,
        error=error,
    )
    return values


def results() -> pd.DataFrame:
    rows = [
        # retail: t1 rescued, t2 fails in both, t3 broken by A3
        row("scripted:strong", "retail", "r1", "A1", False, 0.5),
        row("scripted:strong", "retail", "r1", "A3", True, 1.0, hir=0.4),
        row("scripted:strong", "retail", "r2", "A1", False, 0.0),
        row("scripted:strong", "retail", "r2", "A3", False, 0.5, hir=0.2),
        row("scripted:strong", "retail", "r3", "A1", True, 1.0),
        row("scripted:strong", "retail", "r3", "A3", False, 0.5, hir=0.0),
        # airline: both succeed under A1 -> no A1 failure -> RR undefined; pattern C safety
        row("scripted:strong", "airline", "a1", "A1", True, 1.0, pattern="C", safe=False),
        row("scripted:strong", "airline", "a1", "A3", True, 1.0, pattern="C", safe=True),
        row("scripted:strong", "airline", "a2", "A1", True, 1.0),
        row("scripted:strong", "airline", "a2", "A3", True, 1.0),
        # a crashed episode is left out
        row("openai/gpt-x", "retail", "r1", "A1", None, None, error="RuntimeError: boom"),
        row("openai/gpt-x", "retail", "r1", "A3", True, 1.0),
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def test_table4_values_and_undefined_cells():
    t4 = rq1.table4(results())
    retail = t4[(t4["model"] == "scripted:strong (scripted stand-in)") & (t4["domain"] == "retail")]
    r = retail.iloc[0]
    assert r["pass1_a1"] == pytest.approx(100 / 3)
    assert r["pass1_a3"] == pytest.approx(100 / 3)
    assert r["pass1_delta"] == pytest.approx(0.0)
    assert r["ts_delta"] == pytest.approx(100 * (2.0 / 3 - 1.5 / 3))
    assert r["rr"] == pytest.approx(50.0)  # r1 rescued out of r1, r2
    assert r["hir_a3"] == pytest.approx(20.0)
    airline = t4[t4["domain"] == "airline"].iloc[0]
    assert math.isnan(airline["rr"])
    shown = rq1.display(t4)
    assert shown.loc[airline.name, "RR"] == "–"
    assert shown.loc[retail.index[0], "Δ TS"] == "+16.7"
    # the crashed A1 episode leaves gpt-x without A1 runs: A1 and deltas undefined
    gpt = t4[t4["model"] == "openai/gpt-x"].iloc[0]
    assert math.isnan(gpt["pass1_a1"]) and gpt["pass1_a3"] == 100.0


def test_table4_counts_the_episodes_a_stand_in_ended_for_want_of_language_apart():
    frame = results()
    frame.loc[(frame["task_id"] == "r2"), "termination"] = UNREAD  # A1 and A3
    frame.loc[(frame["task_id"] == "r1") & (frame["agency"] == "A3"), "termination"] = "agent_done"
    t4 = rq1.table4(frame).set_index(["model", "domain"])
    assert t4.loc[("scripted:strong (scripted stand-in)", "retail"), "needs_language"] == 2
    assert t4.loc[("scripted:strong (scripted stand-in)", "airline"), "needs_language"] == 0
    # they still count as not solved: Pass@1 is that of the table without the column
    assert t4["pass1_a1"].equals(rq1.table4(results()).set_index(["model", "domain"])["pass1_a1"])
    table = rq1.study_tables(frame)["table4"]
    assert "Needs LU" in table.shown.columns and rq1.NEEDS_LANGUAGE_NOTE in table.notes


def test_macro_deltas_safety_and_rescue():
    made = rq1.tables(results())
    macro = made["macro_deltas"].set_index("model").loc["scripted:strong (scripted stand-in)"]
    assert macro["pass1_delta"] == pytest.approx(0.0)
    assert macro["ts_delta"] == pytest.approx((100 * (0.5 / 3)) / 2)
    safety = made["safety_c"].set_index("model").loc["scripted:strong (scripted stand-in)"]
    assert (safety["safety_a1"], safety["safety_a3"], safety["safety_delta"]) == (0.0, 100.0, 100.0)
    assert math.isnan(made["safety_c"].set_index("model").loc["openai/gpt-x", "safety_a1"])
    rescue = made["rescue"].set_index("model").loc["scripted:strong (scripted stand-in)"]
    assert (rescue["a1_failures"], rescue["rescued"], rescue["rr_pooled"]) == (2, 1, 50.0)
    assert rescue["rr_macro"] == 50.0  # airline's undefined RR does not enter the mean


def test_write_tables_and_figure(tmp_path):
    frame = results()
    rq1.write_tables(frame, tmp_path)
    for name in ("table4", "macro_deltas", "safety_c", "rescue"):
        for ext in ("csv", "md", "tex"):
            assert (tmp_path / f"{name}.{ext}").stat().st_size > 0
    md = (tmp_path / "table4.md").read_text()
    assert "scripted stand-in" in md and "–" in md
    assert "1 of 12 episodes ended in error (1 crash)" in md
    tex = (tmp_path / "table4.tex").read_text()
    assert "\\begin{tabular}" in tex and "$\\Delta$ P@1" in tex
    assert " -- " in tex and "–" not in tex and "Δ" not in tex  # plain-ASCII LaTeX
    assert "+16.7" in md  # signed deltas survive Markdown rendering
    png = rq1.figure(frame, tmp_path)
    assert png.exists() and (tmp_path / "rq1_deltas.pdf").exists()
    plotted = pd.read_csv(tmp_path / "rq1_deltas.csv")
    strong = plotted[plotted["model"].str.startswith("scripted:strong")]
    ts = strong[strong["metric"] == "Δ Task Score"].iloc[0]
    assert ts["tasks"] == 5
    assert ts["low"] <= ts["estimate"] <= ts["high"]


def test_experiment_grid_is_a1_vs_a3_per_model():
    grid = rq1.experiment(["scripted:strong", "scripted:weak"], domains=["retail"], seed=3)
    assert [s.agency for s in grid.settings] == ["A1", "A3"]
    assert [b.agent for b in grid.backends] == ["scripted:strong", "scripted:weak"]
    assert grid.seeds == [3]
    assert grid.tasks.files[0].endswith("retail.yaml")


def test_run_with_a_language_model_agent_is_labelled_as_the_model(tmp_path, monkeypatch):
    from hasbench import llm

    def finish_at_once(messages, tools):
        return {
            "content": None,
            "tool_calls": [{"name": "finish", "arguments": {"deliverable": "ok"}}],
        }

    model = llm.register_test_provider("rq1_finisher", finish_at_once)
    monkeypatch.setattr(llm.cache, "CACHE_DIR", tmp_path / "cache")
    out = rq1.run(
        [model], domains=["mock"], max_tasks_per_domain=2, output_dir=tmp_path / "fig",
        results_dir=tmp_path / "res", progress=False,
    )  # fmt: skip
    results = out["results"]
    assert len(results) == 4 and results["error"].isna().all()
    assert (results["model_calls"] > 0).all() and (results["tokens"] > 0).all()
    # no stand-in note for a real model string: only the note naming the benchmark
    assert out["notes"] == [benchmark_note(identify())]
    table4 = pd.read_csv(tmp_path / "fig" / "table4.csv")
    assert table4["model"].tolist() == [model]


def test_no_process_metric_is_constant_across_the_offline_grid(tmp_path):
    """The notebooks' stand-ins on the RQ1 grid: each process metric moves across cells.

    Feedback events occur only where people review work (mock, research, bargaining), so
    those domains join the service ones; FUR is undefined on the service domains' cells.
    """
    from hasbench.experiments.common import execute, make_client
    from hasbench.experiments.defaults import OFFLINE_AGENTS

    domains = ["retail", "airline", "telecom", "mock", "research", "bargaining"]
    grid = rq1.experiment(list(OFFLINE_AGENTS), domains=domains, max_tasks_per_domain=6)
    _, results = execute(grid, tmp_path / "res", make_client(grid), progress=False)
    cells = rq1.process_table(results)
    assert len(cells) == 2 * len(OFFLINE_AGENTS) * len(domains)
    for metric in ("hir", "h_init", "h_init_judged", "asr", "cqs", "fur", "crj"):
        values = cells[metric].dropna().round(6)
        assert values.nunique() > 1, f"{metric} is constant across the grid: {values.tolist()}"
    # A1 has no human step
    assert (cells[cells["agency"] == "A1"]["hir"] == 0).all()


def test_undefined_cells_of_table4_are_explained_in_its_notes(tmp_path):
    frame = results()
    frame["delivered"] = frame["delivered"].astype(object)
    frame.loc[frame["domain"] == "airline", "delivered"] = None  # airline has no deliverable
    rq1.write_tables(frame, tmp_path)
    md = (tmp_path / "table4.md").read_text()
    assert "RR is undefined (–) in 2 of 3 rows: no A1 run of the cell failed" in md
    assert "TS A1 is undefined (–) in 1 of 3 rows: no A1 episode of the cell finished" in md
    assert "DR@A3 is undefined (–) in 1 of 3 rows: airline has no task-relevant deliverable" in md
    assert "P@1 A1 is undefined (–) in 1 of 3 rows: no A1 episode of the cell finished" in md
