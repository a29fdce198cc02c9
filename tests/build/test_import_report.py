"""Facts an agent needs are reachable in imported τ² tasks, and the import report explains
every failed check (real v0.1.3 files; skips where ../shared/sources is absent)."""

import csv
import json

import pytest
from tau2_reference import SOURCES, files, imported, imported_full_telecom

from hasbench.build.checks import TaskCheck, check_task
from hasbench.build.import_report import (
    check_imported,
    explain,
    pass_rates,
    write_import_report,
)
from hasbench.build.reachability import stated
from hasbench.build.tau2_import import distinct_fact_names, import_tau2
from hasbench.cli import main
from hasbench.envs import make_environment
from hasbench.evaluate import replay_gold

TELECOM_MMS = (
    "[mms_issue]airplane_mode_on|bad_network_preference|bad_wifi_calling|break_apn_mms_setting"
    "|break_app_both_permissions|data_mode_off|data_usage_exceeded|unseat_sim_card"
    "|user_abroad_roaming_disabled_off[PERSONA:Hard]"
)


def test_a_write_only_gold_path_gets_the_reads_a_support_agent_makes():
    task = imported("retail")["74"]  # τ² lists only a cancellation and an item change
    names = [a.name for a in task.evaluation_criteria.actions]
    assert names == [
        "find_user_id_by_name_zip", "get_user_details", "cancel_pending_order",
        "get_order_details", "get_product_details", "modify_pending_order_items",
    ]  # fmt: skip
    added = task.metadata["added_on_import"]
    assert len(added["lookups"]) == 4 and added["facts"] == ["first_name=Lei"]
    assert task.users[0].known_info["zip"] == "85033"  # the login facts stay the customer's
    without = task.model_copy(deep=True)
    without.evaluation_criteria.actions = [
        a for a in task.evaluation_criteria.actions if not a.action_id.startswith("lookup_")
    ]
    assert replay_gold(without)[0].state_hash() == replay_gold(task)[0].state_hash()


UNKNOWABLE = {"airline": {"35": ["35_0.book_reservation.passengers[0].dob: 1985-04-04"]}}
"""Gold values nobody can know: airline 35 books its passenger with a birth date that no
record holds and the instructions never state (the member's own is 1981-05-26)."""


@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_no_gold_identifier_is_out_of_reach_unless_the_source_states_it_nowhere(domain):
    unreachable = {
        task.source_task_id: task.metadata["unreachable"]
        for task in imported(domain).values()
        if "unreachable" in task.metadata
    }
    assert unreachable == UNKNOWABLE.get(domain, {})
    for task in imported(domain).values():
        assert set(task.metadata["gold_arguments"]) == {"stated", "lookup", "neither"}


@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_facts_are_given_only_where_the_instructions_state_them(domain):
    for task in imported(domain).values():
        user = task.users[0]
        said = f"{user.goal} {user.task_instructions}".lower()
        given = {f.split("=", 1)[1] for f in task.metadata["added_on_import"]["facts"]}
        for key, value in user.known_info.items():
            relative = value in given and _relative_date(said)  # "the day after", a booking
            assert stated(str(value).lstrip("#"), said) or relative, (task.source_task_id, key)
    retail_5 = imported("retail")["5"].users[0]  # "You are mei_kovacs_8020": no name stated
    assert "first_name" not in retail_5.known_info and "last_name" not in retail_5.known_info
    assert retail_5.unknown_info == ["email"]
    assert "What you do not know: You do not remember your email address" in (
        retail_5.task_instructions
    )


def _relative_date(said):
    return any(w in said for w in ("next day", "day after", "by one day", "day before"))


def test_reads_are_never_inserted_where_action_is_scored():
    for task in imported("telecom").values():
        if "ACTION" in task.evaluation_criteria.reward_basis:
            assert task.metadata["added_on_import"]["lookups"] == []


def test_fact_names_never_pass_for_another_call_s_argument():
    actions = [
        {"name": "cancel", "arguments": {"order_id": "#W2"}},
        {"name": "modify", "arguments": {"order_id": "#W1", "zip": "10001"}},
    ]
    facts = {"order_id": "#W1", "order_id_2": "#W2", "zip": "10001", "email": "a@b.c"}
    assert distinct_fact_names(facts, actions) == {
        "order_id_1": "#W1", "order_id_2": "#W2", "zip": "10001", "email": "a@b.c",
    }  # fmt: skip
    task = imported("retail")["59"]  # two orders, a login zip and a new address's zip
    assert {"order_id_1", "order_id_2", "zip_1", "zip_2"} <= set(task.users[0].known_info)


@pytest.mark.parametrize(
    ("domain", "source_id"),
    [("retail", "74"), ("retail", "59"), ("retail", "45"), ("airline", "15"),
     ("telecom", TELECOM_MMS)],
)  # fmt: skip
def test_the_oracle_passes_every_check(domain, source_id):
    task = imported(domain)[source_id]
    check = check_task(task)
    assert check.passed, check.results


@pytest.mark.slow
@pytest.mark.parametrize(
    "domain", ["retail", "airline", "telecom", "airline v1.0.1", "telecom full"]
)
def test_the_oracle_solves_95_percent_of_every_real_file_and_each_failure_has_its_reason(
    domain, tmp_path
):
    if domain == "airline v1.0.1":  # the newer release's file, on the same database
        domain = "airline"
        tasks, _ = import_tau2(
            SOURCES / "tau2-bench-v1.0.1/airline/tasks.json", db=files("airline")["db"],
            domain="airline",
        )  # fmt: skip
    elif domain == "telecom full":  # all 2,285 tasks: ids past telecom_A_999 import too
        domain, tasks = "telecom", list(imported_full_telecom())
        assert len(tasks) == 2285 and tasks[-1].task_id == "telecom_A_2285"
    else:
        tasks = list(imported(domain).values())
    rows = check_imported(tasks, workers=2)
    rates = pass_rates(rows)[domain]
    assert rates["tasks"] == len(tasks) and rates["oracle_rate"] >= 0.95, rates
    assert rates["unexplained"] == 0, [r.failed for r in rows if not r.passed and not r.exception]
    summary = write_import_report(rows, tmp_path, domain)[1].read_text()
    listed = {line.split(" | ")[0][2:]: line for line in summary.splitlines()}
    for row in rows:
        if not row.passed:  # listed with the source task's reason and the failed checks
            assert f" | {row.exception} | " in listed[row.task_id]
            assert row.failed.split(":")[0] in listed[row.task_id]


def test_long_device_paths_get_their_own_limits():
    task = imported("telecom")[TELECOM_MMS]  # a dozen steps only the customer can take
    assert task.environment.interaction_budget > 10 and task.environment.max_tool_rounds > 10


def test_exceptions_are_explained_from_the_source_task():
    refusal = imported("airline")["0"]  # τ²: change nothing (the policy refuses)
    check = check_task(refusal)
    assert not check.passed and explain(refusal, check) == "unchanged_end_state"
    telecom = imported("telecom")["[service_issue]airplane_mode_on|unseat_sim_card[PERSONA:None]"]
    check = check_task(telecom)  # τ² also asserts a bill that is never overdue is not
    assert set(check.results.values()) - {"ok", "-"} and check.results["oracle_A3"] == "ok"
    assert explain(telecom, check) == "assertion_holds_at_start"
    failed_oracle = TaskCheck("x", "A", {"oracle_A3": "oracle scored 0.0", "idle": "idle 1.0"})
    assert explain(refusal, failed_oracle) == ""


def test_the_import_command_writes_a_report(tmp_path, capsys):
    tasks = json.loads(files("retail")["tasks"].read_text())
    subset = tmp_path / "tasks.json"
    subset.write_text(json.dumps([t for t in tasks if t["id"] in ("57", "74")]))
    out, report = tmp_path / "retail.yaml", tmp_path / "report"
    argv = ["import", "tau2", str(subset), "--db", str(files("retail")["db"])]
    argv += ["--domain", "retail", "--out", str(out), "--report", str(report), "--workers", "1"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "retail: the oracle solves 2/2 (100.0%); 1 pass every check (50.0%); " in printed
    assert "1 reasoned exceptions, 0 unexplained" in printed
    rows = list(csv.DictReader((report / "retail_import.csv").open()))
    assert [(r["source_task_id"], r["passed"], r["exception"]) for r in rows] == [
        ("57", "False", "unchanged_end_state"),
        ("74", "True", ""),
    ]
    summary = (report / "retail_import.md").read_text()
    assert "| retail | 2 | 2 (100.0%) | 1 | 50.0% | 1 | 0 | 100.0% |" in summary


def test_rows_come_back_in_task_order_from_worker_processes(tmp_path):
    tasks = [imported("retail")[i] for i in ("74", "57")]
    rows = check_imported(tasks, workers=2)
    assert [r.source_task_id for r in rows] == ["74", "57"]
    paths = write_import_report(rows, tmp_path, "r")
    assert [p.name for p in paths] == ["r.csv", "r.md"]


def test_inserted_reads_run_in_the_initial_state():
    task = imported("airline")["15"]
    env = make_environment(task)
    for action in task.evaluation_criteria.actions:
        if action.action_id.startswith("lookup_"):
            assert not env.call(action.name, action.arguments).error, action
