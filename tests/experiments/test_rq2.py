import asyncio
import json
import math

import pandas as pd
import pytest

from hasbench.agency import Setting
from hasbench.experiments import rq2
from hasbench.llm import LLMClient, register_test_provider
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, Episode

STRONG = "scripted:strong (scripted stand-in)"


def sweep(frame):
    rows = []
    outcomes = {  # task: (A1, A3, A4) success
        "t1": (False, True, False),  # broken by A4
        "t2": (False, False, True),  # rescued by A4
        "t3": (True, True, True),
        "t4": (False, False, False),
    }
    for task, flags in outcomes.items():
        for level, ok in zip(rq2.LEVELS, flags, strict=True):
            rows.append(
                dict(task_id=task, agency=level, success=ok, task_score=1.0 if ok else 0.25,
                     hir=0.0 if level == "A1" else 0.3, trace=f"traces/{task}-{level}.jsonl",
                     cqs=1.0 if task in ("t1", "t2") and level != "A1" else float("nan"),
                     cqs_events=1 if task in ("t1", "t2") and level != "A1" else 0)
            )  # fmt: skip
    rows.append(dict(task_id="t5", agency="A3", success=None, error="RuntimeError: boom"))
    return frame(rows)


def test_figure2_table_means_cis_and_event_conditioned_cells(frame):
    table = rq2.figure2_table(sweep(frame))
    assert len(table) == 3 * (len(rq2.OUTCOME_METRICS) + len(rq2.PROCESS_METRICS))
    cell = table.set_index(["level", "metric"])
    assert cell.loc[("A3", "pass1"), "estimate"] == pytest.approx(50.0)
    assert cell.loc[("A3", "pass1"), "tasks"] == 4  # the crashed t5 is left out
    assert cell.loc[("A4", "task_score"), "estimate"] == pytest.approx(100 * (2 + 0.5) / 4)
    cqs = cell.loc[("A3", "cqs")]
    assert (cqs["tasks"], cqs["estimate"], cqs["coverage"]) == (2, 1.0, 0.5)
    assert cell.loc[("A1", "cqs"), "tasks"] == 0 and math.isnan(cell.loc[("A1", "cqs"), "estimate"])
    finite = table.dropna(subset=["estimate"])
    assert ((finite["low"] <= finite["estimate"]) & (finite["estimate"] <= finite["high"])).all()
    shown = rq2.display_figure2(table)
    assert list(shown.columns) == ["Model", "Domain", "Metric", "A1", "A3", "A4"]
    assert shown.loc[shown["Metric"] == "CQS", "A1"].item() == "– (n=0; cov 0.00)"


def test_rescued_and_broken_tasks_as_counts_and_lists(frame):
    results = sweep(frame)
    changes = rq2.a4_changes(results)
    assert changes[["task_id", "change"]].values.tolist() == [["t1", "broken"], ["t2", "rescued"]]
    assert changes.loc[0, "trace_a4"] == "traces/t1-A4.jsonl"
    counts = rq2.a4_vs_a3(results, changes).iloc[0]
    assert (counts["paired"], counts["solved_a3"], counts["solved_a4"]) == (4, 2, 2)
    assert (counts["rescued"], counts["broken"]) == (1, 1)
    assert (counts["rescued_tasks"], counts["broken_tasks"]) == ("t2", "t1")


def a4_trace(task_id, store):
    """Run a real A4 episode of a mock task with the weak stand-in; store its trace."""
    scn = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}[task_id]
    trace = asyncio.run(Episode(scn, Setting(agency="A4"), Backends(agent="scripted:weak")).run())
    path = store / "traces" / f"{task_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    trace.write(path)
    return trace


def broken(*task_ids):
    return pd.DataFrame(
        [dict(model=STRONG, domain="mock", task_id=t, seed=0, change="broken", ts_a3=1.0,
              ts_a4=0.0, trace_a4=f"traces/{t}.jsonl") for t in task_ids]
    )  # fmt: skip


def test_rule_judge_classifies_the_broken_runs_from_their_a4_traces(tmp_path):
    proactive = a4_trace("mock_E_001", tmp_path)  # has a spontaneous feedback at turn 4
    a4_trace("mock_A_001", tmp_path)  # no spontaneous_config
    harm, evidence = asyncio.run(
        rq2.classify_harm(broken("mock_E_001", "mock_A_001"), tmp_path, "rule", LLMClient())
    )
    assert list(harm.columns) == rq2.HARM_COLUMNS and len(harm) == 2 == len(evidence)
    by_task = harm.set_index("task_id")
    assert by_task.loc["mock_A_001", "category"] == "other"
    human = [e for e in proactive.events if e.initiator == "human" and e.type == "channel_request"]
    row = by_task.loc["mock_E_001"]
    assert row["evidence_seq"].split()[0] == str(human[0].seq)
    assert row["inputs"] == f"seq {human[0].seq}: {human[0].payload.content}"
    if pd.isna(row["category"]):  # a missing verdict carries its reason
        assert "cannot tell" in row["missing_reason"]
    else:
        assert row["category"] in ("premature_intervention", "redundant_or_distracting")
    counts = rq2.harm_counts(harm, pd.DataFrame({"model": [STRONG], "domain": ["mock"]}))
    assert counts["count"].sum() == 2 and set(counts["category"]) >= {"other", "missing"}


def test_llm_judge_classification_keeps_the_cited_evidence(tmp_path):
    a4_trace("mock_E_001", tmp_path)
    reply = {"category": "redundant_or_distracting", "evidence_seq": [12], "rationale": "r"}
    prompts = []

    def respond(messages, tools):
        prompts.append(messages[-1]["content"])
        return {"content": json.dumps(reply), "tool_calls": []}

    judge = register_test_provider("rq2_harm_judge", respond)
    harm, evidence = asyncio.run(
        rq2.classify_harm(broken("mock_E_001"), tmp_path, judge, LLMClient())
    )
    assert harm.loc[0, "category"] == "redundant_or_distracting"
    assert harm.loc[0, "evidence_seq"] == "12" and harm.loc[0, "explanation"] == "r"
    assert "Under A3 the task succeeded (task score 1.00)" in prompts[0]
    assert '"initiator": "human"' in prompts[0]
    assert evidence[0]["evidence"]["raw_output"] == json.dumps(reply)


def test_grid_and_spontaneous_note():
    grid = rq2.experiment(["scripted:strong"], domains=["mock"], max_tasks_per_domain=10)
    assert [s.agency for s in grid.settings] == ["A1", "A3", "A4"] and grid.judge_process
    assert "1 of 10 tasks define one" in rq2.spontaneous_note(grid)


def test_a_warm_cache_rerun_makes_no_model_calls(tmp_path, monkeypatch):
    from hasbench import llm

    def agent(messages, tools):
        return {
            "content": None,
            "tool_calls": [{"name": "finish", "arguments": {"deliverable": "ok"}}],
        }

    def judge(messages, tools):
        return {"content": '{"holds": true, "self_initiated": 1}', "tool_calls": []}

    monkeypatch.setattr(llm.cache, "CACHE_DIR", tmp_path / "cache")
    models = [register_test_provider("rq2_agent", agent)]
    judge_model = register_test_provider("rq2_judge", judge)
    runs = []
    for store in ("first", "second"):
        out = rq2.run(models, judge_model=judge_model, domains=["mock"], max_tasks_per_domain=2,
                      output_dir=tmp_path / store, progress=False,
                      results_dir=tmp_path / f"res-{store}" / "results")  # fmt: skip
        runs.append(json.loads((tmp_path / store / "manifest.json").read_text()))
        assert out["results"]["error"].isna().all()
    assert runs[0]["model_calls"] > 0 and runs[0]["episodes_run"] == 6
    assert runs[1]["model_calls"] == 0 and runs[1]["cache_hits"] == runs[0]["model_calls"]
    # a new results store with no other beside it (hasbench.runner.reuse): every episode ran again
    assert runs[1]["episodes_run"] == 6
