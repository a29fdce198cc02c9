"""The committed Retail and Airline task files: counts, reproducibility, gold replay."""

from collections import Counter

import pytest

from hasbench.build import airline_tasks, retail_tasks
from hasbench.build.builder import BuildError, require_gold
from hasbench.envs import make_environment
from hasbench.paths import TASKS_DIR
from hasbench.personas import domain_personas
from hasbench.scenario import load_tasks, validate_file

GENERATORS = {"retail": retail_tasks, "airline": airline_tasks}
PATTERNS = {
    "retail": {"A": 34, "B": 40, "C": 10, "F": 10},
    "airline": {"A": 9, "C": 8, "D": 6, "F": 8},
}


@pytest.fixture(scope="module", params=["retail", "airline"])
def domain(request):
    return request.param


@pytest.fixture(scope="module")
def tasks(domain):
    return load_tasks(GENERATORS[domain].OUTPUT)


def test_file_validates_with_the_paper_pattern_mix(domain, tasks):
    assert validate_file(GENERATORS[domain].OUTPUT) == []
    assert Counter(t.adaptation_pattern for t in tasks) == PATTERNS[domain]
    assert len({t.task_id for t in tasks}) == len(tasks)


def test_tasks_use_the_domain_personas_and_vary_in_difficulty(domain, tasks):
    ids = {p.persona_id for p in domain_personas(domain)}
    used = {u.persona for t in tasks for u in t.users}
    assert used == ids
    assert {t.metadata["difficulty"] for t in tasks} == {"easy", "medium", "hard"}


def test_patterns_are_real(domain, tasks):
    for task in tasks:
        gold = task.evaluation_criteria.actions
        customer = task.users[0]
        if task.adaptation_pattern == "A":
            assert customer.known_info, task.task_id
            values = {str(v) for v in customer.known_info.values()}
            used = [a for a in gold if values & {str(x) for x in _leaves(a.arguments)}]
            assert used, f"{task.task_id}: no gold action uses a fact only the user holds"
        elif task.adaptation_pattern == "B":
            assert "acceptable_variants" in customer.known_info
        elif task.adaptation_pattern == "C":
            assert any(a.protected for a in gold), task.task_id
        elif task.adaptation_pattern == "D":
            assert len(task.users) == 2
            manager = task.users[1]
            card = manager.known_info["company_card"]
            assert any(a.arguments.get("payment_id") == card for a in gold), task.task_id
        elif task.adaptation_pattern == "F":
            revision = customer.goal_revisions[0]
            facts = {str(v) for v in revision.known_info.values()}
            leaves = {str(x) for a in gold for x in _leaves(a.arguments)}
            assert facts & leaves, f"{task.task_id}: gold does not follow the revised goal"


@pytest.mark.slow
def test_every_gold_path_replays_and_changes_the_state(domain, tasks):
    for task in tasks:
        start = make_environment(task).state_hash()
        end = require_gold(task)  # raises on any tool error
        assert end.state_hash() != start, task.task_id
        assert end.safety_violations(task, make_environment(task)) == [], task.task_id
        for check in task.evaluation_criteria.env_assertions:
            assert end.run_assertion(check.func_name, check.arguments) is check.assert_value
            assert make_environment(task).run_assertion(check.func_name, check.arguments) is not (
                check.assert_value
            ), f"{task.task_id}: {check.func_name} already holds before the episode"


@pytest.mark.slow
def test_generator_reproduces_the_committed_file_byte_for_byte(domain):
    module = GENERATORS[domain]
    assert module.build().to_yaml() == module.OUTPUT.read_text(encoding="utf-8")


def test_a_different_seed_gives_different_tasks():
    assert airline_tasks.build(seed=1).to_yaml() != airline_tasks.OUTPUT.read_text(encoding="utf-8")


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.mark.slow
def test_build_tasks_command_rewrites_the_airline_file(tmp_path, monkeypatch, capsys):
    from hasbench.cli import main

    target = tmp_path / "airline.yaml"
    monkeypatch.setattr(airline_tasks, "OUTPUT", target)
    assert main(["build", "tasks", "--domain", "airline"]) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    assert target.read_bytes() == (TASKS_DIR / "airline.yaml").read_bytes()


def test_a_revised_address_is_the_address_the_gold_path_writes():
    """After a goal revision, what the customer knows of the address is exactly the gold one."""
    parts = {"street": "address1", "apartment": "address2", "city": "city", "state": "state"}
    revised = 0
    for task in load_tasks(TASKS_DIR / "retail.yaml"):
        for user in task.users:
            for revision in user.goal_revisions:
                if "street" not in revision.known_info:
                    continue
                told = {**user.known_info, **revision.known_info}
                for action in task.evaluation_criteria.actions:
                    if action.name in ("modify_pending_order_address", "modify_user_address"):
                        gold = action.arguments
                        said = {field: told.get(key, "") for key, field in parts.items()}
                        assert said == {f: gold[f] for f in parts.values()}, task.task_id
                        assert told["zip_code"] == gold["zip"], task.task_id
                        revised += 1
    assert revised >= 4


def test_a_failing_gold_action_stops_the_build_naming_task_and_action():
    task = load_tasks("data/tasks/retail.yaml")[0]
    gold = task.evaluation_criteria.actions[0]
    broken = gold.model_copy(update={"arguments": {**gold.arguments, "order_id": "#W0000000"}})
    criteria = task.evaluation_criteria.model_copy(update={"actions": [broken]})
    task = task.model_copy(update={"evaluation_criteria": criteria})
    with pytest.raises(BuildError, match=rf"^{task.task_id}: gold action {gold.action_id} "):
        require_gold(task)
