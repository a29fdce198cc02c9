import json
from pathlib import Path

import nbformat
import papermill
import pytest

from hasbench.cli import main
from hasbench.docuteam.study import generate_example, write_study

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "docuteam_user_study.ipynb"
ARTIFACTS = (
    {
        f"{stem}.{ext}"
        for stem in ("results", "results_raw", "table2", "agreement", "power")
        for ext in ("csv", "md", "tex")
    }
    | {f"figure{n}.{ext}" for n in (3, 4, 5, 8) for ext in ("png", "pdf")}
    | {"analysis.json"}
)


def broken_csv(tmp_path) -> Path:
    path = write_study(generate_example(seed=0), tmp_path / "bad.csv")
    lines = path.read_text().splitlines()
    # Line 6 is the first data row (4 metadata lines + header): a blind rating on 1-5.
    fields = lines[5].split(",")
    fields[8] = "9"
    lines[5] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_writes_example_and_analyses_it(tmp_path, capsys):
    data = tmp_path / "study.csv"
    assert main(["study", "example", "--out", str(data), "--seed", "3"]) == 0
    assert data.read_text().startswith("# synthetic: true")
    out = tmp_path / "out"
    assert main(["study", "analyze", str(data), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "synthetic" in printed and f"wrote 24 files to {out}" in printed
    assert {p.name for p in out.iterdir()} == ARTIFACTS


def test_cli_prints_loader_errors_not_a_traceback(tmp_path, capsys):
    bad = broken_csv(tmp_path)
    assert main(["study", "analyze", str(bad), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"{bad}: 1 problem(s) in the study data:",
        "  line 6: value 9 is outside scale 1-5 (integers 1 to 5)",
    ]
    assert main(["study", "analyze", str(tmp_path / "nope.csv")]) == 1
    assert "cannot read the file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_notebook_runs_on_the_example_and_writes_every_artifact(tmp_path, hasbench_kernel):
    out = tmp_path / "figures"
    result = papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "run.ipynb"),
        parameters={"output_dir": str(out), "alpha": 0.05, "seed": 0},
        kernel_name=hasbench_kernel,
        progress_bar=False,
    )
    assert {p.name for p in out.iterdir()} == ARTIFACTS
    manifest = json.loads((out / "analysis.json").read_text())
    assert manifest["synthetic"] is True and manifest["seed"] == 0
    text = json.dumps([c.get("outputs", []) for c in result.cells])
    assert "SYNTHETIC EXAMPLE DATA" in text and "Steering msgs." in text
    assert "Steering msgs.*" not in text and "Sig." in text  # stars in their own column
    assert "0.780381" not in text and "Weighted \\u03ba" in text  # rounded, readable names
    assert "blank level0" not in text and " at 0x" not in text  # no index, no raw reprs
    assert text.count("data:image/png;base64,") == 4


@pytest.mark.slow
def test_notebook_shows_loader_errors_not_a_traceback(tmp_path, hasbench_kernel):
    bad = broken_csv(tmp_path)
    with pytest.raises(papermill.PapermillExecutionError):
        papermill.execute_notebook(
            str(NOTEBOOK),
            str(tmp_path / "run.ipynb"),
            parameters={"data_path": str(bad), "output_dir": str(tmp_path / "out")},
            kernel_name=hasbench_kernel,
            progress_bar=False,
        )
    run = nbformat.read(tmp_path / "run.ipynb", as_version=4)
    errors = [o for c in run.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert len(errors) == 1
    assert errors[0]["traceback"] == [
        f"{bad}: 1 problem(s) in the study data:",
        "  line 6: value 9 is outside scale 1-5 (integers 1 to 5)",
    ]


def test_notebook_is_thin_and_stripped():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    for name in ("data_path = None", "output_dir", "alpha", "seed"):
        assert name in params[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    assert nb.metadata["kernelspec"]["name"] == "hasbench"


def test_cli_reports_a_bad_alpha_without_traceback(tmp_path, capsys):
    data = tmp_path / "study.csv"
    main(["study", "example", "--out", str(data)])
    assert main(["study", "analyze", str(data), "--alpha", "5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "alpha must lie in (0, 1)" in err and "Traceback" not in err
