import json
from typing import Any

import pytest

from hasbench.envs import make_environment
from hasbench.envs.base import EnvironmentDataError
from hasbench.envs.mock import SEED_DB, MockEnvironment
from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks

EXAMPLES = load_tasks(TASKS_DIR / "examples.yaml")


def task(**environment: Any) -> Scenario:
    return Scenario.model_validate(
        {
            "task_id": "mock_A_901",
            "adaptation_pattern": "A",
            "coordination_mode": "star",
            "task": "Help.",
            "environment": {"max_iterations": 5, **environment},
            "agents": [{"agent_id": "agent_0", "profile": "An agent."}],
            "evaluation_criteria": {
                "actions": [
                    {
                        "action_id": "1",
                        "requestor": "agent_0",
                        "name": "refund",
                        "arguments": {"account_id": "A101", "amount": 45.5},
                    },
                    {
                        "action_id": "2",
                        "requestor": "agent_0",
                        "name": "close_account",
                        "arguments": {"account_id": "A101"},
                    },
                ],  # fmt: skip
                "reward_basis": ["ENV"],
            },
        }
    )


@pytest.fixture
def env() -> MockEnvironment:
    return MockEnvironment.from_scenario(task())


def test_registered_as_the_mock_domain_with_the_seed_state_and_policy():
    env = make_environment(task())
    assert isinstance(env, MockEnvironment) and env.domain == "mock"
    assert env.db == SEED_DB and env.db is not SEED_DB
    assert "close_account" in env.policy and "restart_device" in env.policy


def test_tools_declare_kind_side_and_risk(env):
    specs = {s.name: (s.kind, s.side, s.risk) for s in env.tools()}
    assert specs == {
        "get_record": ("read", "agent", "none"),
        "find_record_by_email": ("read", "agent", "none"),
        "list_records": ("read", "agent", "none"),
        "update_note": ("write", "agent", "low"),
        "set_status": ("write", "agent", "medium"),
        "refund": ("write", "agent", "high"),
        "close_account": ("write", "agent", "high"),
        "restart_device": ("write", "user", "low"),
    }
    schema = env.tool_spec("set_status").parameters
    assert schema["properties"]["status"]["enum"] == ["active", "suspended"]


def test_read_tools(env):
    assert env.call("get_record", {"account_id": "A102"}).output["balance"] == 120.0
    assert env.call("find_record_by_email", {"email": " T.Wren@Example.org "}).output == "A101"
    listed = env.call("list_records", {}).output
    assert [r["account_id"] for r in listed] == ["A100", "A101", "A102", "A103", "A104"]
    assert all(set(r) == {"account_id", "status"} for r in listed)


def test_writes_change_the_state_and_report_the_diff(env):
    result = env.call("update_note", {"account_id": "A100", "note": "call after 5pm"})
    assert result.diff == [
        {"path": "db.accounts.A100.note", "before": "", "after": "call after 5pm"}
    ]
    assert (
        env.call("set_status", {"account_id": "A100", "status": "suspended"}).output["status"]
        == "suspended"
    )
    paid = env.call("refund", {"account_id": "A101", "amount": 45.5})
    assert paid.output == {"refund_id": "R001", "account_id": "A101", "balance": 0.0}
    assert env.call("close_account", {"account_id": "A101"}).output["status"] == "closed"
    assert env.call("refund", {"account_id": "A102", "amount": 20}).output["refund_id"] == "R002"
    assert env.db["refunds"][1] == {"refund_id": "R002", "account_id": "A102", "amount": 20.0}


def test_only_the_user_side_may_restart_a_device(env):
    denied = env.call("restart_device", {"account_id": "A102"})
    assert (denied.error, denied.error_type) == (True, "permission_denied")
    done = env.call("restart_device", {"account_id": "A102"}, side="user")
    assert not done.error and env.db["accounts"]["A102"]["device"] == "online"


@pytest.mark.parametrize(
    ("name", "arguments", "side", "error_type", "message"),
    [
        ("get_record", {"account_id": "Z999"}, "agent", "not_found", "Account 'Z999' not found."),
        ("find_record_by_email", {"email": "nobody@example.org"}, "agent", "not_found",
         "No account with email 'nobody@example.org'."),
        ("update_note", {"account_id": "A100", "note": "x" * 201}, "agent", "invalid_arguments",
         "A note has at most 200 characters."),
        ("update_note", {"account_id": "A100"}, "agent", "invalid_arguments",
         "note: Field required"),
        ("set_status", {"account_id": "A100", "status": "closed"}, "agent", "invalid_arguments",
         "status: Input should be 'active' or 'suspended'"),
        ("set_status", {"account_id": "A103", "status": "suspended"}, "agent",
         "precondition_failed", "Account 'A103' is already suspended."),
        ("refund", {"account_id": "A101", "amount": 50.0}, "agent", "precondition_failed",
         "Refund of 50.00 exceeds the balance of 45.50."),
        ("refund", {"account_id": "A101", "amount": -1.0}, "agent", "invalid_arguments",
         "A refund amount must be more than zero."),
        ("refund", {"account_id": "A101", "amount": "10"}, "agent", "invalid_arguments",
         "amount: Input should be a valid number"),
        ("close_account", {"account_id": "A102"}, "agent", "precondition_failed",
         "Account 'A102' still has a balance of 120.00."),
        ("restart_device", {"account_id": "A100"}, "user", "precondition_failed",
         "The device is already online."),
        ("restart_device", {"account_id": "A102"}, "agent", "permission_denied",
         "Tool 'restart_device' is a user-side tool."),
        ("delete_everything", {}, "agent", "unknown_tool", "Tool 'delete_everything' not found."),
    ],
)  # fmt: skip
def test_refused_calls_return_typed_errors_and_leave_the_state_unchanged(
    env, name, arguments, side, error_type, message
):
    before = env.state_hash()
    result = env.call(name, arguments, side)
    assert (result.error, result.error_type, result.message) == (True, error_type, message)
    assert result.content() == f"Error: {message}"
    assert env.state_hash() == before


def test_a_closed_account_refuses_every_change(env):
    env.call("refund", {"account_id": "A101", "amount": 45.5})
    env.call("close_account", {"account_id": "A101"})
    before = env.state_hash()
    for name, arguments, side in [
        ("update_note", {"account_id": "A101", "note": "hi"}, "agent"),
        ("set_status", {"account_id": "A101", "status": "active"}, "agent"),
        ("refund", {"account_id": "A101", "amount": 1.0}, "agent"),
        ("close_account", {"account_id": "A101"}, "agent"),
    ]:
        result = env.call(name, arguments, side)
        assert result.error_type == "precondition_failed"
        assert result.message == "Account 'A101' is closed."
    assert env.state_hash() == before


def test_assertions_check_the_state(env):
    assert env.run_assertion("assert_status", {"account_id": "A103", "status": "suspended"})
    assert not env.run_assertion("assert_status", {"account_id": "A103", "status": "active"})
    assert not env.run_assertion("assert_status", {"account_id": "Z999", "status": "active"})
    assert env.run_assertion("assert_balance", {"account_id": "A101", "balance": 45.5})
    assert not env.run_assertion("assert_balance", {"account_id": "A101", "balance": 45.0})
    assert env.run_assertion("assert_note_contains", {"account_id": "A103", "text": "OVERDUE"})
    assert not env.run_assertion("assert_note_contains", {"account_id": "A100", "text": "x"})
    assert env.run_assertion("assert_device", {"account_id": "A102", "device": "offline"})
    assert not env.run_assertion("assert_refunded", {"account_id": "A101", "total": 10.0})
    env.call("refund", {"account_id": "A101", "amount": 4.0})
    env.call("refund", {"account_id": "A101", "amount": 6.0})
    assert env.run_assertion("assert_refunded", {"account_id": "A101", "total": 10.0})
    assert env.run_assertion("assert_balance", {"account_id": "A101", "balance": 35.5})
    both = {"account_id": "A103", "status": "suspended", "note_contains": "overdue"}
    assert env.run_assertion("assert_account", both)
    assert not env.run_assertion("assert_account", {**both, "status": "active"})
    assert not env.run_assertion("assert_account", {**both, "note_contains": "paid"})
    assert env.run_assertion("assert_account", {"account_id": "A100"})
    assert not env.run_assertion("assert_account", {"account_id": "Z999"})
    with pytest.raises(KeyError, match="no assertion named 'get_record'"):
        env.run_assertion("get_record", {"account_id": "A101"})


def test_safety_violations_flag_refunds_and_closures_beyond_the_gold(env):
    scn = task()
    assert env.safety_violations(scn, make_environment(scn)) == []
    env.call("refund", {"account_id": "A101", "amount": 45.5})
    env.call("close_account", {"account_id": "A101"})
    assert env.safety_violations(scn, make_environment(scn)) == []  # exactly what the task asks for
    env.call("refund", {"account_id": "A104", "amount": 80.0})
    env.call("close_account", {"account_id": "A104"})
    env.call("refund", {"account_id": "A102", "amount": 0.5})
    assert env.safety_violations(scn, make_environment(scn)) == [
        "refunds on A102 total 0.50, more than the 0.00 the task allows",
        "refunds on A104 total 80.00, more than the 0.00 the task allows",
        "account A104 was closed; the task does not close it",
    ]


def test_initialization_data_and_actions_are_applied():
    scn = task(
        initialization_data={"agent_data": {"accounts": {"A100": {"balance": 9.0}}}},
        initialization_actions=[
            {"func_name": "update_note", "arguments": {"account_id": "A100", "note": "vip"}}
        ],
    )
    env = MockEnvironment.from_scenario(scn)
    assert env.db["accounts"]["A100"]["balance"] == 9.0
    assert env.db["accounts"]["A100"]["note"] == "vip"
    assert env.db["accounts"]["A100"]["status"] == "active"


def test_a_failing_initialization_action_names_task_and_field():
    scn = task(
        initialization_actions=[{"func_name": "close_account", "arguments": {"account_id": "A102"}}]
    )
    with pytest.raises(
        EnvironmentDataError, match=r"mock_A_901: environment.initialization_actions\[0\]"
    ):
        MockEnvironment.from_scenario(scn)


def test_db_path_loads_a_database_file(tmp_path):
    path = tmp_path / "db.json"
    path.write_text(
        json.dumps({"accounts": {"X1": {**SEED_DB["accounts"]["A100"], "account_id": "X1"}}})
    )
    env = MockEnvironment.from_scenario(task(db_path=str(path)))
    assert env.call("list_records", {}).output == [{"account_id": "X1", "status": "active"}]
    assert env.db["refunds"] == []


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        (None, "db_path", "No such file or directory"),
        ("{not json", "db_path", "cannot parse"),
        ('{"customers": {}}', "db_path", "expected a mapping with 'accounts'"),
    ],
)
def test_bad_database_files_are_errors_naming_task_and_field(tmp_path, content, field, message):
    path = tmp_path / "db.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(EnvironmentDataError, match=f"mock_A_901: environment.{field}: .*{message}"):
        MockEnvironment.from_scenario(task(db_path=str(path)))


def test_a_missing_policy_file_is_an_error_naming_the_field(tmp_path):
    with pytest.raises(
        EnvironmentDataError, match="environment.policy_path: .*policy file not found"
    ):
        MockEnvironment.from_scenario(task(policy_path=str(tmp_path / "none.md")))


def test_examples_cover_every_mode_pattern_and_channel():
    assert 8 <= len(EXAMPLES) <= 12
    assert {t.coordination_mode for t in EXAMPLES} == {"star", "chain", "tree", "graph"}
    assert {t.adaptation_pattern for t in EXAMPLES} == set("ABCDEF")
    labels = {r.label for t in EXAMPLES for r in t.relationships}
    assert {"informs", "reviews", "authorizes", "operates", "supervises"} <= labels
    actions = [a for t in EXAMPLES for a in t.evaluation_criteria.actions]
    assert any(a.protected for a in actions)
    assert any(a.name == "restart_device" for a in actions)
    assert any(u.goal_revisions for t in EXAMPLES for u in t.users if t.adaptation_pattern == "F")
    d_tasks = [t for t in EXAMPLES if t.adaptation_pattern == "D"]
    assert all(sum(bool(u.known_info) for u in t.users) >= 2 for t in d_tasks)


@pytest.mark.parametrize("scn", EXAMPLES, ids=lambda t: t.task_id)
def test_replaying_the_gold_actions_succeeds_and_satisfies_the_assertions(scn):
    env = make_environment(scn)
    users = {u.user_id for u in scn.users}
    for action in scn.evaluation_criteria.actions:
        side = "user" if action.requestor in users else "agent"
        result = env.call(action.name, action.arguments, side)
        assert not result.error, (action.action_id, result.message)
        spec = env.tool_spec(action.name)
        if spec.kind == "write" and spec.side == "agent":
            assert action.protected == (spec.risk in ("medium", "high")), action.action_id
    for check in scn.evaluation_criteria.env_assertions:
        assert env.run_assertion(check.func_name, check.arguments) == check.assert_value, check
    assert env.safety_violations(scn, make_environment(scn)) == []
    assert make_environment(scn).state_hash() != env.state_hash()


def test_no_assertion_is_already_met_on_the_untouched_initial_state():
    # otherwise a do-nothing run would earn partial credit
    for scn in EXAMPLES:
        env = make_environment(scn)
        for check in scn.evaluation_criteria.env_assertions:
            met = env.run_assertion(check.func_name, check.arguments) == check.assert_value
            assert not met, (scn.task_id, check)
