"""Every figure notebook executed through papermill with tiny parameters (``hasbench notebook
all``), its artifacts checked for content, and the index page checked for links."""

import json
import re
import subprocess
import sys

import nbformat
import pandas as pd
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from hasbench.cli import main
from hasbench.experiments import figures_index
from hasbench.experiments.common import model_label
from hasbench.experiments.defaults import OFFLINE_AGENTS, OFFLINE_SWEEP_AGENTS
from hasbench.paths import REPO_ROOT
from hasbench.runner import figure_notebooks, load_results, registered_notebooks

pytestmark = pytest.mark.slow
USERS = ["scripted:user", "scripted:user-guarded"]
TINY = {
    "rq1": {"domains": ["mock"], "max_tasks_per_domain": 2},
    "rq2": {"domains": ["nosuchdomain", "mock"], "max_tasks_per_domain": 4},
    "rq3": {"domains": ["mock"], "max_tasks_per_domain": 6},
    "rq4": {"domains": ["mock", "retail"], "max_tasks_per_domain": 2},
    "robustness": {"domains": ["mock"], "max_tasks_per_domain": 3, "user_models": USERS},
    "docuteam_simulated_study": {"participants": 4, "budget": 6},
}


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """Run ``notebook all`` once with tiny parameters; return the directories."""
    if "hasbench" not in KernelSpecManager().find_kernel_specs():
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "hasbench"],
            check=True,
        )
    root = tmp_path_factory.mktemp("all")
    per = {name: {**p, "results_dir": str(root / "runs" / name)} for name, p in TINY.items()}
    index = figures_index.run_all(
        executed_dir=root / "executed", figures_dir=root / "figures", per_notebook=per,
        progress=False,
    )  # fmt: skip
    return {"root": root, "index": index, "figures": root / "figures", "runs": root / "runs"}


def read(done, folder, name):
    return pd.read_csv(done["figures"] / folder / f"{name}.csv")


def within(table, estimate="estimate", low="low", high="high"):
    """Whether every defined estimate lies in its CI (CSV values are rounded to 4 decimals)."""
    t = table.dropna(subset=[estimate])
    return bool(((t[low] <= t[estimate] + 1e-9) & (t[estimate] <= t[high] + 1e-9)).all())


def outputs(done, notebook):
    nb = nbformat.read(done["root"] / "executed" / notebook, as_version=4)
    return json.dumps([c.get("outputs", []) for c in nb.cells])


def test_committed_figure_notebooks_are_thin_parameterized_and_stripped():
    for name in ("rq2_agency", "rq3_channels_by_pattern", "rq4_personas",
                 "robustness_user_simulator"):  # fmt: skip
        nb = nbformat.read(REPO_ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert "parameters" in code[0].metadata.get("tags", []), name
        for parameter in ("agent_models = None", "domains =", "max_tasks_per_domain =", "seed =",
                          "output_dir = None", "results_dir = None", "judge_model =",
                          "benchmark = None"):  # fmt: skip
            assert parameter in code[0].source, (name, parameter)
        assert all(not c.outputs and c.execution_count is None for c in code)
        assert sum(len(c.source.splitlines()) for c in code) < 40  # logic lives in hasbench
        assert nb.metadata["kernelspec"]["name"] == "hasbench"
        # the episodes that ended in error are listed right after the run
        ran = next(i for i, c in enumerate(code) if ".run(" in c.source)
        assert 'error_rows(out["results"])' in code[ran + 1].source, name
        assert ".plan(" in code[1].source  # the work ahead, before the run
        assert "report.glossary(" in code[-1].source


def test_rq2_figure2_cells_tasks_and_a4_lists(done):
    results = load_results(done["runs"] / "rq2")
    assert set(results["domain"]) == {"mock"} and results["error"].isna().all()
    tasks = results["task_id"].nunique()
    fig = read(done, "rq2", "figure2")
    assert len(fig) == len(OFFLINE_SWEEP_AGENTS) * 3 * 7  # levels × metrics
    assert set(fig["level"]) == {"A1", "A3", "A4"}
    assert (fig.loc[fig["metric"].isin(["pass1", "task_score", "hir"]), "tasks"] == tasks).all()
    assert within(fig)
    a3 = results[results["agency"] == "A3"]
    pass1 = fig[(fig["level"] == "A3") & (fig["metric"] == "pass1")]["estimate"].item()
    assert pass1 == pytest.approx(100 * a3["success"].astype(float).mean())
    counts = read(done, "rq2", "a4_vs_a3").iloc[0]
    changes = read(done, "rq2", "a4_changes")
    assert counts["paired"] == tasks
    assert counts["rescued"] == (changes["change"] == "rescued").sum()
    assert counts["broken"] == (changes["change"] == "broken").sum()
    harm = read(done, "rq2", "a4_harm")
    assert len(harm) == counts["broken"]
    assert read(done, "rq2", "a4_harm_counts")["count"].sum() == counts["broken"]
    for ext in ("png", "pdf"):
        assert (done["figures"] / "rq2" / f"figure2.{ext}").stat().st_size > 0
    text = outputs(done, "rq2_agency.ipynb")
    assert "no tasks for nosuchdomain" in text and "image/png" in text


def test_rq3_table5_denominators_match_the_a1_failures(done):
    results = load_results(done["runs"] / "rq3")
    table = read(done, "rq3", "table5")
    assert len(table) == 6 * 4 and set(table["setting"]) == {"clar-only", "feed-only",
                                                              "cont-only", "full"}  # fmt: skip
    a1 = results[results["agency"] == "A1"]
    for pattern, part in table.groupby("pattern"):
        if pattern == "C":
            expected = (results["pattern"] == "C").sum() // 8  # one episode per setting
            assert (part["metric"] == "safety").all()
        else:
            expected = ((a1["pattern"] == pattern) & ~a1["success"].astype(bool)).sum()
            assert (part["metric"] == "recovery").all()
        assert (part["denominator"] == expected).all(), pattern
        assert (part["numerator"] <= part["denominator"]).all()
        singles = part[part["setting"] != "full"]
        best = singles["estimate"].max()
        marked = singles.loc[singles["best_single"], "estimate"]
        assert (marked == best).all() and (len(marked) > 0) == (singles["estimate"].notna().any())
    assert within(table)
    grid = read(done, "rq3", "ts_grid")
    assert len(grid) == 6 * 8 and within(grid)
    assert "**" in (done["figures"] / "rq3" / "table5.md").read_text()
    assert "\\textbf{" in (done["figures"] / "rq3" / "table5.tex").read_text()


def test_rq4_table6_ranges_of_the_persona_values(done):
    table = read(done, "rq4", "table6").set_index("domain")
    values = read(done, "rq4", "table6_personas")
    assert set(table.index) == {"mock", "retail"}
    for domain, part in values.groupby("domain"):
        assert len(part) == 3 and (part["tasks"] == 2).all()
        for metric in ("task_score", "pass1", "hir", "turns", "asks"):
            spread = part[metric].max() - part[metric].min()
            assert table.loc[domain, f"{metric}_range"] == pytest.approx(spread, abs=1e-3)
            assert table.loc[domain, f"{metric}_low"] <= table.loc[domain, f"{metric}_high"]
    for domain in ("mock", "retail"):
        assert len(load_results(done["runs"] / "rq4" / domain)) == 2 * 3


def test_robustness_tables(done):
    table = read(done, "robustness", "per_simulator")
    assert len(table) == len(OFFLINE_AGENTS) * len(USERS) and (table["tasks"] == 3).all()
    assert set(table["model"]) == {model_label(m) for m in OFFLINE_AGENTS}
    for metric in ("pass1", "task_score"):
        assert within(table, metric, f"{metric}_low", f"{metric}_high")
    agreement = read(done, "robustness", "agreement")
    assert len(agreement) == 2  # one simulator pair × two metrics
    defined = agreement.dropna(subset=["kendall_tau"])
    assert defined["kendall_tau"].between(-1, 1).all()
    assert (agreement["kendall_tau"].isna() == agreement["undefined"].notna()).all()
    shifts = read(done, "robustness", "shifts")
    assert len(shifts) == len(OFFLINE_AGENTS) * 2 and within(shifts, "shift")
    assert shifts.groupby("metric")["largest"].any().all()


@pytest.mark.parametrize(
    "notebook", ["rq2_agency", "rq3_channels_by_pattern", "rq4_personas",
                 "robustness_user_simulator"],
)  # fmt: skip
def test_every_executed_figure_notebook_reads_as_a_report(done, notebook):
    executed = done["root"] / "executed" / f"{notebook}.ipynb"
    nb = nbformat.read(executed, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    plain = "\n".join(str(o.get("text", "")) + o.get("data", {}).get("text/plain", "")
                      for o in outputs)  # fmt: skip
    assert re.search(r"Plan\. [\w-]+: \d+ episodes \(\d+ tasks? × ", plain)  # the work ahead
    assert re.search(r"Ran \d+ of \d+ episodes", plain)  # the run in one sentence
    assert not re.search(r" at 0x[0-9a-f]+>|RunSummary\(|Plan\(", plain)  # no raw reprs
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    tables = [h for h in html if "<table" in h]
    assert tables and all("blank level0" not in t and "**" not in t for t in tables)  # no index
    for i, cell in enumerate(nb.cells):  # every figure is embedded and has a caption below it
        if any("data:image/png;base64," in o.get("data", {}).get("text/html", "")
               for o in cell.get("outputs", [])):  # fmt: skip
            assert nb.cells[i + 1].source.startswith("**Figure"), (notebook, i)
    glossary = nb.cells[-1].outputs[0]["data"]["text/markdown"]
    assert glossary.startswith("**Glossary**") and "(../docs/metrics.md#" in glossary
    report = executed.with_suffix(".html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in report and "Glossary" in report


def test_the_simulated_docuteam_study_lists_the_stand_in_rules_behind_its_differences(done):
    folder = done["figures"] / "docuteam_simulated"
    rules = pd.read_csv(folder / "stand_in_rules.csv", comment="#")
    table2 = pd.read_csv(folder / "table2.csv", comment="#")
    assert set(table2["Metric"]) <= set(rules["measure"])
    ratings = rules[rules["group"] == "Blind rating"]
    assert set(ratings["measure"]) == {"Novelty", "Workability", "Relevance", "Specificity"}
    assert "rater" in set(ratings["part"])
    text = outputs(done, "docuteam_simulated_study.ipynb")
    assert "SIMULATED PARTICIPANTS" in text and "agents start discussions only in DocuTeam" in text


def test_index_links_every_table_and_figure_with_what_produced_it(done):
    page = done["index"].read_text()
    links = set(re.findall(r'(?:href|src)="([^"]+)"', page))
    for notebook in figure_notebooks():
        assert f'<h2 id="{notebook.name}">' in page
        for path in (done["figures"] / notebook.folder).iterdir():
            assert f"{notebook.folder}/{path.name}" in links, path
    for link in links:
        assert (done["figures"] / link).resolve().exists(), link
    assert page.count("package version") == len(figure_notebooks())
    assert "parameter: domains" in page and "backend: user" in page
    assert "scripted:user-guarded" in page and "model calls this run" in page


def test_a_rerun_of_the_notebook_with_a_warm_cache_makes_no_model_calls(tmp_path, monkeypatch):
    from hasbench import llm
    from hasbench.experiments import rq2
    from hasbench.llm import register_test_provider
    from hasbench.runner import run_notebook

    def agent(messages, tools):
        finish = {"name": "finish", "arguments": {"deliverable": "ok"}}
        return {"content": None, "tool_calls": [finish]}

    monkeypatch.setattr(llm.cache, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setenv("HASBENCH_CACHE", str(tmp_path / "cache"))  # read by the kernel
    model = register_test_provider("nb_warm_agent", agent)
    params = {"agent_models": [model], "domains": ["mock"], "max_tasks_per_domain": 2}
    rq2.run(**params, output_dir=tmp_path / "first", results_dir=tmp_path / "r1", progress=False)
    first = json.loads((tmp_path / "first" / "manifest.json").read_text())
    assert first["model_calls"] > 0
    # The kernel has no test provider registered: any call not served by the cache fails.
    # its results store has no other beside it to copy episodes from (hasbench.runner.reuse)
    params.update(output_dir=str(tmp_path / "second"), results_dir=str(tmp_path / "r2" / "runs"))
    run_notebook("rq2", params, output_dir=tmp_path / "executed", progress=False)
    second = json.loads((tmp_path / "second" / "manifest.json").read_text())
    assert second["model_calls"] == 0 and 0 < second["cache_hits"] < first["model_calls"]
    # The notebook's plan cell ran one episode per agency level (a model backend's strata,
    # from the cache too) and stored them: the run skipped them, and every episode of the
    # grid is in the results without an error.
    grid = rq2.experiment([model], domains=["mock"], max_tasks_per_domain=2)
    levels = len({setting.agency for setting in grid.settings})
    assert second["errors"] == 0 and second["episodes"] == first["episodes"]
    assert second["episodes_run"] == first["episodes_run"] - levels


def test_cli_notebook_all_runs_every_figure_notebook(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(
        figures_index, "run_all",
        lambda parameters, out, progress: seen.append((parameters, out, progress)) or "ix",
    )  # fmt: skip
    assert main(["notebook", "all", "-p", "seed", "3"]) == 0
    assert seen == [({"seed": 3}, None, True)] and capsys.readouterr().out.strip() == "ix"
    assert main(["notebook", "all", "--quiet"]) == 0
    assert seen[-1] == ({}, None, False)


def test_index_shows_figures_at_the_page_width_tables_inline_and_links_the_reports(done):
    import html

    page = done["index"].read_text()
    assert "figure img{max-width:100%" in page  # not a thumbnail
    registered = registered_notebooks()
    for notebook in figure_notebooks():
        report = registered[notebook.name].with_suffix(".html").name
        assert f'href="../executed/{report}">its report (HTML)</a>' in page
        folder = done["figures"] / notebook.folder
        for png in folder.glob("*.png"):
            assert f'<figure><img src="{notebook.folder}/{png.name}"' in page
        for table in folder.glob("*.md"):
            text = table.read_text(encoding="utf-8")
            header = next(line for line in text.splitlines() if line.startswith("|"))
            heading = header.split("|")[1].strip()  # a banner may come first (DocuTeam's)
            assert f"<th>{html.escape(heading)}</th>" in page, table
            for note in (line[len("Note: "):] for line in text.splitlines()
                         if line.startswith("Note: ")):  # fmt: skip
                assert html.escape(note) in page


def test_notebook_all_starts_the_long_notebook_first_and_reports_each_as_it_ends(
    monkeypatch, tmp_path, capsys
):
    from hasbench.runner import notebooks

    long = [notebook.name for notebook in figure_notebooks() if notebook.runs_long]
    assert long == ["robustness"]
    asked = []

    def side_by_side(runs, executed_dir):
        asked.extend(runs)
        for name, _ in reversed(runs):  # in the order they end, not the order they started
            failed = "boom" if name == "rq2" else None
            yield notebooks.NotebookRun(name, tmp_path / f"{name}.ipynb", failed, 2.0, 3.5)

    monkeypatch.setattr(notebooks, "run_side_by_side", side_by_side)
    with pytest.raises(figures_index.NotebookRunError, match="rq2: boom"):
        figures_index.run_all({"seed": 1}, figures_dir=tmp_path, progress=False)
    order = [name for name, _ in asked]
    # then the notebooks without episodes (a core each), those with a worker pool last
    assert order == long + ["docuteam_user_study", "docuteam_simulated_study"] + [
        "rq1", "rq2", "rq3", "rq4"
    ]
    assert all(p["seed"] == 1 and p["output_dir"].startswith(str(tmp_path)) for _, p in asked)
    printed = capsys.readouterr().out
    assert "robustness done in 2.0 s (3.5 CPU-s)" in printed and "rq2 failed in" in printed
    assert (tmp_path / "index.html").exists()


def test_notebooks_side_by_side_refuse_an_unknown_parameter_before_any_runs():
    from hasbench.runner import ExperimentError
    from hasbench.runner.notebooks import run_side_by_side

    with pytest.raises(ExperimentError, match="no parameter 'nosuch'"):
        list(run_side_by_side([("rq1", {"seed": 0}), ("rq2", {"nosuch": 1})]))
