"""The τ²-bench importer on the real v0.1.3 files (skips where ../shared/sources is absent).

Malformed inputs are made in tmp_path from a copy of a real task.
"""

import asyncio
import json

import pytest
from tau2_reference import files, imported, raw_tasks

from hasbench.agency import Setting
from hasbench.build.tau2_import import Tau2ImportError, extract_facts, import_tau2, write_tasks
from hasbench.cli import main
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.scenario import check_scenario, load_tasks
from hasbench.simulator import Backends, run_episode

COUNTS = {"retail": 114, "airline": 50, "telecom": 114}


@pytest.mark.parametrize(("domain", "count"), COUNTS.items())
def test_every_task_imports_validates_and_runs_in_tau2_mode(domain, count):
    scenarios = imported(domain)
    assert len(scenarios) == count == len(raw_tasks(domain))
    for scenario in scenarios.values():
        assert check_scenario(scenario) == []
        assert scenario.environment.compat == "tau2"
        assert set(scenario.metadata["gold_arguments"]) == {"stated", "lookup", "neither"}


def test_facts_in_every_phrasing_reach_known_info():
    retail = imported("retail")
    zips = [s for s in retail.values() if "zip" in s.users[0].known_info]
    assert len(zips) >= 50  # "zip code is 19031", "zipcode 80217", "Denver, 80280", ...
    airline = imported("airline")
    flights = {s.users[0].known_info.get("flight_number") for s in airline.values()}
    reservations = {v for s in airline.values() for k, v in s.users[0].known_info.items()
                    if k.startswith("reservation_id")}  # fmt: skip
    assert "HAT045" in flights and not any(r.startswith("HAT") for r in reservations)
    assert {"IFOYYZ", "M20IZO", "JMO1MG"} <= reservations


def test_extract_facts():
    text = (
        "You are Mia Li in zipcode 78750; you also lived in Denver, 80280. Your user id is "
        "mia_li_3668, email mia@x.com. Orders #W1000001 and W1000002; reservations (ABCDEF "
        "and XY12Z9) on flight HAT001; pay with the credit card ending in 1234; call "
        "555-123-2002. It cost $12345. You ARE upset."
    )
    assert extract_facts(text) == {
        "email": "mia@x.com",
        "user_id": "mia_li_3668",
        "order_id": "#W1000001",
        "order_id_2": "#W1000002",
        "phone_number": "555-123-2002",
        "flight_number": "HAT001",
        "reservation_id": "ABCDEF",
        "reservation_id_2": "XY12Z9",
        "zip": "78750",
        "zip_2": "80280",
        "payment_method": "credit card ending in 1234",
        "name": "Mia Li",
    }
    assert "payment_method" not in extract_facts("I want to pay with PayPal or a gift card.")


def test_change_nothing_tasks_are_scored_by_an_unchanged_database():
    task = imported("airline")["0"]  # τ²: explicit empty action list
    assert task.evaluation_criteria.actions == [] and "ENV" in task.evaluation_criteria.reward_basis
    judge = make_judge("rule")
    idle = run_episode(task, Setting(agency="A3"), Backends(agent="scripted:idle"))
    assert asyncio.run(evaluate(task, idle, judge)).dimensions["ENV"] == 1.0
    retail_24 = imported("retail")["24"]
    assert retail_24.evaluation_criteria.reward_basis == ["ENV", "COMMUNICATE"]
    outcome = asyncio.run(
        evaluate(
            retail_24,
            run_episode(retail_24, Setting(agency="A3"), Backends(agent="scripted:idle")),
            judge,
        )
    )
    assert outcome.dimensions == {"ENV": 1.0, "COMMUNICATE": 0.0} and not outcome.success


def _copy_with(tmp_path, edit):
    tasks = json.loads(files("retail")["tasks"].read_text())[:2]
    edit(tasks[0])
    path = tmp_path / "malformed_tasks.json"
    path.write_text(json.dumps(tasks))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.update(
                initial_state={"message_history": [{"role": "user", "content": "hi"}]}
            ),
            "malformed_tasks.json: task 0: initial_state.message_history: a replayed conversation",
        ),
        (lambda t: t.pop("user_scenario"), "task 0: user_scenario: Field required"),
        (
            lambda t: t["evaluation_criteria"]["actions"][0].update(requestor="robot"),
            "task 0: evaluation_criteria.actions[0].requestor: Input should be",
        ),
        (
            lambda t: t["evaluation_criteria"]["actions"][0].update(name="teleport"),
            "task 0: evaluation_criteria.actions[0].name: retail has no tool 'teleport'",
        ),
    ],
)
def test_a_malformed_task_is_skipped_naming_file_task_and_field(tmp_path, edit, message):
    scenarios, skipped = import_tau2(
        _copy_with(tmp_path, edit), domain="retail", db=files("retail")["db"]
    )
    assert [s.source_task_id for s in scenarios] == ["1"]  # the file's other task imports
    assert len(skipped) == 1 and message in skipped[0]


def test_bad_files_and_options(tmp_path):
    bad_json = tmp_path / "tasks.json"
    bad_json.write_text("[{")
    with pytest.raises(Tau2ImportError, match="tasks.json: not valid JSON"):
        import_tau2(bad_json, domain="retail", db=files("retail")["db"])
    with pytest.raises(Tau2ImportError, match="missing.json: database file not found"):
        import_tau2(files("retail")["tasks"], domain="retail", db=tmp_path / "missing.json")
    with pytest.raises(Tau2ImportError, match="--user-db is required for telecom"):
        import_tau2(files("telecom")["tasks"], domain="telecom", db=files("telecom")["db"])


def test_cli_import_writes_a_loadable_file(tmp_path, capsys):
    out, paths = tmp_path / "imported.yaml", files("telecom")
    argv = ["import", "tau2", str(paths["tasks"]), "--db", str(paths["db"])]
    argv += ["--user-db", str(paths["user_db"]), "--domain", "telecom", "--out", str(out)]
    assert main(argv) == 0
    assert f"wrote 114 tasks to {out}" in capsys.readouterr().out
    again = tmp_path / "again.yaml"
    write_tasks(load_tasks(out), again)
    assert again.read_text() == out.read_text()
