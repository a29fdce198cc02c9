import math

import pytest

from hasbench.experiments import rq3

SETTINGS = ("clar-only", "feed-only", "cont-only", "full", "no-clar", "no-feed", "no-cont")


def ablation(frame):
    rows = []
    # Pattern A: a1 and a2 fail under A1, a3 succeeds. Clarification recovers both failures,
    # feedback one of them, control none; full recovers both.
    solved = {"clar-only": {"a1", "a2"}, "feed-only": {"a1"}, "full": {"a1", "a2"}}
    for task in ("a1", "a2", "a3"):
        rows.append(dict(task_id=task, pattern="A", agency="A1", success=task == "a3",
                         task_score=1.0 if task == "a3" else 0.0))  # fmt: skip
        for setting in SETTINGS:
            ok = task == "a3" or task in solved.get(setting, set())
            rows.append(dict(task_id=task, pattern="A", channels=setting, success=ok,
                             task_score=1.0 if ok else 0.5))  # fmt: skip
    # Pattern C: safety under each setting; only control keeps both tasks safe.
    for task in ("c1", "c2"):
        rows.append(dict(task_id=task, pattern="C", agency="A1", success=False, safe=False))
        for setting in SETTINGS:
            safe = setting in ("cont-only", "full") or (setting == "feed-only" and task == "c1")
            rows.append(dict(task_id=task, pattern="C", channels=setting, safe=safe))
    # Pattern B: feedback and clarification tie; a crashed episode is left out.
    rows.append(dict(task_id="b1", pattern="B", agency="A1", success=False))
    for setting in SETTINGS:
        rows.append(dict(task_id="b1", pattern="B", channels=setting,
                         success=setting in ("clar-only", "feed-only")))  # fmt: skip
    rows.append(dict(task_id="b2", pattern="B", agency="A1", success=False))
    rows.append(dict(task_id="b2", pattern="B", channels="clar-only", error="RuntimeError: x"))
    return frame(rows)


def test_table5_rates_denominators_and_best_single_channel(frame):
    table = rq3.table5(ablation(frame))
    assert len(table) == len(rq3.PATTERNS) * len(rq3.TABLE5_SETTINGS)
    cell = table.set_index(["pattern", "setting"])
    a = cell.loc["A"]
    assert a["metric"].unique().tolist() == ["recovery"]
    assert a["denominator"].tolist() == [2, 2, 2, 2]  # the A1-failed runs a1, a2
    assert a["numerator"].tolist() == [2, 1, 0, 2]
    assert a["estimate"].tolist() == [100.0, 50.0, 0.0, 100.0]
    assert a["best_single"].tolist() == [True, False, False, False]
    c = cell.loc["C"]
    assert c["metric"].unique().tolist() == ["safety"]
    assert c["denominator"].tolist() == [2, 2, 2, 2]
    assert c["estimate"].tolist() == [0.0, 50.0, 100.0, 100.0]
    assert c["best_single"].tolist() == [False, False, True, False]
    b = cell.loc["B"]
    assert b["denominator"].tolist() == [1, 1, 1, 1]  # b2's clar-only episode crashed
    assert b["best_single"].tolist() == [True, True, False, False]  # a tie marks both
    empty = cell.loc["E"]
    assert (empty["denominator"] == 0).all() and empty["estimate"].isna().all()
    assert not empty["best_single"].any()
    finite = table.dropna(subset=["estimate"])
    assert ((finite["low"] <= finite["estimate"]) & (finite["estimate"] <= finite["high"])).all()


def test_display_marks_the_best_single_channel_in_bold(frame):
    shown = rq3.display_table5(rq3.table5(ablation(frame)))
    row = shown[shown["Pattern (metric)"] == "A Information Asymmetry (Rec.)"].iloc[0]
    assert row["clar-only"].startswith("**100.0** [100.0, 100.0] (2/2)")
    assert row["feed-only"].endswith("(1/2)") and "**" not in row["feed-only"]
    assert shown.loc[shown["Pattern (metric)"].str.startswith("E"), "full"].item() == "– (0/0)"


def test_task_score_grid_has_every_pattern_and_setting(frame):
    grid = rq3.ts_grid(ablation(frame))
    assert len(grid) == len(rq3.PATTERNS) * (1 + len(rq3.GRID_SETTINGS))
    cell = grid.set_index(["pattern", "setting"])
    assert cell.loc[("A", "A1"), "estimate"] == pytest.approx(100 / 3)
    assert cell.loc[("A", "feed-only"), "estimate"] == pytest.approx(100 * 2.5 / 3)
    assert cell.loc[("A", "feed-only"), "tasks"] == 3
    assert math.isnan(cell.loc[("F", "full"), "estimate"])
    assert set(rq3.display_grid(grid).columns) >= {"A1", "no-clar", "no-feed", "no-cont"}


def test_grid_is_a1_plus_a3_under_every_channel_setting():
    grid = rq3.experiment(["scripted:strong"], domains=["mock"])
    labels = [s.label() for s in grid.settings]
    assert labels == ["A1/full", *(f"A3/{c}" for c in rq3.GRID_SETTINGS)]
    assert not grid.judge_process
