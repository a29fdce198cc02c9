"""Issue 17, point 5: a simulated within-subjects study, its CSV and its analysis."""

import asyncio
import itertools
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import papermill
import pytest
import scipy
from scipy import stats as sps

from hasbench.cli import main
from hasbench.docuteam import SessionLog
from hasbench.docuteam.measures import final_document, initial_document, study_rows
from hasbench.docuteam.simulation.drivers import DRIVERS, PARTS, stand_in_rules
from hasbench.docuteam.simulation.personas import load_study_personas
from hasbench.docuteam.simulation.rating import DIMENSIONS, rule_rating
from hasbench.docuteam.simulation.study import (
    SimulationConfig,
    assign_personas,
    simulate_study,
)
from hasbench.docuteam.simulation.survey import ITEMS
from hasbench.docuteam.study import analyze, load_study, write_outputs
from hasbench.docuteam.study.example import generate_example
from hasbench.docuteam.study.report import (
    SIMULATED_NOTE,
    figure3,
    likert_figure,
    simulated_study,
)
from hasbench.llm import LLMClient, ModelError, register_test_provider
from hasbench.runner.notebooks import find_notebook

ARTIFACTS = (
    {
        f"{stem}.{ext}"
        for stem in ("results", "results_raw", "table2", "agreement", "power", "stand_in_rules")
        for ext in ("csv", "md", "tex")
    }
    | {f"figure{n}.{ext}" for n in (3, 4, 5, 8) for ext in ("png", "pdf")}
    | {"analysis.json"}
)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    return out, asyncio.run(simulate_study(SimulationConfig(participants=4, budget=8), out))


def test_every_persona_meets_every_design_cell():
    personas = load_study_personas()
    design = assign_personas(16, personas)
    cells = {}
    for row in design:
        if row["condition"] == "DocuTeam":
            cells[row["participant"]] = (row["order"], row["task"], row["persona"].id)
    combos = Counter((order, task, persona) for order, task, persona in cells.values())
    assert len(combos) == 16 and set(combos.values()) == {1}


def test_the_study_csv_is_counterbalanced_and_marked_simulated(simulated):
    out, study = simulated
    data = load_study(out / "study.csv")
    assert data.meta["participants"] == "simulated" and data.synthetic
    assert data.participants == ["P01", "P02", "P03", "P04"]
    first = data.frame.drop_duplicates(["participant", "condition"])
    cells = {
        (row.condition, row.order, row.task)
        for row in first.itertuples()
        if row.condition == "DocuTeam"
    }
    assert len(cells) == 4  # DocuTeam first/second x workshop/sports day
    for _, rows in first.groupby("participant"):
        assert sorted(rows["order"]) == [1, 2] and rows["task"].nunique() == 2
    groups = set(data.frame["measure_group"])
    assert groups == {"interaction", "blind_rating", "survey", "nasa_tlx"}
    assert [s.persona for s in study.sessions[::2]] == [p.id for p in load_study_personas()]


def test_interaction_measures_and_ratings_come_from_the_session_logs(simulated):
    out, study = simulated
    data = load_study(out / "study.csv").frame
    manifest = json.loads((out / "simulation.json").read_text())
    assert manifest["note"] == "simulated participants" and manifest["dropped"] == []
    for entry in manifest["design"]:
        log = SessionLog.read(out / entry["log"])
        assert log.header.config["simulated_user"] is True
        mine = data[
            (data["participant"] == entry["participant"])
            & (data["condition"] == entry["condition"])
        ]
        expected = study_rows(log).set_index("measure")["value"].astype(float)
        got = mine[mine["measure_group"] == "interaction"].set_index("measure")["value"]
        assert got.to_dict() == expected.to_dict()
        rating = rule_rating(final_document(log), initial_document(log), log.header.task, "R1")
        rated = mine[mine["measure_group"] == "blind_rating"].set_index("measure")["value"]
        assert rated.to_dict() == {d: float(rating.scores[d]) for d in DIMENSIONS}
    questionnaires = [
        json.loads(x) for x in (out / "questionnaires.jsonl").read_text().splitlines()
    ]
    assert len(questionnaires) == 8 and all(q["simulated"] for q in questionnaires)
    ratings = [json.loads(x) for x in (out / "ratings.jsonl").read_text().splitlines()]
    assert all(r["evidence"]["changed_blocks"] is not None for r in ratings)


def test_the_same_configuration_gives_the_same_study(simulated, tmp_path):
    out, _ = simulated
    asyncio.run(simulate_study(SimulationConfig(participants=4, budget=8), tmp_path))
    assert (tmp_path / "study.csv").read_text() == (out / "study.csv").read_text()


def test_the_analysis_of_simulated_data_is_bannered_everywhere(simulated):
    _, study = simulated
    analysis = analyze(study.data)
    fig = figure3(analysis)
    assert SIMULATED_NOTE in [t.get_text() for t in fig.texts]
    tlx = likert_figure(analysis, "nasa_tlx", ["effort"], tuple("1234567"), "TLX")
    assert SIMULATED_NOTE in [t.get_text() for t in tlx.texts]


def sign_flip_p(d: np.ndarray) -> float:
    """Two-sided signed-rank p by enumerating every sign pattern (zero differences dropped)."""
    d = d[d != 0]
    ranks = sps.rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    flips = itertools.product((False, True), repeat=d.size)
    sums = np.array([ranks[np.array(signs)].sum() for signs in flips])
    return min(1.0, 2 * min(np.mean(sums <= observed + 1e-9), np.mean(sums >= observed - 1e-9)))


def test_the_simulated_study_is_analysed_within_subjects_as_written(simulated, tmp_path):
    out, study = simulated
    write_outputs(analyze(study.data, alpha=0.05), tmp_path)
    results = pd.read_csv(tmp_path / "results_raw.csv", comment="#", keep_default_na=False)
    csv = pd.read_csv(out / "study.csv", comment="#")
    scores = csv.groupby(["measure_group", "measure", "condition", "participant"])["value"].mean()
    tlx = scores["nasa_tlx"].groupby(["condition", "participant"]).mean()
    wilcoxon_options = {
        "zero_method": "wilcox", "correction": False, "method": "auto", "alternative": "two-sided"
    }  # fmt: skip
    seen = Counter()
    for r in results.itertuples():
        per_condition = tlx if r.measure == "overall" else scores[r.measure_group, r.measure]
        d = (per_condition["DocuTeam"] - per_condition["Baseline"]).sort_index().to_numpy()
        assert r.scipy_version == scipy.__version__ and r.n == 4
        if r.test == "wilcoxon":
            assert json.loads(r.options) == wilcoxon_options, r.measure
            if not d.any():
                assert (r.method, float(r.pvalue)) == ("none", 1.0) and r.note
            else:
                ties_or_zeros = len(set(np.abs(d[d != 0]))) < d.size
                assert r.method == ("permutation" if ties_or_zeros else "exact"), r.measure
                assert float(r.pvalue) == pytest.approx(sign_flip_p(d)), r.measure
        else:
            assert r.test == "paired-t" and r.measure_group == "interaction"
            assert json.loads(r.options) == {"alternative": "two-sided", "confidence": 0.95}
            t = sps.ttest_rel(d, np.zeros_like(d))
            assert float(r.pvalue) == pytest.approx(t.pvalue)
        if r.measure_group == "interaction":
            if np.ptp(d) == 0:
                assert r.shapiro_p == "" and "constant" in r.note
            else:
                shapiro = sps.shapiro(d).pvalue
                assert float(r.shapiro_p) == pytest.approx(shapiro)
                assert (r.test == "paired-t") == (shapiro >= 0.05), r.measure
        else:
            assert r.test == "wilcoxon" and r.shapiro_p == ""
        seen[r.measure_group, r.test] += 1
    assert seen["interaction", "paired-t"] and seen["interaction", "wilcoxon"]
    assert seen["blind_rating", "wilcoxon"] == 4 and seen["nasa_tlx", "wilcoxon"] == 6
    table2 = pd.read_csv(tmp_path / "table2.csv", comment="#")
    tested = results.set_index("measure")["test"]
    prefix = {"paired-t": "t(3) = ", "wilcoxon": "W = "}
    for measure, cell in zip(
        ("steering_messages", "draft_word_changes", "messages_applied"), table2["Test"], strict=True
    ):
        assert cell.startswith(prefix[tested[measure]]), (measure, cell)
    manifest = json.loads((tmp_path / "analysis.json").read_text())
    assert manifest["versions"]["scipy"] == scipy.__version__
    assert manifest["tests"]["likert"] == {
        "test": "wilcoxon", "zero_method": "wilcox", "correction": False, "method": "auto"
    }  # fmt: skip
    assert manifest["tests"]["interaction"]["alpha"] == 0.05


def test_a_rating_a_model_could_not_give_is_left_out_of_both_conditions(tmp_path):
    calls = []

    def flaky(messages, tools):
        calls.append(1)
        if len(calls) == 1:
            raise ModelError("bad_request", "refused to rate")
        return {"content": json.dumps({d: {"score": 3, "evidence": "ok"} for d in DIMENSIONS})}

    model = register_test_provider("docuteam-flaky-rater", flaky)
    config = SimulationConfig(participants=3, budget=4, raters=("rule", model), concurrency=1)
    study = asyncio.run(simulate_study(config, tmp_path, LLMClient(cache=None, max_retries=0)))
    r2 = study.data.frame[study.data.frame["rater"] == "R2"]
    assert sorted(r2["participant"].unique()) == ["P02", "P03"]
    assert len(study.dropped) == 4
    assert {d["participant"] for d in study.dropped} == {"P01"}
    assert all("refused to rate" in d["reason"] for d in study.dropped)
    manifest = json.loads((tmp_path / "simulation.json").read_text())
    assert manifest["dropped"] == study.dropped


def test_cli_simulates_and_analyses_with_a_banner_on_every_artifact(tmp_path, capsys):
    out, figures = tmp_path / "sim", tmp_path / "figures"
    code = main(
        ["study", "simulate", "--participants", "4", "--budget", "6", "--out", str(out),
         "--figures", str(figures)]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert (
        printed.startswith("simulated participants: 4")
        and f"wrote {len(ARTIFACTS)} files to {figures}" in printed
    )
    assert {p.name for p in figures.iterdir()} == ARTIFACTS
    for path in figures.glob("*.csv"):
        assert path.read_text().startswith(f"# {SIMULATED_NOTE}\n")
    for path in figures.glob("*.md"):
        assert SIMULATED_NOTE in path.read_text()
    for path in figures.glob("*.tex"):
        assert "SIMULATED PARTICIPANTS" in path.read_text()
    assert json.loads((figures / "analysis.json").read_text())["note"] == SIMULATED_NOTE
    table2 = pd.read_csv(figures / "table2.csv", comment="#")
    assert list(table2["Metric"].str.rstrip("*")) == [
        "Steering msgs.", "Draft word changes", "Msgs applied to doc."
    ]  # fmt: skip
    assert main(["study", "analyze", str(out / "study.csv"), "--out", str(tmp_path / "again")]) == 0
    assert {p.name for p in (tmp_path / "again").iterdir()} == ARTIFACTS


def test_the_report_lists_per_measure_the_stand_in_rules_that_can_drive_its_difference(
    simulated, tmp_path
):
    _, study = simulated
    analysis = analyze(study.data)
    rules = stand_in_rules(analysis)
    measures = set(analysis.results["label"])
    assert set(rules["measure"]) == measures  # every measure has its rules
    assert set(rules["part"]) == set(PARTS)  # all parts scripted offline
    results = analysis.results
    reported = set(zip(results["measure_group"], results["measure"], strict=True))
    assert set(DRIVERS) == reported  # one entry per measure a simulated study reports
    assert all(drivers and len(set(drivers)) == len(drivers) for drivers in DRIVERS.values())
    row = analysis.results.set_index("measure").loc["agent_discussions"]
    shown = rules[rules["measure"] == row["label"]]
    assert set(shown["DocuTeam - Baseline"]) == {
        f"{row['DocuTeam_mean'] - row['Baseline_mean']:+.2f}"
    }
    assert "agents start discussions only in DocuTeam" in set(shown["rule"])
    written = write_outputs(analysis, tmp_path)
    table = pd.read_csv(tmp_path / "stand_in_rules.csv", comment="#")
    assert tmp_path / "stand_in_rules.md" in written and len(table) == len(rules)
    # A part played by a model has no rules listed: its behaviour is the model's.
    data = replace(study.data, meta={**study.data.meta, "engine": "openai/gpt-4.1", "raters": "R"})
    modelled = stand_in_rules(analyze(data))
    assert set(modelled["part"]) == {"condition", "participant", "respondent"}
    # Collected data (and synthetic examples) carry no such table.
    assert not simulated_study(generate_example(seed=0))


@pytest.mark.slow
def test_a_tiny_study_runs_end_to_end_through_its_notebook(tmp_path, hasbench_kernel):
    notebook = find_notebook("docuteam_simulated_study")
    out, figures = tmp_path / "sim", tmp_path / "figures"
    result = papermill.execute_notebook(
        str(notebook),
        str(tmp_path / "run.ipynb"),
        parameters={
            "participants": 4,
            "budget": 6,
            "results_dir": str(out),
            "output_dir": str(figures),
        },
        kernel_name=hasbench_kernel,
        cwd=str(Path(notebook).parent),
        progress_bar=False,
    )
    assert {p.name for p in figures.iterdir()} == ARTIFACTS
    assert (out / "study.csv").exists() and (out / "simulation.json").exists()
    text = json.dumps([c.get("outputs", []) for c in result.cells])
    assert SIMULATED_NOTE in text and "Steering msgs." in text
    assert "zero_method" in text and "shapiro_p" in text and scipy.__version__ in text
    assert text.count("image/png") >= 4
    assert "agents start discussions only in DocuTeam" in text  # the stand-in rules table


def test_the_new_notebooks_are_registered_thin_and_stripped():
    for name, parameters in (
        ("docuteam_session", ("task", "condition", "backend", "role_backends", "log_path")),
        ("docuteam_simulated_study", ("participants", "user", "engine", "raters", "budget")),
    ):
        nb = nbformat.read(find_notebook(name), as_version=4)
        cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(cells) == 1
        assert all(f"{p} = " in cells[0].source for p in parameters)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code)
        assert nb.metadata["kernelspec"]["name"] == "hasbench"


@pytest.mark.slow
def test_the_session_notebook_opens_the_widget(tmp_path, hasbench_kernel):
    notebook = find_notebook("docuteam_session")
    log = tmp_path / "session.jsonl"
    result = papermill.execute_notebook(
        str(notebook),
        str(tmp_path / "run.ipynb"),
        parameters={"task": "sports_day", "condition": "Baseline", "log_path": str(log)},
        kernel_name=hasbench_kernel,
        cwd=str(Path(notebook).parent),
        progress_bar=False,
    )
    outputs = [o for c in result.cells for o in c.get("outputs", [])]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    header = SessionLog.read(log).header
    assert header.condition == "Baseline" and header.task_name == "sports_day"


def test_a_model_plays_the_personas_and_answers_their_questionnaires(tmp_path):
    def persona(messages, tools):
        if "Questionnaire." in messages[-1]["content"]:
            return {"content": json.dumps({"answers": {item: 4 for item in ITEMS}})}
        return {"content": json.dumps({"action": "finish", "reasoning": "Looks done to me."})}

    model = register_test_provider("docuteam-sim-persona", persona)
    config = SimulationConfig(participants=3, budget=3, user=model)
    assert config.answered_by == model and config.uses_models()
    study = asyncio.run(simulate_study(config, tmp_path, LLMClient(cache=None)))
    frame = study.data.frame
    answers = frame[frame["measure_group"].isin(["survey", "nasa_tlx"])]
    assert len(answers) == 3 * 2 * 15 and set(answers["value"]) == {4.0}
    for s in study.sessions:
        steps = [json.loads(x) for x in s.user_log.read_text().splitlines()][1:]
        assert [st["result"] for st in steps] == ["finished"]
        assert steps[0]["action"]["reasoning"] == "Looks done to me."
    assert study.data.meta["user"] == model and study.data.meta["respondent"] == model
