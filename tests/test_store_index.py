"""The results store's index: loading reads it instead of the records, and never trusts it
over a record that changed since its line was written."""

import asyncio
import json
import os

import pandas as pd
import pytest

from hasbench.agency import Setting
from hasbench.cli import main
from hasbench.paths import TASKS_DIR
from hasbench.runner import Experiment, TaskSelection, load_store, run_experiment, store_index
from hasbench.simulator import Backends

GRID = Experiment(
    name="index_test",
    tasks=TaskSelection(files=[str(TASKS_DIR / "examples.yaml")], max_per_domain=3),
    backends=[Backends(agent="scripted:strong")],
    settings=[Setting(agency="A1"), Setting(agency="A3")],
)


@pytest.fixture
def store(tmp_path):
    """A store of six episodes, as a run writes it."""
    asyncio.run(run_experiment(GRID, tmp_path / "store", progress=False, workers=1))
    return tmp_path / "store"


def index_lines(store) -> list[str]:
    return (store / store_index.INDEX).read_text().splitlines()


def decoded(store) -> pd.DataFrame:
    """The results table with every record decoded (no index to read from)."""
    (store / store_index.INDEX).unlink()
    frame, damaged = load_store(store)
    assert damaged == []
    return frame


def test_a_run_indexes_every_record_and_the_index_gives_the_decoded_table(store):
    keys = sorted(p.stem for p in (store / "episodes").glob("*.json"))
    assert len(keys) == 6
    assert sorted(json.loads(line)[0] for line in index_lines(store)[1:]) == keys
    frame, damaged = load_store(store)
    assert damaged == [] and len(frame) == 6
    pd.testing.assert_frame_equal(frame, decoded(store))
    # loading a store without an index makes it, with a line per record
    assert sorted(json.loads(line)[0] for line in index_lines(store)[1:]) == keys
    pd.testing.assert_frame_equal(load_store(store)[0], frame)


def test_a_record_changed_after_it_was_indexed_is_read_again(store):
    path = next(
        p
        for p in sorted((store / "episodes").glob("*.json"))
        if '"task_score": 1.0' in p.read_text()
    )
    text = path.read_text()
    edited = text.replace('"task_score": 1.0', '"task_score": 0.5', 1)
    assert len(edited) == len(text)  # same size, same file: only its times tell
    path.write_text(edited)
    frame, damaged = load_store(store)
    assert damaged == []
    assert frame.set_index("key").loc[path.stem, "task_score"] == 0.5


def test_a_record_damaged_in_place_with_size_and_mtime_kept_is_still_reported(store, capsys):
    path = sorted((store / "episodes").glob("*.json"))[0]
    before = path.stat()
    data = path.read_bytes()
    path.write_bytes(b"x" + data[1:])  # same size, same inode, no longer JSON
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    frame, damaged = load_store(store)
    assert len(frame) == 5
    assert [d.path for d in damaged] == [path] and damaged[0].reason.startswith("not valid JSON")
    assert main(["results", str(store)]) == 1
    assert "skipped 1 damaged file(s)" in capsys.readouterr().out


def test_an_index_cut_short_or_of_another_format_loads_the_same_table(store):
    frame = load_store(store)[0]
    lines = index_lines(store)
    garbage = ["5", '["k", 1, 2, 3, 4, []]', "[]"]
    (store / store_index.INDEX).write_text("\n".join([*lines[:3], *garbage, lines[3][:40]]))
    again, damaged = load_store(store)  # two lines whole, the third cut, three missing
    assert damaged == []
    pd.testing.assert_frame_equal(again, frame)
    assert len({json.loads(line)[0] for line in index_lines(store)[1:] if line.endswith("}]")}) == 6
    (store / store_index.INDEX).write_text('{"hasbench_index": "an older one"}\n' + lines[1])
    pd.testing.assert_frame_equal(load_store(store)[0], frame)
    assert json.loads(index_lines(store)[0]) == {"hasbench_index": store_index.FORMAT}
    assert len(index_lines(store)) == 7


def test_a_rerun_drops_the_lines_of_records_written_again(store):
    lines = index_lines(store)
    (store / store_index.INDEX).write_text("\n".join([*lines, *lines[1:], *lines[1:]]) + "\n")
    asyncio.run(run_experiment(GRID, store, progress=False, workers=1))  # nothing to run
    assert index_lines(store) == lines


def test_a_record_whose_metrics_are_not_an_object_is_damaged_not_a_crash(store):
    path = sorted((store / "episodes").glob("*.json"))[0]
    record = json.loads(path.read_text())
    record["metrics"] = [record["metrics"]]
    path.write_text(json.dumps(record))
    frame, damaged = load_store(store)
    assert len(frame) == 5
    assert [(d.path, d.reason) for d in damaged] == [(path, "metrics: not a JSON object")]
