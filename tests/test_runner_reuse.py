"""Episodes taken from another results store are the episodes a run would have written."""

import asyncio
import json
from pathlib import Path

from hasbench.paths import REPO_ROOT
from hasbench.runner import Experiment, TaskSelection, run_experiment
from hasbench.runner.reuse import neighbour_stores
from hasbench.runner.store import load_results
from hasbench.simulator import Backends

EXAMPLES = str(REPO_ROOT / "data" / "tasks" / "examples.yaml")


def grid(judge_process: bool, agents=("scripted:strong",), name="reuse_test") -> Experiment:
    return Experiment(
        name=name,
        tasks=TaskSelection(files=[EXAMPLES], max_per_domain=2),
        backends=[Backends(agent=agent) for agent in agents],
        settings=[{"agency": "A1"}, {"agency": "A3"}],
        judge_process=judge_process,
    )


def run(experiment: Experiment, store: Path, reuse=()):
    return asyncio.run(
        run_experiment(experiment, store, progress=False, workers=1, reuse=list(reuse))
    )


def files(store: Path) -> dict[str, bytes]:
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in store.glob("*/*.json*")}


def test_an_episode_another_store_holds_is_copied_byte_for_byte(tmp_path):
    first = run(grid(True), tmp_path / "first")
    assert first.ran == first.total > 0 and first.reused == 0
    # a wider grid (a second agent) in another store: the shared episodes are copied
    wider = grid(True, ("scripted:strong", "scripted:weak"), name="wider")
    twin = run(wider, tmp_path / "twin")  # run from scratch, for comparison
    reused = run(wider, tmp_path / "reused", reuse=[tmp_path / "first"])
    assert reused.reused == first.total and reused.ran == reused.total - first.total
    assert files(tmp_path / "reused") == files(tmp_path / "twin")
    assert twin.reused == 0
    rerun = run(wider, tmp_path / "reused", reuse=[tmp_path / "first"])
    assert rerun.ran == rerun.reused == 0 and rerun.skipped == rerun.total


def test_a_judged_episode_serves_the_same_episode_unjudged_and_not_the_other_way(tmp_path):
    run(grid(True), tmp_path / "judged")
    plain = run(grid(False), tmp_path / "plain")  # run, for comparison
    copied = run(grid(False), tmp_path / "copied", reuse=[tmp_path / "judged"])
    assert copied.ran == 0 and copied.reused == plain.total
    assert files(tmp_path / "copied") == files(tmp_path / "plain")
    for path in (tmp_path / "copied" / "episodes").glob("*.json"):
        record = json.loads(path.read_text())
        assert record["judge_process"] is False and record["process"] is None
    assert load_results(tmp_path / "copied")["cqs"].isna().all()
    back = run(grid(True), tmp_path / "back", reuse=[tmp_path / "plain"])
    assert back.reused == 0 and back.ran == back.total  # a judge has to run


def test_a_damaged_or_failed_episode_is_never_taken(tmp_path):
    source = tmp_path / "source"
    first = run(grid(True), source)
    records = sorted((source / "episodes").glob("*.json"))
    damaged = json.loads(records[0].read_text())
    (source / damaged["trace"]).write_text("changed\n")
    failed = json.loads(records[1].read_text())
    failed["error"] = {"kind": "crash", "message": "a test double"}
    records[1].write_text(json.dumps(failed, sort_keys=True, indent=1))
    again = run(grid(True), tmp_path / "again", reuse=[source])
    assert again.reused == first.total - 2 and again.ran == 2
    run(grid(True), tmp_path / "fresh")
    assert files(tmp_path / "again") == files(tmp_path / "fresh")


def test_the_stores_beside_a_store_are_found_one_level_down_and_quarantine_is_not_one(tmp_path):
    run(grid(True), tmp_path / "rq1")
    run(grid(False), tmp_path / "rq4" / "coding")
    (tmp_path / "rq1" / "quarantine" / "episodes").mkdir(parents=True)
    (tmp_path / "notebooks").mkdir()
    assert neighbour_stores(tmp_path) == [tmp_path / "rq1", tmp_path / "rq4" / "coding"]
