"""The one command: a build on a small slice of the real sources (their databases linked,
a few tasks per domain), its report, its cache, the three MARBLE domains adapted, and a
domain without templates waiting until one registers (skips without ../shared/sources)."""

import json
import shutil

import pytest
from tau2_reference import MARBLE, TAU2, require_sources

from hasbench.build import adaptation
from hasbench.build.adaptation import Declined, template
from hasbench.build.pipeline import BuildSettings, PipelineError, run_pipeline
from hasbench.cli import main
from hasbench.scenario import load_tasks

SLICE = {
    "retail": ["5", "45", "57", "59", "74"],  # 57 changes nothing and says nothing: dropped
    "airline": ["1", "15"],
    "telecom": [
        "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]",
        "[service_issue]airplane_mode_on|unseat_sim_card[PERSONA:None]",
    ],
}
FAST = BuildSettings(workers=1)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """τ² and MARBLE folders with a few tasks each; the databases are links to the real ones."""
    require_sources()
    root = tmp_path_factory.mktemp("sources")
    for domain, ids in SLICE.items():
        folder = root / "tau2" / domain
        folder.mkdir(parents=True)
        for item in (TAU2 / domain).iterdir():
            if item.name not in ("tasks.json", "tasks_full.json"):
                (folder / item.name).symlink_to(item)
        tasks = json.loads((TAU2 / domain / "tasks.json").read_text())
        (folder / "tasks.json").write_text(json.dumps([t for t in tasks if t["id"] in ids]))
    for domain in ("coding", "research", "bargaining"):
        folder = root / "marble" / domain
        folder.mkdir(parents=True)
        lines = (MARBLE / domain / f"{domain}_main.jsonl").read_text().splitlines()
        (folder / f"{domain}_main.jsonl").write_text("\n".join(lines[:6]) + "\n")
    return root / "tau2", root / "marble"


@pytest.fixture(scope="module")
def built(sources, tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    return out, run_pipeline(*sources, out, FAST, quiet=True)


def test_the_build_writes_tasks_sheets_and_a_report_beside_the_paper(built):
    out, result = built
    assert result.errors == []
    retail = result.counts["retail"]
    assert retail["kept"] == 4 and retail["paper"] == 94 and retail["included"] >= 4
    included = sum(c["included"] for c in result.counts.values())
    tasks = [t for path in sorted((out / "tasks").glob("*.yaml")) for t in load_tasks(path)]
    assert len(tasks) == included
    assert {t.domain for t in tasks} == {
        "retail", "airline", "telecom", "coding", "research", "bargaining"
    }  # fmt: skip
    sources = dict.fromkeys(("coding", "research", "bargaining"), "marble")
    assert all(t.metadata["adaptation"]["source"] == sources.get(t.domain, "tau2-bench")
               for t in tasks)  # fmt: skip
    report = (out / "build_report.md").read_text()
    assert "| retail | 5 | 4 | 62 |" in report and "**397**" in report
    assert "| C |" in report and "Fleiss' kappa across the 4 judges" in report
    assert "waiting" not in report
    assert "| coding | 6 |" in report and "| research | 6 |" in report
    assert "| domain | A | B | C | D | E | F |" in report
    assert (out / "review" / "review_sheet.csv").exists() and (out / "validation.jsonl").exists()
    excluded = [json.loads(line) for line in (out / "validation.jsonl").read_text().splitlines()]
    assert any(v["verdict"] == "EXCLUDE" for v in excluded)  # airline 1: doing nothing passes
    assert all(v["rounds"] for v in excluded)  # the reviews are kept as evidence


def test_marble_domains_are_judged_and_adapted(built):
    out, result = built
    assert result.waiting == []
    for domain in ("coding", "research", "bargaining"):
        counts = result.counts[domain]
        assert 0 < counts["included"] <= counts["checks_passed"] <= counts["adapted"], domain
        assert sum(result.domain_patterns[domain].values()) == counts["included"]
    judged = [json.loads(line) for line in (out / "patterns.jsonl").read_text().splitlines()]
    assert {j["domain"] for j in judged} == {"retail", "airline", "telecom", "coding",
                                               "research", "bargaining"}  # fmt: skip
    coding = load_tasks(out / "tasks" / "coding.yaml")
    assert all(t.metadata["judge_scored"] and t.users[0].role == "requester" for t in coding)


def test_a_rerun_uses_the_cache(built, sources):
    out, first = built
    checks = (out / "steps" / "checks.jsonl").read_text()
    again = run_pipeline(*sources, out, FAST, quiet=True)
    assert (out / "steps" / "checks.jsonl").read_text() == checks  # nothing checked again
    assert again.counts == first.counts
    assert again.seconds["total"] < first.seconds["total"]


def test_a_fresh_build_is_byte_identical(built, sources, tmp_path):
    run_pipeline(*sources, tmp_path, FAST, quiet=True)
    outputs = ["declined.json", "patterns.jsonl", "validation.jsonl", "review/review_sheet.csv"]
    outputs += [f"tasks/{p.name}" for p in (built[0] / "tasks").glob("*.yaml")]
    for name in outputs:
        assert (tmp_path / name).read_bytes() == (built[0] / name).read_bytes(), name


def test_a_domain_without_templates_waits_until_one_registers(
    built, sources, tmp_path, monkeypatch
):
    registered = {k: dict(v) for k, v in adaptation._TEMPLATES.items() if k != "research"}
    monkeypatch.setattr(adaptation, "_TEMPLATES", registered)
    shutil.copytree(built[0] / "steps", tmp_path / "steps")  # the judged and checked are cached
    waiting = run_pipeline(*sources, tmp_path, FAST, quiet=True)
    assert waiting.waiting == ["research"] and waiting.counts["research"]["included"] == 0
    assert (
        "Adaptation is waiting for the domains research:"
        in (tmp_path / "build_report.md").read_text()
    )
    seen = []

    for pattern in "ABCDEF":

        @template("research", pattern)
        def not_yet(base, ctx):
            seen.append(base.key)
            raise Declined("no research template in this test")

    result = run_pipeline(*sources, tmp_path, FAST, quiet=True)
    assert "research" not in result.waiting and seen
    declined = json.loads((tmp_path / "declined.json").read_text())
    assert any(d["task"].startswith("research:") for d in declined)


def test_missing_sources_and_the_cli(built, sources, tmp_path, capsys):
    with pytest.raises(PipelineError, match="source folder not found"):
        run_pipeline(tmp_path / "nowhere", sources[1], tmp_path / "out")
    shutil.copytree(built[0] / "steps", tmp_path / "cli" / "steps")
    argv = ["build", "has-bench", "--tau2", str(sources[0]), "--marble", str(sources[1])]
    assert main([*argv, "--out", str(tmp_path / "cli"), "--workers", "1", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "retail: kept 4," in printed and "coding: kept" in printed and "waiting" not in printed
