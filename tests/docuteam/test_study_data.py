import dataclasses

import pandas as pd
import pytest

from hasbench.docuteam.study import (
    CONDITIONS,
    StudyDataError,
    generate_example,
    load_study,
    write_study,
)
from hasbench.docuteam.study.data import COLUMNS, MEASURES


@pytest.fixture(scope="module")
def example():
    return generate_example(seed=0)


def write_plain(frame: pd.DataFrame, path) -> None:
    """Write rows without metadata: data row i (0-based) is on file line i + 2."""
    out = frame[list(COLUMNS)].copy()
    out["value"] = out["value"].map(lambda v: v if isinstance(v, str) else f"{v:g}")
    out.to_csv(path, index=False)


def problems_for(frame: pd.DataFrame, tmp_path) -> list[str]:
    path = tmp_path / "study.csv"
    write_plain(frame, path)
    with pytest.raises(StudyDataError) as info:
        load_study(path)
    assert str(path) in str(info.value)
    return info.value.problems


def test_example_has_the_shape_of_the_docuteam_study(example):
    frame = example.frame
    assert len(example.participants) == 20
    assert set(frame["condition"]) == set(CONDITIONS)
    design = frame.drop_duplicates(["participant", "condition"])
    # Counterbalanced: each (condition first?, DocuTeam task) cell has 5 participants.
    docuteam = design[design["condition"] == "DocuTeam"]
    cells = docuteam.groupby(["order", "task"]).size()
    assert len(cells) == 4 and set(cells) == {5}
    ratings = frame[frame["measure_group"] == "blind_rating"]
    assert sorted(ratings["rater"].unique()) == ["R1", "R2"]
    assert ratings["measure"].nunique() == 4 and set(ratings["scale"]) == {"1-5"}
    assert len(ratings) == 20 * 2 * 2 * 4
    survey = frame[frame["measure_group"] == "survey"]
    assert survey["measure"].nunique() == 10 and set(survey["scale"]) == {"1-7"}
    tlx = frame[frame["measure_group"] == "nasa_tlx"]
    assert tlx["measure"].nunique() == 5 and "physical_demand" not in set(tlx["measure"])
    interaction = set(frame.loc[frame["measure_group"] == "interaction", "measure"])
    assert {"steering_messages", "draft_word_changes", "messages_applied"} <= interaction
    assert {"idea_mode", "discussion_mode", "evaluation_mode"} <= interaction
    assert example.synthetic and example.meta["seed"] == "0"


def test_example_is_deterministic_per_seed(tmp_path, example):
    a = write_study(example, tmp_path / "a.csv").read_bytes()
    b = write_study(generate_example(seed=0), tmp_path / "b.csv").read_bytes()
    c = write_study(generate_example(seed=1), tmp_path / "c.csv").read_bytes()
    assert a == b and a != c
    assert a.startswith(b"# synthetic: true\n")


def test_write_then_load_round_trips(tmp_path, example):
    path = write_study(example, tmp_path / "study.csv")
    loaded = load_study(path)
    assert loaded.synthetic and loaded.meta == example.meta
    cols = list(COLUMNS)
    pd.testing.assert_frame_equal(loaded.frame[cols], example.frame[cols])
    # Metadata lines shift the data: the first data row is line 6 (4 metadata + header).
    assert loaded.frame["line"].iloc[0] == 6


def test_data_without_metadata_are_not_synthetic(tmp_path, example):
    path = write_study(dataclasses.replace(example, meta={}), tmp_path / "real.csv")
    assert not load_study(path).synthetic


def test_value_outside_its_scale_names_the_line(tmp_path, example):
    frame = example.frame.copy()
    i = frame.index[frame["scale"] == "1-7"][3]
    frame.loc[i, "value"] = 8.0
    j = frame.index[frame["scale"] == "count"][0]
    frame.loc[j, "value"] = 2.5
    problems = problems_for(frame, tmp_path)
    assert f"line {i + 2}: value 8 is outside scale 1-7 (integers 1 to 7)" in problems
    assert f"line {j + 2}: value 2.5 is not a non-negative integer (scale count)" in problems


def test_unknown_condition_names_the_line(tmp_path, example):
    frame = example.frame.copy()
    frame.loc[5, "condition"] = "Control"
    problems = problems_for(frame, tmp_path)
    assert problems == ["line 7: unknown condition 'Control' (expected DocuTeam or Baseline)"]


def test_duplicated_rows_name_both_lines(tmp_path, example):
    frame = pd.concat([example.frame, example.frame.iloc[[10]]], ignore_index=True)
    problems = problems_for(frame, tmp_path)
    last = len(frame) + 1
    assert len(problems) == 1
    assert problems[0].startswith(f"lines 12, {last}: duplicated row for participant")


def test_unpaired_participant_values_name_the_line(tmp_path, example):
    frame = example.frame
    target = frame[
        (frame["participant"] == "P03")
        & (frame["measure"] == "confidence")
        & (frame["condition"] == "Baseline")
    ].index
    kept = frame.drop(index=target).reset_index(drop=True)
    problems = problems_for(kept, tmp_path)
    partner = kept.index[
        (kept["participant"] == "P03")
        & (kept["measure"] == "confidence")
        & (kept["condition"] == "DocuTeam")
    ][0]
    assert problems == [
        f"line {partner + 2}: participant P03, survey/confidence is recorded for DocuTeam "
        "but not for Baseline (unpaired)"
    ]


def test_participant_with_one_condition_only_is_unpaired(tmp_path, example):
    frame = example.frame
    kept = frame[~((frame["participant"] == "P07") & (frame["condition"] == "Baseline"))]
    problems = problems_for(kept.reset_index(drop=True), tmp_path)
    assert len(problems) == len(MEASURES) + 4  # blind ratings come from two raters
    assert all("P07" in p and "not for Baseline (unpaired)" in p for p in problems)


def test_design_problems_order_and_rater(tmp_path, example):
    frame = example.frame.copy()
    p1 = frame["participant"] == "P01"
    frame.loc[p1, "order"] = 1
    rating = frame.index[frame["measure_group"] == "blind_rating"][0]
    frame.loc[rating, "rater"] = ""
    problems = problems_for(frame, tmp_path)
    assert problems == [f"line {rating + 2}: blind_rating needs a rater"]
    frame.loc[rating, "rater"] = "R1"
    problems = problems_for(frame, tmp_path)
    assert len(problems) == 1
    assert "participant P01 has the same order (1) in both conditions" in problems[0]


def test_bad_files_give_clear_errors(tmp_path, example):
    with pytest.raises(StudyDataError, match="cannot read the file"):
        load_study(tmp_path / "missing.csv")
    path = tmp_path / "cols.csv"
    example.frame.drop(columns=["rater", "line"]).to_csv(path, index=False)
    with pytest.raises(StudyDataError, match="missing column\\(s\\): rater"):
        load_study(path)
    frame = example.frame.copy().astype({"value": object})
    frame.loc[0, "value"] = "high"
    assert problems_for(frame, tmp_path) == ["line 2: value 'high' is not a number"]


def test_error_message_is_capped_and_renders_without_traceback(tmp_path, example):
    frame = example.frame.copy()
    frame["condition"] = "Other"
    path = tmp_path / "study.csv"
    write_plain(frame, path)
    with pytest.raises(StudyDataError) as info:
        load_study(path)
    lines = info.value._render_traceback_()
    assert lines[0] == f"{path}: {len(frame)} problem(s) in the study data:"
    assert len(lines) == 1 + 50 + 1 and lines[-1].strip().startswith("... and")
