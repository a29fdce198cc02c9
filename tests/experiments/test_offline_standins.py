"""The offline stand-ins on small real grids: their tables show what issue 28 asks of them.

Each test runs episodes (no stored numbers) and reads the property from the same table
functions the notebooks use: profiles that differ in competence and in restraint, feedback
that recovers tasks on its own, and a robustness study over three simulators and three
agents.
"""

from __future__ import annotations

import pytest

from hasbench.agency import Setting
from hasbench.experiments import robustness, rq1, rq3
from hasbench.experiments.common import PAPER_DOMAINS, execute, make_client
from hasbench.experiments.defaults import OFFLINE_AGENTS, OFFLINE_USER_SIMULATORS
from hasbench.runner import Experiment

pytestmark = pytest.mark.slow
STRONG, WEAK, CAREFUL = OFFLINE_AGENTS


def run_grid(grid: Experiment, tmp_path, settings: list[Setting], **selection):
    """Run ``grid`` under ``settings`` with its task selection narrowed by ``selection``."""
    tasks = grid.tasks.model_copy(update=selection)
    grid = grid.model_copy(update={"settings": settings, "tasks": tasks})
    _, results = execute(grid, tmp_path / "runs", make_client(grid), progress=False)
    assert results["error"].isna().all(), results["error"].dropna().tolist()
    return results


def test_a1_pass1_of_the_strong_and_weak_stand_ins_differs_in_three_domains(tmp_path):
    """Under A1 nobody can be asked or approve, so only competence separates the profiles:
    Table 4's A1 Pass@1 differs between strong and weak in at least three domains, and the
    weak one is never ahead."""
    grid = rq1.experiment([STRONG, WEAK], domains=["retail", "airline", "telecom", "bargaining"])
    results = run_grid(
        grid, tmp_path, [Setting(agency="A1")], patterns=["C", "D", "E"], max_per_domain=15
    )
    table = rq1.table4(results).set_index(["domain", "model"])["pass1_a1"].unstack()
    strong, weak = (c for m in (STRONG, WEAK) for c in table.columns if c.startswith(m))
    assert (table[weak] <= table[strong]).all(), table
    assert (table[weak] < table[strong]).sum() >= 3, table


def test_the_careful_stand_in_is_safe_at_a1_on_pattern_c(tmp_path):
    """A protected action nobody can approve under A1: the careful stand-in declines it, so
    its SR_C at A1 is above 0 and above the strong one's, which runs it unapproved."""
    grid = rq1.experiment([STRONG, CAREFUL], domains=["retail", "airline", "telecom"])
    results = run_grid(grid, tmp_path, [Setting(agency="A1")], patterns=["C"], max_per_domain=4)
    safety = rq1.safety_c(results).set_index("model")["safety_a1"]
    careful = next(v for m, v in safety.items() if m.startswith(CAREFUL))
    strong = next(v for m, v in safety.items() if m.startswith(STRONG))
    assert careful > 0 and careful > strong, safety


def test_feedback_alone_recovers_tasks_in_three_patterns(tmp_path):
    """Stand-ins show drafts and intermediate results for review, so Table 5's feed-only
    column recovers A1 failures in at least three of the five recovery patterns."""
    grid = rq3.experiment([STRONG], domains=list(PAPER_DOMAINS))
    settings = [Setting(agency="A1"), Setting(agency="A3", channels="feed-only")]
    results = run_grid(grid, tmp_path, settings, max_per_domain=6)
    table = rq3.table5(results)
    fed = table[(table["setting"] == "feed-only") & (table["metric"] == "recovery")]
    assert (fed["numerator"] > 0).sum() >= 3, fed


def test_the_robustness_study_compares_three_simulators_over_three_agents(tmp_path):
    """The offline defaults' three scripted user simulators (the local model, which joins
    them when its extra is installed, is left out to keep this test fast) and the three
    stand-in profiles; rank agreement is computed over the three agents for every pair."""
    scripted = [user for user in OFFLINE_USER_SIMULATORS if user.startswith("scripted:")]
    assert len(scripted) >= 3
    made = robustness.run(
        user_models=scripted, domains=["retail", "telecom", "mock"], max_tasks_per_domain=4,
        output_dir=tmp_path / "out", results_dir=tmp_path / "runs", progress=False,
    )  # fmt: skip
    assert made["results"]["error"].isna().all()
    per = made["tables"]["per_simulator"]
    assert per["simulator"].nunique() >= 3 and per["model"].nunique() == 3
    agreement = made["tables"]["agreement"]
    assert len(agreement) >= 6 and (agreement["agents"] == 3).all()
    assert agreement["kendall_tau"].notna().all(), agreement
