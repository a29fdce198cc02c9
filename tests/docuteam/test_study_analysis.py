import dataclasses
import json

import numpy as np
import pytest
import scipy
from matplotlib.image import imread

from hasbench.docuteam.study import (
    StudyDataError,
    analyze,
    generate_example,
    write_outputs,
)
from hasbench.docuteam.study.report import SYNTHETIC_NOTE, table2
from hasbench.stats import paired_test, wilcoxon


@pytest.fixture(scope="module")
def example():
    return generate_example(seed=0)


@pytest.fixture(scope="module")
def analysis(example):
    return analyze(example, alpha=0.05, seed=0)


def values(data, group, measure, condition):
    part = data.frame[
        (data.frame["measure_group"] == group)
        & (data.frame["measure"] == measure)
        & (data.frame["condition"] == condition)
    ]
    return part.groupby("participant")["value"].mean().sort_index()


def row(analysis, group, measure):
    res = analysis.results
    return res[(res["measure_group"] == group) & (res["measure"] == measure)].iloc[0]


def test_blind_ratings_are_averaged_over_raters_and_tested_with_wilcoxon(example, analysis):
    frame = example.frame
    p01 = frame[
        (frame["participant"] == "P01")
        & (frame["measure"] == "specificity")
        & (frame["condition"] == "DocuTeam")
    ]
    assert len(p01) == 2
    doc = values(example, "blind_rating", "specificity", "DocuTeam")
    base = values(example, "blind_rating", "specificity", "Baseline")
    assert doc["P01"] == p01["value"].mean()
    r = row(analysis, "blind_rating", "specificity")
    assert r["DocuTeam_mean"] == pytest.approx(doc.mean())
    assert r["Baseline_sd"] == pytest.approx(base.std(ddof=1))
    expected = wilcoxon(doc.to_numpy(), base.to_numpy())
    assert r["test"] == "wilcoxon" and r["statistic"] == expected.statistic
    assert r["pvalue"] == expected.pvalue and r["effect_size_kind"] == "rank-biserial r"
    assert r["apa"].startswith("W = ") and np.isnan(r["shapiro_p"])


def test_every_group_uses_its_test(example, analysis):
    res = analysis.results
    likert = res[res["measure_group"] != "interaction"]
    assert set(likert["test"]) == {"wilcoxon"}
    assert len(res[res["measure_group"] == "survey"]) == 10
    interaction = res[res["measure_group"] == "interaction"]
    assert len(interaction) == 6 and interaction["shapiro_p"].notna().all()
    for _, r in interaction.iterrows():
        doc = values(example, "interaction", r["measure"], "DocuTeam")
        base = values(example, "interaction", r["measure"], "Baseline")
        expected = paired_test(doc.to_numpy(), base.to_numpy(), alpha=0.05)
        assert r["test"] == expected.test
        assert r["pvalue"] == pytest.approx(expected.pvalue)
        assert r["shapiro_p"] == pytest.approx(expected.shapiro.pvalue)
        assert (r["test"] == "paired-t") == (expected.shapiro.pvalue >= 0.05)


def test_nasa_tlx_overall_is_the_mean_of_the_dimensions(example, analysis):
    dims = ["mental_demand", "temporal_demand", "performance", "effort", "frustration"]
    for condition in ("DocuTeam", "Baseline"):
        per_participant = np.mean([values(example, "nasa_tlx", d, condition) for d in dims], 0)
        assert row(analysis, "nasa_tlx", "overall")[f"{condition}_mean"] == pytest.approx(
            per_participant.mean()
        )
    assert row(analysis, "nasa_tlx", "overall")["label"] == "Overall"


def test_a_clear_effect_is_found_with_the_right_sign(example):
    frame = example.frame.copy()
    conf = frame["measure"] == "confidence"
    doc = conf & (frame["condition"] == "DocuTeam")
    base = conf & (frame["condition"] == "Baseline")
    frame.loc[doc, "value"] = 6.0
    frame.loc[base, "value"] = np.tile([1.0, 2.0, 3.0, 4.0, 5.0], 4)
    shifted = analyze(dataclasses.replace(example, frame=frame))
    r = row(shifted, "survey", "confidence")
    assert r["pvalue"] < 0.001 and r["effect_size"] == 1.0 and r["stars"] == "***"
    swapped = frame.assign(
        condition=frame["condition"].map({"DocuTeam": "Baseline", "Baseline": "DocuTeam"})
    )
    mirror = row(analyze(dataclasses.replace(example, frame=swapped)), "survey", "confidence")
    assert mirror["effect_size"] == -1.0 and mirror["pvalue"] == r["pvalue"]


def test_agreement_and_power_tables(analysis):
    agreement = analysis.agreement
    assert list(agreement["measure"]) == ["novelty", "workability", "relevance", "specificity"]
    assert (agreement["n_plans"] == 40).all()
    assert (agreement["ci_low"] <= agreement["kappa"]).all()
    assert (agreement["kappa"] <= agreement["ci_high"]).all()
    power = analysis.power
    t_half = power[(power["test"] == "paired-t") & (power["effect_size_dz"] == 0.5)]
    assert t_half["n_participants"].item() == 34
    assert (power["achieved_power"] >= 0.8).all()


def test_identical_raters_agree_perfectly(example):
    frame = example.frame.copy()
    r2 = frame["rater"] == "R2"
    frame.loc[r2, "value"] = frame.loc[frame["rater"] == "R1", "value"].to_numpy()
    agreement = analyze(dataclasses.replace(example, frame=frame)).agreement
    assert (agreement["kappa"] == 1.0).all()


def test_too_few_participants_is_a_data_error(example):
    frame = example.frame[example.frame["participant"].isin(["P01", "P02"])]
    with pytest.raises(StudyDataError, match="at least 3 participants"):
        analyze(dataclasses.replace(example, frame=frame))


EXPECTED_FILES = (
    {
        f"{stem}.{ext}"
        for stem in ("results", "results_raw", "table2", "agreement", "power")
        for ext in ("csv", "md", "tex")
    }
    | {f"figure{n}.{ext}" for n in (3, 4, 5, 8) for ext in ("png", "pdf")}
    | {"analysis.json"}
)


def check_outputs(out_dir, synthetic: bool) -> dict:
    """Check every artifact of a study analysis directory; return analysis.json."""
    names = {p.name for p in out_dir.iterdir()}
    assert names == EXPECTED_FILES
    manifest = json.loads((out_dir / "analysis.json").read_text())
    assert set(manifest["artifacts"]) | {"analysis.json"} == EXPECTED_FILES
    assert manifest["synthetic"] is synthetic
    assert manifest["versions"]["scipy"] == scipy.__version__
    for name in EXPECTED_FILES - {"analysis.json"}:
        path = out_dir / name
        if name.endswith(".png"):
            image = imread(path)
            assert image.shape[0] > 400 and image.shape[1] > 1000
            continue
        if name.endswith(".pdf"):
            assert path.read_bytes()[:5] == b"%PDF-"
            continue
        text = path.read_text()
        assert (SYNTHETIC_NOTE in text) is synthetic, name
    table = (out_dir / "table2.csv").read_text().splitlines()
    header = table[1] if synthetic else table[0]
    assert header == "Metric,DocuTeam,Baseline,Test,Sig."
    assert "Steering msgs." in (out_dir / "table2.md").read_text()
    assert "\\begin{table}" in (out_dir / "table2.tex").read_text()
    return manifest


@pytest.mark.slow
def test_write_outputs_writes_every_artifact_marked_synthetic(tmp_path, analysis):
    write_outputs(analysis, tmp_path / "a")
    manifest = check_outputs(tmp_path / "a", synthetic=True)
    assert manifest["n_participants"] == 20 and manifest["alpha"] == 0.05
    t2 = table2(analysis)
    assert len(t2) == 3 and t2["Metric"].iloc[0].startswith("Steering msgs.")
    write_outputs(analysis, tmp_path / "b")
    for name in EXPECTED_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.slow
def test_outputs_of_real_data_carry_no_synthetic_note(tmp_path, example):
    real = analyze(dataclasses.replace(example, meta={}), seed=0)
    write_outputs(real, tmp_path)
    check_outputs(tmp_path, synthetic=False)


def test_partial_data_write_the_figures_they_support(tmp_path, example):
    frame = example.frame[example.frame["measure_group"].isin(["survey", "interaction"])]
    partial = analyze(dataclasses.replace(example, frame=frame.reset_index(drop=True)))
    assert partial.agreement.empty
    assert set(partial.results["measure_group"]) == {"survey", "interaction"}
    written = {p.name for p in write_outputs(partial, tmp_path)}
    assert {"figure3.png", "figure4.png", "figure8.png", "table2.csv"} <= written
    assert "figure5.png" not in written
