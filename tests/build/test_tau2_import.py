import json
from pathlib import Path

import pytest

from hasbench.build.checks import check_task
from hasbench.build.tau2_import import Tau2ImportError, extract_facts, import_tau2, write_tasks
from hasbench.cli import main
from hasbench.envs import make_environment
from hasbench.evaluate import replay_gold
from hasbench.scenario import check_scenario, load_tasks

FIXTURES = Path(__file__).parents[1] / "fixtures" / "tau2"
FILES = {
    "retail": {"db": FIXTURES / "retail_db.json"},
    "airline": {"db": FIXTURES / "airline_db.json"},
    "telecom": {
        "db": FIXTURES / "telecom_db.toml",
        "user_db": FIXTURES / "telecom_user_db.toml",
    },
}


def imported(domain):
    scenarios, skipped = import_tau2(
        FIXTURES / f"{domain}_tasks.json", domain=domain, **FILES[domain]
    )
    assert skipped == []
    return scenarios


def by_id(records, key, value):
    return next(r for r in records if r[key] == value)


@pytest.mark.parametrize(("domain", "count"), [("retail", 3), ("airline", 2), ("telecom", 2)])
def test_imported_tasks_validate_and_initialize(domain, count):
    scenarios = imported(domain)
    assert [s.task_id for s in scenarios] == [f"{domain}_A_{i:03d}" for i in range(1, count + 1)]
    for scenario in scenarios:
        assert check_scenario(scenario) == []
        assert scenario.environment.db_path == str(FILES[domain]["db"])
        assert make_environment(scenario).domain == domain


def test_users_come_from_the_user_scenario():
    first, second, third = imported("retail")
    assert first.users[0].goal.startswith("You want to cancel your pending order #W1000001")
    assert first.users[0].known_info == {
        "email": "mia.li3818@example.com",
        "order_id": "#W1000001",
    }
    assert first.users[0].unknown_info == ["You do not remember your user id."]
    assert "What you know: Your email is" in first.users[0].task_instructions
    assert "How you come across: You are brief" in second.users[0].task_instructions
    assert third.users[0].goal.startswith("You are Yusuf Rossi")  # plain-text instructions
    assert third.users[0].known_info["zip"] == "19122"
    assert third.users[0].known_info["first_name"] == "Yusuf"
    assert first.source_task_id == "0" and first.users[0].persona is None


def test_criteria_are_mapped():
    first, second, third = imported("retail")
    assert first.evaluation_criteria.reward_basis == ["ENV"]
    assert first.metadata["dropped_reward_basis"] == ["COMMUNICATE"]
    assert second.evaluation_criteria.reward_basis == ["ENV", "COMMUNICATE"]
    assert third.evaluation_criteria.reward_basis == ["ENV", "COMMUNICATE", "NL_ASSERTIONS"]
    assert {a.requestor for a in first.evaluation_criteria.actions} == {"agent_0"}
    data_off, overdue = imported("telecom")
    assert data_off.evaluation_criteria.reward_basis == ["ENV_ASSERTION"]
    assert data_off.evaluation_criteria.actions[0].requestor == "user_0"
    assert data_off.environment.user_db_path == str(FILES["telecom"]["user_db"])
    assert [a.name for a in overdue.evaluation_criteria.actions] == [
        "get_customer_by_phone",  # identification added on import; ACTION is not scored
        "send_payment_request",
        "make_payment",
        "resume_line",
        "reboot_device",
    ]
    assert [c.func_name for c in overdue.environment.initialization_actions] == [
        "set_user_info",
        "suspend_line_for_overdue_bill",
        "simulate_network_search",
    ]


def test_compare_args_initialization_data_and_user_tools_are_kept(tmp_path):
    tasks = json.loads((FIXTURES / "telecom_tasks.json").read_text())
    task = tasks[0]
    task["evaluation_criteria"]["actions"][0]["compare_args"] = []
    task["evaluation_criteria"]["reward_basis"] = ["ENV_ASSERTION", "ACTION"]
    task["initial_state"]["initialization_data"] = {"agent_data": {"plans": []}}
    task["user_tools"] = ["toggle_data", "check_status_bar"]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    [scenario], _ = import_tau2(path, domain="telecom", **FILES["telecom"])
    assert scenario.evaluation_criteria.actions[0].compare_args == []
    assert scenario.environment.initialization_data.agent_data == {"plans": []}
    assert scenario.users[0].tools == ["check_status_bar", "toggle_data"]


def test_replaying_gold_actions_reproduces_the_expected_end_state():
    cancel, exchange, ret = (replay_gold(s) for s in imported("retail"))
    assert all(errors == [] for _, errors in (cancel, exchange, ret))
    order = cancel[0].db["orders"]["#W1000001"]
    assert order["status"] == "cancelled" and order["cancel_reason"] == "no longer needed"
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 25.0,
        "payment_method_id": "credit_card_9906418",
    }
    order = exchange[0].db["orders"]["#W1000002"]
    assert order["status"] == "exchange requested"
    assert order["exchange_new_items"] == ["5555555555"]
    assert order["exchange_price_difference"] == 10.0
    order = ret[0].db["orders"]["#W1000003"]
    assert order["status"] == "return requested"
    assert order["return_payment_method_id"] == "paypal_5678901"

    (cancelled, errors_1), (bags, errors_2) = (replay_gold(s) for s in imported("airline"))
    assert errors_1 == errors_2 == []
    reservation = cancelled.db["reservations"]["ABC123"]
    assert reservation["status"] == "cancelled"
    assert reservation["payment_history"][-1] == {
        "payment_id": "credit_card_4421486",
        "amount": -1200,
    }
    reservation = bags.db["reservations"]["XYZ789"]
    assert (reservation["total_baggages"], reservation["nonfree_baggages"]) == (2, 1)
    gift = bags.db["users"]["mia_li_3668"]["payment_methods"]["gift_card_7217252"]
    assert gift["amount"] == 150.0

    for scenario in imported("telecom"):
        start = make_environment(scenario)
        end, errors = replay_gold(scenario)
        assert errors == []
        checks = scenario.evaluation_criteria.env_assertions
        assert not any(start.run_assertion(c.func_name, c.arguments) for c in checks)
        assert all(end.run_assertion(c.func_name, c.arguments) for c in checks)
    overdue_end, _ = replay_gold(imported("telecom")[1])
    assert by_id(overdue_end.db["bills"], "bill_id", "B1234321")["status"] == "Paid"
    assert by_id(overdue_end.db["lines"], "line_id", "L1002")["status"] == "Active"


@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_oracle_solves_imported_tasks_and_idle_does_not(domain):
    for scenario in imported(domain):
        row = check_task(scenario)
        assert row.passed, row.results


def test_extract_facts():
    text = (
        "You are Mia Li in zip code 78750. Your user id is mia_li_3668, email mia@x.com. "
        "Orders #W1000001 and #W1000002; reservation ABC123 on HAT001; call 555-123-2002. "
        "You ARE upset."
    )
    assert extract_facts(text) == {
        "email": "mia@x.com",
        "user_id": "mia_li_3668",
        "order_id": "#W1000001",
        "order_id_2": "#W1000002",
        "phone_number": "555-123-2002",
        "reservation_id": "ABC123",
        "reservation_id_2": "HAT001",
        "zip": "78750",
        "name": "Mia Li",
        "first_name": "Mia",
        "last_name": "Li",
    }


def broken(tmp_path, edit):
    tasks = json.loads((FIXTURES / "retail_tasks.json").read_text())
    edit(tasks[0])
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.update(
                initial_state={"message_history": [{"role": "user", "content": "hi"}]}
            ),
            "tasks.json: task 0: initial_state.message_history: a replayed conversation",
        ),
        (lambda t: t.pop("user_scenario"), "tasks.json: task 0: user_scenario: Field required"),
        (
            lambda t: t["evaluation_criteria"]["actions"][0].update(requestor="robot"),
            "tasks.json: task 0: evaluation_criteria.actions[0].requestor: Input should be",
        ),
        (
            lambda t: t["evaluation_criteria"]["actions"][0].update(name="teleport"),
            "task 0: evaluation_criteria.actions[0].name: retail has no tool 'teleport'",
        ),
    ],
)
def test_bad_task_files_name_file_task_and_field(tmp_path, edit, message):
    path = broken(tmp_path, edit)
    with pytest.raises(Tau2ImportError) as caught:
        import_tau2(path, domain="retail", db=FILES["retail"]["db"])
    assert message in str(caught.value)


def test_bad_files_and_options(tmp_path):
    bad_json = tmp_path / "tasks.json"
    bad_json.write_text("[{")
    with pytest.raises(Tau2ImportError, match="tasks.json: not valid JSON"):
        import_tau2(bad_json, domain="retail", db=FILES["retail"]["db"])
    with pytest.raises(Tau2ImportError, match="missing.json: database file not found"):
        import_tau2(FIXTURES / "retail_tasks.json", domain="retail", db=tmp_path / "missing.json")
    corrupt = tmp_path / "db.json"
    corrupt.write_text('{"products": {}, "users": {}, "orders": {"#W1": {"order_id": 5}}}')
    with pytest.raises(Tau2ImportError, match=r"retail_tasks.json: task 0: .*db.json"):
        import_tau2(FIXTURES / "retail_tasks.json", domain="retail", db=corrupt)
    with pytest.raises(Tau2ImportError, match="--user-db is required for telecom"):
        import_tau2(FIXTURES / "telecom_tasks.json", domain="telecom", db=FILES["telecom"]["db"])


def test_cli_import_writes_a_loadable_file(tmp_path, capsys):
    out = tmp_path / "imported.yaml"
    files = FILES["telecom"]
    argv = ["import", "tau2", str(FIXTURES / "telecom_tasks.json"), "--db", str(files["db"])]
    argv += ["--user-db", str(files["user_db"]), "--domain", "telecom", "--out", str(out)]
    assert main(argv) == 0
    assert f"wrote 2 tasks to {out}" in capsys.readouterr().out
    assert [s.source_task_id for s in load_tasks(out)] == [
        "[mobile_data_issue]data_mode_off[PERSONA:Easy]",
        "[service_issue]overdue_bill_suspension[PERSONA:None]",
    ]
    again = tmp_path / "again.yaml"
    write_tasks(load_tasks(out), again)
    assert again.read_text() == out.read_text()
    bad = ["import", "tau2", str(FIXTURES / "telecom_tasks.json"), "--db", str(files["db"])]
    assert main([*bad, "--domain", "telecom", "--out", str(out)]) == 1
    assert "hasbench import: --user-db is required" in capsys.readouterr().err
