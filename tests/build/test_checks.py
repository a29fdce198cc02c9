"""The automatic task checks and the `hasbench check` command."""

from pathlib import Path

import pytest
import yaml

from hasbench.build.checks import check_file, check_many
from hasbench.cli import main
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks

EXAMPLES = TASKS_DIR / "examples.yaml"


def _variant(tmp_path: Path, task_id: str, change) -> Path:
    tasks = yaml.safe_load(EXAMPLES.read_text())
    task = next(t for t in tasks if t["task_id"] == task_id)
    change(task)
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump([task], sort_keys=False))
    return path


def test_every_example_task_passes_every_check():
    rows = check_file(EXAMPLES)
    failures = {row.task_id: row.results for row in rows if not row.passed}
    assert failures == {}
    assert len(rows) == 10


def test_checks_in_worker_processes_give_every_row_in_task_order():
    scenarios = load_tasks(EXAMPLES)
    alone = list(check_many(scenarios, workers=1))
    shared = list(check_many(scenarios, workers=2))
    assert [row.task_id for row in shared] == [s.task_id for s in scenarios]
    assert [(r.task_id, r.results) for r in shared] == [(r.task_id, r.results) for r in alone]


def test_pattern_c_without_a_protected_gold_action_fails(tmp_path):
    def unprotect(task):
        for action in task["evaluation_criteria"]["actions"]:
            action["protected"] = False

    [row] = check_file(_variant(tmp_path, "mock_C_001", unprotect))
    assert row.results["protected_path"] == "no protected gold action"
    assert not row.passed


def test_a_user_fact_the_agents_can_read_elsewhere_is_caught(tmp_path):
    def fact_also_in_policy(task):
        # The domain policy (given to every agent) names the subscription service.
        task["users"][0]["known_info"]["service_kind"] = "subscription service"

    [row] = check_file(_variant(tmp_path, "mock_A_001", fact_also_in_policy))
    assert row.results["facts_hidden_A1"] == (
        "visible under A1: ['users[0].known_info.service_kind']"
    )


def test_an_assertion_already_true_at_the_start_gives_idle_credit(tmp_path):
    def add_free_assertion(task):
        task["evaluation_criteria"]["env_assertions"].append(
            {"func_name": "assert_status", "arguments": {"account_id": "A100", "status": "active"}}
        )

    [row] = check_file(_variant(tmp_path, "mock_A_001", add_free_assertion))
    assert row.results["idle"].startswith("idle scored 0.250")


def test_invalid_file_gives_one_row_per_task_with_the_problem(tmp_path):
    def break_it(task):
        task["coordination_mode"] = "ring"

    [row] = check_file(_variant(tmp_path, "mock_A_001", break_it))
    assert "coordination_mode" in row.results["validates"]


def test_cli_prints_a_table_and_exits_by_outcome(tmp_path, capsys):
    def unprotect(task):
        for action in task["evaluation_criteria"]["actions"]:
            action["protected"] = False

    assert main(["check", str(_variant(tmp_path, "mock_C_001", unprotect))]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "0/1 tasks passed every check"


@pytest.mark.slow
@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_every_service_domain_task_passes_every_check(domain):
    path = TASKS_DIR / f"{domain}.yaml"
    if not path.exists():
        pytest.fail(f"{path} is missing")
    rows = check_file(path)
    failures = {row.task_id: row.results for row in rows if not row.passed}
    assert failures == {}
