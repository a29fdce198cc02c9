from collections import Counter

import pytest

from hasbench.build import telecom_tasks
from hasbench.envs import make_environment
from hasbench.evaluate import replay_gold
from hasbench.personas import domain_personas
from hasbench.scenario import load_tasks

TASKS = load_tasks(telecom_tasks.OUTPUT)


def holds(env, scenario):
    return [
        env.run_assertion(a.func_name, a.arguments) == a.assert_value
        for a in scenario.evaluation_criteria.env_assertions
    ]


def test_pattern_mix_personas_and_ids():
    assert Counter(t.adaptation_pattern for t in TASKS) == {"A": 55, "B": 35, "C": 10}
    assert len({t.task_id for t in TASKS}) == 100
    personas = {p.persona_id for p in domain_personas("telecom")}
    assert {t.users[0].persona for t in TASKS} == personas
    assert {t.metadata["difficulty"] for t in TASKS} == {"easy", "medium", "hard"}
    assert {t.metadata["intent"] for t in TASKS} == {"service", "mobile_data", "mms"}


@pytest.mark.slow
def test_generator_reproduces_the_committed_file_byte_for_byte():
    assert telecom_tasks.build().to_yaml() == telecom_tasks.OUTPUT.read_text(encoding="utf-8")


@pytest.mark.parametrize("scenario", TASKS, ids=lambda s: s.task_id)
def test_gold_path_solves_the_task_and_the_start_state_does_not(scenario):
    assert not any(holds(make_environment(scenario), scenario))
    gold, errors = replay_gold(scenario)
    assert errors == []
    assert all(holds(gold, scenario))


def test_dual_control_device_steps_belong_to_the_user():
    env = make_environment(TASKS[0])
    for scenario in TASKS:
        for gold in scenario.evaluation_criteria.actions:
            side = env.tool_spec(gold.name).side
            assert gold.requestor == ("user_0" if side == "user" else "agent_0")
    user_actions = sum(
        a.requestor == "user_0" for t in TASKS for a in t.evaluation_criteria.actions
    )
    assert user_actions >= 100


def test_each_pattern_is_real_in_the_task():
    """Only pattern A hides who calls; B and C state the caller ID and hide their own part."""
    env = make_environment(TASKS[0])
    for scenario in TASKS:
        user = scenario.users[0]
        first = scenario.evaluation_criteria.actions[0]
        assert first.name == "get_customer_by_phone"
        phone = first.arguments["phone_number"]
        if scenario.adaptation_pattern == "A":
            assert user.known_info["phone_number"] == phone
        else:
            assert f"from {phone} (caller ID)" in scenario.task
        visible = " ".join([scenario.task, scenario.agents[0].profile, env.policy])
        for value in user.known_info.values():
            assert str(value) not in visible, (scenario.task_id, value)
        protected = [a for a in scenario.evaluation_criteria.actions if a.protected]
        assert all(env.tool_spec(a.name).risk == "high" for a in protected)
        if scenario.adaptation_pattern == "A":
            assert "phone_status_bar" in user.known_info
        if scenario.adaptation_pattern == "B":
            criterion = user.known_info.get("acceptance_criterion") or user.known_info.get(
                "extra_data_gb"
            )
            assert criterion is not None and str(criterion) not in scenario.task
        if scenario.adaptation_pattern == "C":
            assert [a.name for a in protected] in (["refuel_data"], ["change_plan"])
            assert "explicit approval" in scenario.task and not user.known_info
            quoted = scenario.evaluation_criteria.nl_assertions[0].split('"')[1]
            assert quoted in scenario.evaluation_criteria.communicate_info


def test_latent_network_mode_criterion_changes_the_outcome():
    scenario = next(t for t in TASKS if t.metadata["family"] == "latent_network_mode")
    env, _ = replay_gold(scenario)
    assert all(holds(env, scenario))
    env.call("set_network_mode_preference", {"mode": "4g_5g_preferred"}, "user")
    assert not all(holds(env, scenario))  # the manual's default fix breaks the user's criterion


@pytest.mark.parametrize("pattern", ["A", "B", "C"])
def test_automatic_checks_pass_on_a_task_of_each_pattern(pattern):
    from hasbench.build.checks import check_task

    scenario = next(t for t in TASKS if t.adaptation_pattern == pattern)
    row = check_task(scenario)
    assert row.passed, row.results


def test_dual_control_episode_routes_device_steps_to_the_user():
    from hasbench.agency import Setting
    from hasbench.simulator import Backends, run_episode

    scenario = next(t for t in TASKS if t.metadata["family"] == "troubleshoot_service")
    backends = Backends(agent="scripted:oracle")
    trace = run_episode(scenario, Setting(agency="A3"), backends)
    requests = [
        e.payload.action.name
        for e in trace.of_type("channel_request")
        if e.channel == "control" and e.payload.form == "execute"
    ]
    device_calls = [e for e in trace.of_type("tool_call") if e.payload.side == "user"]
    assert requests == [e.payload.name for e in device_calls]
    assert all(e.actor == "user_0" and e.payload.authorization for e in device_calls)
    autonomous = run_episode(scenario, Setting(agency="A1"), backends)
    assert not [e for e in autonomous.of_type("tool_call") if e.payload.side == "user"]


def test_data_allowance_tasks_use_metered_plans_and_policy_limits():
    families = {"latent_budget_refuel", "paid_refuel", "plan_change"}
    for scenario in (t for t in TASKS if t.metadata["family"] in families):
        env = make_environment(scenario)
        write = scenario.evaluation_criteria.actions[-1]
        line = next(ln for ln in env.db["lines"] if ln["line_id"] == write.arguments["line_id"])
        assert line["plan_id"] != "P1003"  # never "refuel" an unlimited plan
        if write.name == "refuel_data":
            assert 0 < write.arguments["gb_amount"] <= 2.0
        assert env.run_assertion("assert_mobile_data_usage_exceeded", {"expected_status": True})
