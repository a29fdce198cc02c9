import pytest

from hasbench.experiments import rq4


def personas(frame):
    rows = []
    values = {  # persona: per task (success, task_score, hir, turns, asks)
        "mock_cautious": {"t1": (False, 0.5, 0.3, 8, 3), "t2": (False, 0.0, 0.4, 6, 2)},
        "mock_cooperative": {"t1": (True, 1.0, 0.2, 6, 1), "t2": (True, 1.0, 0.2, 6, 1)},
        "mock_impatient": {"t1": (True, 1.0, 0.2, 7, 1), "t2": (False, 0.5, 0.3, 7, 1)},
    }
    for persona, tasks in values.items():
        for task, (ok, ts, hir, turns, asks) in tasks.items():
            rows.append(dict(task_id=task, persona=persona, success=ok, task_score=ts, hir=hir,
                             turns=turns, cqs_events=asks))  # fmt: skip
    # t3 has no finished episode under mock_impatient: left out of every persona's values
    rows.append(dict(task_id="t3", persona="mock_cautious", success=True))
    rows.append(dict(task_id="t3", persona="mock_cooperative", success=True))
    rows.append(dict(task_id="t3", persona="mock_impatient", error="RuntimeError: x"))
    return frame(rows)


def test_ranges_are_max_minus_min_of_the_persona_values_with_paired_cis(frame):
    made = rq4.tables(personas(frame))
    values = made["table6_personas"].set_index("persona")
    assert len(values) == 3 and (values["tasks"] == 2).all()
    assert values.loc["mock_cautious", "task_score"] == pytest.approx(25.0)
    assert values.loc["mock_cooperative", "pass1"] == pytest.approx(100.0)
    assert values.loc["mock_cautious", "asks"] == pytest.approx(2.5)
    row = made["table6"].iloc[0]
    assert (row["personas"], row["tasks"]) == (3, 2)
    for metric in rq4.METRICS:
        spread = values[metric].max() - values[metric].min()
        assert row[f"{metric}_range"] == pytest.approx(spread)
        assert row[f"{metric}_low"] <= row[f"{metric}_high"]
    assert row["task_score_max_persona"] == "mock_cooperative"
    assert row["task_score_min_persona"] == "mock_cautious"
    assert row["turns_range"] == pytest.approx(1.0)


def test_display_puts_the_range_row_under_the_persona_rows(frame):
    made = rq4.tables(personas(frame))
    shown = rq4.display(made["table6"], made["table6_personas"])
    assert shown["Persona"].tolist()[-1] == "range (n=2 tasks)"
    assert shown.iloc[-1]["TS"].startswith("75.0 [")
    assert list(shown.columns) == ["Model", "Domain", "Persona", "TS", "Pass@1", "HIR", "Turns",
                                   "Ask"]  # fmt: skip


def test_each_domain_runs_under_its_own_personas():
    grid = rq4.experiment(["scripted:strong"], "retail")
    assert [s.persona for s in grid.settings] == [
        "retail_bargain_hunter", "retail_careful_shopper", "retail_distracted_customer",
    ]  # fmt: skip
    assert {s.agency for s in grid.settings} == {"A3"} and grid.name == "rq4_retail"
    with pytest.raises(ValueError, match="persona"):
        rq4.experiment(["scripted:strong"], "no_such_domain")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("domains", "tasks"),
    [(["telecom", "coding", "bargaining"], 8), (["retail", "airline", "research"], 16)],
)
def test_every_persona_gives_its_own_table6_row_offline(tmp_path, domains, tasks):
    """With the offline stand-in and scripted user, no two personas of a domain give the same
    Table 6 row: the three pairs that once did (telecom novice and tinkerer, coding product
    owner and senior reviewer, bargaining fair dealer and risk-averse party) now differ
    because a human's consent to a risky action grows with its risk tolerance; in the other
    three domains the personas differ too (retail's bargain hunter and distracted customer
    give the same row over 8 tasks and differ in HIR, turns and asks over 16)."""
    made = rq4.run(
        domains=domains, max_tasks_per_domain=tasks,
        output_dir=tmp_path / "out", results_dir=tmp_path / "runs", progress=False,
    )["tables"]["table6_personas"]  # fmt: skip
    columns = ["task_score", "pass1", "hir", "turns", "asks"]
    for domain, part in made.groupby("domain"):
        rows = [tuple(round(v, 6) for v in row) for row in part[columns].itertuples(index=False)]
        assert len(set(rows)) == len(rows) == 3, domain


def test_table6_says_its_brackets_are_cis_of_paired_differences(frame, tmp_path):
    from hasbench.experiments.study import Table, write_tables

    tables = rq4.tables(personas(frame))
    notes = rq4.table6_notes(tables["table6"])
    assert "paired difference" in notes[0] and "can reach below 0" in notes[0]
    shown = rq4.display(tables["table6"], tables["table6_personas"])
    write_tables(tmp_path, {"table6": Table(tables["table6"], shown, 3, tuple(notes))}, [])
    assert "paired difference" in (tmp_path / "table6.md").read_text()
