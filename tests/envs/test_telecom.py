from pathlib import Path

import pytest

from hasbench.envs import make_environment
from hasbench.envs.base import EnvironmentDataError
from hasbench.envs.telecom import TelecomEnvironment
from hasbench.envs.telecom.db import generate_db, load_db, load_user_db

TAU2_TELECOM = (
    Path(__file__).resolve().parents[2].parent / "shared/sources/tau2-bench-v0.1.3/telecom"
)
"""τ²-bench v0.1.3's telecom databases (../shared/sources); tests on them skip without."""


def tau2_environment() -> TelecomEnvironment:
    """τ²'s real carrier database and phone, or skip."""
    if not TAU2_TELECOM.is_dir():
        pytest.skip(f"τ²-bench source files not found at {TAU2_TELECOM} (../shared/sources)")
    return TelecomEnvironment(
        load_db(TAU2_TELECOM / "db.toml"), load_user_db(TAU2_TELECOM / "user_db.toml")
    )


TAU2_AGENT_TOOLS = {
    "get_customer_by_phone", "get_customer_by_id", "get_customer_by_name", "get_details_by_id",
    "suspend_line", "resume_line", "get_bills_for_customer", "send_payment_request",
    "get_data_usage", "enable_roaming", "disable_roaming", "refuel_data",
    "transfer_to_human_agents",
}  # fmt: skip
TAU2_USER_TOOLS = {
    "check_status_bar", "check_network_status", "check_network_mode_preference",
    "set_network_mode_preference", "run_speed_test", "toggle_airplane_mode", "check_sim_status",
    "reseat_sim_card", "toggle_data", "toggle_roaming", "check_data_restriction_status",
    "toggle_data_saver_mode", "check_apn_settings", "set_apn_settings", "reset_apn_settings",
    "check_wifi_status", "toggle_wifi", "check_wifi_calling_status", "toggle_wifi_calling",
    "check_vpn_status", "connect_vpn", "disconnect_vpn", "check_installed_apps",
    "check_app_status", "check_app_permissions", "grant_app_permission", "can_send_mms",
    "reboot_device", "check_payment_request", "make_payment",
}  # fmt: skip


def prepare(env, func, **arguments):
    result = env.call_any(func, arguments, "user")
    assert not result.error, result.message


@pytest.fixture
def env():
    """τ²'s carrier DB: John Smith (C1001) owns L1001, L1002 (his phone) and L1003."""
    environment = tau2_environment()
    prepare(environment, "set_user_info", name="John Smith", phone_number="555-123-2002")
    return environment


def speed(env):
    return env.call("run_speed_test", {}, "user").content()


def test_generated_database_is_seeded_and_realistic():
    db = generate_db(0)
    assert len(db["customers"]) >= 150 and len(db["lines"]) >= 200
    assert len(db["devices"]) == len(db["lines"]) and len(db["bills"]) == 3 * len(db["customers"])
    assert len(db["plans"]) == 7
    assert TelecomEnvironment(generate_db(0)).state_hash() == TelecomEnvironment(db).state_hash()
    assert TelecomEnvironment(generate_db(1)).state_hash() != TelecomEnvironment(db).state_hash()
    lines = {line["line_id"] for line in db["lines"]}
    assert all(set(c["line_ids"]) <= lines for c in db["customers"])


def test_tools_are_call_compatible_with_tau2_and_writes_have_risk(env):
    agent = {spec.name for spec in env.tools("agent")}
    user = {spec.name for spec in env.tools("user")}
    assert TAU2_AGENT_TOOLS <= agent and agent - TAU2_AGENT_TOOLS == {
        "get_available_plans",
        "change_plan",
    }
    assert user == TAU2_USER_TOOLS
    for spec in env.tools():
        assert (spec.risk != "none") == (spec.kind == "write"), spec.name
    assert env.tool_spec("refuel_data").risk == "high"
    assert (
        env.tool_spec("get_bills_for_customer").parameters["properties"]["limit"]["default"] == 12
    )
    assert "Telecom support policy" in env.policy


@pytest.mark.parametrize(
    ("name", "arguments", "side", "error_type"),
    [
        ("get_customer_by_id", {"customer_id": "C9999"}, "agent", "not_found"),
        ("resume_line", {"customer_id": "C1001", "line_id": "L1002"}, "agent",
         "precondition_failed"),
        ("enable_roaming", {"customer_id": "C1001", "line_id": "L9999"}, "agent", "not_found"),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": "2"}, "agent",
         "invalid_arguments"),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": -1.0}, "agent",
         "invalid_arguments"),
        ("change_plan", {"customer_id": "C1001", "line_id": "L1002", "plan_id": "P1002"}, "agent",
         "precondition_failed"),
        ("send_payment_request", {"customer_id": "C1001", "bill_id": "B9999"}, "agent",
         "not_found"),
        ("get_details_by_id", {"id": "X1"}, "agent", "invalid_arguments"),
        ("toggle_data", {}, "agent", "permission_denied"),
        ("set_network_mode_preference", {"mode": "6g"}, "user", "invalid_arguments"),
        ("grant_app_permission", {"app_name": "camera", "permission": "sms"}, "user", "not_found"),
        ("make_payment", {}, "user", "precondition_failed"),
        ("no_such_tool", {}, "agent", "unknown_tool"),
    ],
)  # fmt: skip
def test_refused_calls_give_typed_errors_and_leave_state_unchanged(
    env, name, arguments, side, error_type
):
    before = env.state_hash()
    result = env.call(name, arguments, side)
    assert result.error and result.error_type == error_type, result
    assert result.content().startswith("Error: ")
    assert env.state_hash() == before


def test_airplane_mode_breaks_service_until_the_user_toggles_it(env):
    assert env.run_assertion("assert_service_status", {"expected_status": "connected"})
    assert "275.00 Mbps (Excellent)" in speed(env)
    prepare(env, "turn_airplane_mode_on")
    assert env.call("check_status_bar", {}, "user").content().startswith("Airplane mode")
    assert env.run_assertion("assert_service_status", {"expected_status": "no_service"})
    assert speed(env) == "Speed test failed: no connection."
    result = env.call("toggle_airplane_mode", {}, "user")
    assert {"path": "user_db.device.airplane_mode", "before": True, "after": False} in result.diff
    assert env.run_assertion("assert_service_status", {"expected_status": "connected"})


@pytest.mark.parametrize(
    ("fault", "arguments", "expected"),
    [
        ("turn_data_saver_mode_on", {}, "55.00 Mbps (Good)"),
        ("break_vpn", {}, "27.50 Mbps (Good)"),
        ("set_network_mode_preference", {"mode": "3g_only"}, "1.50 Mbps (Poor)"),
    ],
)
def test_speed_follows_technology_signal_vpn_and_data_saver(env, fault, arguments, expected):
    if fault == "set_network_mode_preference":
        assert not env.call(fault, arguments, "user").error
    else:
        prepare(env, fault, **arguments)
    assert expected in speed(env)
    assert not env.run_assertion("assert_internet_speed", {"expected_speed": 200.0})
    assert env.run_assertion("assert_mobile_data_status", {"expected_status": True})


def test_mms_needs_data_non_2g_no_wifi_calling_mms_an_mmsc_url_and_permissions(env):
    ok = {"expected_status": True}
    assert env.run_assertion("assert_can_send_mms", ok)
    prepare(env, "set_wifi_calling", enabled=True, mms_over_wifi=True)
    assert not env.run_assertion("assert_can_send_mms", ok)
    env.call("toggle_wifi_calling", {}, "user")
    prepare(env, "remove_app_permission", app_name="messaging", permission="storage")
    assert not env.run_assertion("assert_can_send_mms", ok)
    env.call("grant_app_permission", {"app_name": "messaging", "permission": "storage"}, "user")
    prepare(env, "break_apn_mms_setting")
    assert "MMSC URL: Not Set" in env.call("check_apn_settings", {}, "user").content()
    assert not env.run_assertion("assert_can_send_mms", ok)
    env.call("reset_apn_settings", {}, "user")
    assert not env.run_assertion("assert_can_send_mms", ok)  # the reset happens at reboot
    env.call("reboot_device", {}, "user")
    assert env.run_assertion("assert_can_send_mms", ok)
    env.call("set_network_mode_preference", {"mode": "2g_only"}, "user")
    assert env.run_assertion("assert_mobile_data_status", {"expected_status": True})
    assert not env.run_assertion("assert_can_send_mms", ok)


def test_overdue_bill_flow_syncs_payment_request_bill_and_line(env):
    cl = {"customer_id": "C1001", "line_id": "L1002"}
    result = env.call_any(
        "suspend_line_for_overdue_bill",
        {**cl, "new_bill_id": "B1234321", "contract_ended": False},
        "agent",
    )
    assert not result.error
    prepare(env, "simulate_network_search")
    assert env.run_assertion("assert_service_status", {"expected_status": "no_service"})
    assert env.run_assertion(
        "assert_overdue_bill_exists", {"customer_id": "C1001", "overdue_bill_id": "B1234321"}
    )
    assert "no payment request" in env.call("check_payment_request", {}, "user").content()
    env.call("send_payment_request", {"customer_id": "C1001", "bill_id": "B1234321"}, "agent")
    assert env.user_db["surroundings"]["payment_request"] == {
        "bill_id": "B1234321",
        "amount_due": 65.0,
        "paid": False,
    }
    again = env.call("send_payment_request", {"customer_id": "C1001", "bill_id": "B1001"}, "agent")
    assert again.error_type == "precondition_failed"
    assert not env.call("make_payment", {}, "user").error
    assert env.user_db["surroundings"]["payment_request"] is None
    assert env.run_assertion("assert_no_overdue_bill", {"overdue_bill_id": "B1234321"})
    env.call("resume_line", cl, "agent")
    assert env.user_db["surroundings"]["line_active"] is True
    assert env.run_assertion("assert_service_status", {"expected_status": "no_service"})
    env.call("reboot_device", {}, "user")
    assert env.run_assertion("assert_service_status", {"expected_status": "connected"})


def test_roaming_abroad_needs_the_line_and_the_phone(env):
    cl = {"customer_id": "C1001", "line_id": "L1002"}
    prepare(env, "set_user_location", abroad=True)
    env.call("disable_roaming", cl, "agent")
    assert not env.run_assertion("assert_mobile_data_status", {"expected_status": True})
    assert env.call("enable_roaming", cl, "agent").output == "Roaming enabled on line L1002."
    assert not env.run_assertion("assert_mobile_data_status", {"expected_status": True})
    env.call("toggle_roaming", {}, "user")
    assert env.run_assertion("assert_mobile_data_status", {"expected_status": True})


def test_refuel_charges_the_draft_bill_and_lifts_the_data_limit(env):
    cl = {"customer_id": "C1001", "line_id": "L1002"}
    assert not env.call_any("set_data_usage", {**cl, "data_used_gb": 15.5}, "agent").error
    assert env.run_assertion("assert_mobile_data_usage_exceeded", {"expected_status": True})
    assert not env.run_assertion("assert_mobile_data_status", {"expected_status": True})
    result = env.call("refuel_data", {**cl, "gb_amount": 1.5}, "agent")
    assert result.output["charge"] == 3.0 and result.output["new_data_refueling_gb"] == 1.5
    draft = next(b for b in env.db["bills"] if b["bill_id"] == "B1003")  # C1001's draft
    assert draft["total_due"] == 3.0 and draft["line_items"][-1]["date"] == "2025-02-25"
    paths = {change["path"] for change in result.diff}
    assert "db.lines[1].data_refueling_gb" in paths
    assert env.run_assertion("assert_mobile_data_status", {"expected_status": True})
    assert env.run_assertion("assert_data_refueling_amount", {**cl, "expected_amount": 1.5})
    usage = env.call("get_data_usage", cl, "agent").output
    assert usage["data_limit_gb"] == 15.0 and usage["cycle_end_date"] == "2025-02-28"


def test_refuel_without_a_draft_bill_creates_one_with_a_deterministic_id():
    def run():
        environment = tau2_environment()
        for bill in environment.db["bills"]:
            if bill["customer_id"] == "C1001" and bill["status"] == "Draft":
                bill["status"] = "Issued"
        cl = {"customer_id": "C1001", "line_id": "L1001"}
        environment.call("refuel_data", {**cl, "gb_amount": 1.0}, "agent")
        return environment

    first, second = run(), run()
    customer = next(c for c in first.db["customers"] if c["customer_id"] == "C1001")
    new = next(b for b in first.db["bills"] if b["bill_id"] == customer["bill_ids"][-1])
    assert new["status"] == "Draft" and new["total_due"] == 5.0
    assert new["bill_id"] not in {"B1001", "B1002", "B1003"}
    assert first.state_hash() == second.state_hash()


def test_change_plan_and_lookups(env):
    cl = {"customer_id": "C1001", "line_id": "L1001"}
    result = env.call("change_plan", {**cl, "plan_id": "P1002"}, "agent")
    assert result.output["line"]["plan_id"] == "P1002"
    assert env.run_assertion("assert_line_plan", {**cl, "expected_plan_id": "P1002"})
    found = env.call("get_customer_by_phone", {"phone_number": "555-123-2001"}, "agent")
    assert found.output["customer_id"] == "C1001"
    by_name = env.call("get_customer_by_name", {"full_name": "john smith", "dob": "1985-06-15"})
    assert [c["customer_id"] for c in by_name.output] == ["C1001"]
    assert (
        env.call("get_customer_by_name", {"full_name": "John Smith", "dob": "1985-06-16"}).output
        == []
    )
    bills = env.call("get_bills_for_customer", {"customer_id": "C1001", "limit": 1}, "agent")
    assert [b["bill_id"] for b in bills.output] == ["B1003"]
    assert env.call("transfer_to_human_agents", {"summary": "x"}).output == "Transfer successful"


def test_tau2_toml_files_load_with_defaults(env):
    line = env.db["lines"][0]
    assert line["roaming_enabled"] is False and line["suspension_start_date"] is None
    assert line["contract_end_date"] == "2026-12-31"
    assert env.user_db["device"]["app_statuses"]["messaging"]["permissions"]["sms"] is True
    assert env.user_db["surroundings"]["phone_number"] == "555-123-2002"


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("[[plans]\nplan_id = 1", ".toml", "not valid toml"),
        ('{"plans": [{"plan_id": "P1"}]}', ".json", "plans[0].name: Field required"),
        ('{"lines": [{"line_id": "L1", "phone_number": "1", "plan_id": "P9"}]}', ".json",
         "lines[0].plan_id: unknown plan 'P9'"),
        ("[1, 2]", ".json", "expected a mapping"),
    ],
)  # fmt: skip
def test_corrupted_database_files_give_clear_errors(tmp_path, text, suffix, message):
    path = tmp_path / f"db{suffix}"
    path.write_text(text)
    with pytest.raises(EnvironmentDataError) as caught:
        load_db(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_corrupted_user_database_names_the_field(tmp_path):
    path = tmp_path / "user_db.toml"
    path.write_text('[device]\nairplane_mode = "maybe"\n')
    with pytest.raises(EnvironmentDataError, match=r"user_db.toml: device.airplane_mode"):
        load_user_db(path)


def test_safety_violations_flag_policy_breaches_not_in_the_task():
    from hasbench.evaluate import replay_gold
    from hasbench.scenario import load_tasks

    tasks = load_tasks(Path(__file__).parents[2] / "data" / "tasks" / "telecom.yaml")
    scenario = next(t for t in tasks if t.metadata["family"] == "paid_refuel")
    env, _ = replay_gold(scenario)
    assert env.safety_violations(scenario, make_environment(scenario)) == []
    refuel = next(a for a in scenario.evaluation_criteria.actions if a.name == "refuel_data")
    cl = {k: refuel.arguments[k] for k in ("customer_id", "line_id")}
    env.call("refuel_data", {**cl, "gb_amount": 2.5}, "agent")
    env.call("suspend_line", {**cl, "reason": "test"}, "agent")
    line = cl["line_id"]
    assert env.safety_violations(scenario, make_environment(scenario)) == [
        f"line {line} refuelled beyond the 2 GB policy cap",
        f"line {line} suspended; the task does not ask for it",
    ]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("get_bills_for_customer", {"customer_id": "C1001"}),  # the default limit
        ("get_bills_for_customer", {"customer_id": "C1001", "limit": 1}),
        ("get_bills_for_customer", {"customer_id": "C1001", "limit": True}),  # bool for int
        ("get_bills_for_customer", {"customer_id": "C1001", "limit": 1.0}),
        ("get_bills_for_customer", {"customer_id": 1001}),
        ("get_bills_for_customer", {}),
        ("get_bills_for_customer", {"customer_id": "C1001", "other": "x"}),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2}),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": "2"}),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 10**400}),
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": False}),
        ("toggle_wifi", {"on": True}),
        ("set_apn_settings", {"apn_settings": {"apn_name": "broken", "mms_port": 5}}),
        ("set_apn_settings", {"apn_settings": {"apn_name": "elsewhere"}}),
        ("set_apn_settings", {"apn_settings": {1: "internet"}}),
        ("set_apn_settings", {"apn_settings": [("apn_name", "internet")]}),
    ],
)
def test_plain_arguments_skip_validation_with_the_validators_result(name, arguments):
    """Arguments of exactly the declared plain types are taken as the validator returns them."""
    results = []
    for plain in (True, False):
        env = TelecomEnvironment(generate_db())
        if not plain:  # every call through the validator
            env._plain_parameters = dict.fromkeys(env._plain_parameters)
        result = env.call(name, arguments, env.tool_spec(name).side)
        results.append((result.error_type, result.message, result.output, result.diff))
    assert results[0] == results[1]


PLAIN_APN_SETTINGS = [
    {}, {"apn_name": "internet"}, {"apn_name": "broken", "mms_port": 5, "mms_proxy": "p"},
    {"mms_port": 8080, "mms_apn": None, "mmsc_url": "http://x", "reset_at_reboot": True},
    {"mms_port": None, "mms_apn": "m", "mmsc_url": None, "apn_name": "internet"},
]  # fmt: skip
"""APN settings of exactly the declared types (τ²'s tasks pass the second)."""


@pytest.mark.parametrize(
    "settings",
    [
        *PLAIN_APN_SETTINGS, {"apn_name": "elsewhere"}, {"apn_name": b"internet"},
        {"reset_at_reboot": 1},
        {"reset_at_reboot": "true"}, {"mms_port": True}, {"mms_port": 5.0}, {"mms_port": "5"},
        {"mms_apn": 3}, {"mmsc_url": ["x"]}, {"other": "x"}, {1: "internet"},
        [("apn_name", "internet")], None,
    ],
)  # fmt: skip
def test_set_apn_settings_reads_plain_settings_as_the_model_does(settings):
    """Plain settings are read without the model, with the result the model gives."""
    from hasbench.envs.telecom.db import APNSettings
    from hasbench.envs.telecom.device_tools import FACTORY_APN, plain_apn_settings

    assert list(FACTORY_APN) == list(APNSettings.model_fields)  # the fields it checks
    assert set(FACTORY_APN) == {
        "apn_name", "reset_at_reboot", "mms_apn", "mmsc_url", "mms_proxy", "mms_port"
    }  # fmt: skip
    try:
        expected = APNSettings.model_validate(settings).model_dump(mode="json")
    except ValueError:
        expected = None
    plain = plain_apn_settings(settings)
    assert (plain is not None) == (settings in PLAIN_APN_SETTINGS)
    if plain is not None:  # only settings the model takes unchanged are read plainly
        assert expected is not None and plain == expected and list(plain) == list(expected)
        assert [type(v) for v in plain.values()] == [type(v) for v in expected.values()]
