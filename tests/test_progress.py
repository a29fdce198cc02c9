"""Live progress (notebook line, terminal bar, relay to `hasbench notebook`) and planning."""

import asyncio
import io
import json

import pytest

from hasbench.agency import Setting
from hasbench.runner import Experiment, TaskSelection, planning, run_experiment
from hasbench.runner.execution import run_one
from hasbench.runner.planning import estimate
from hasbench.runner.pool import Admission, TaskDealer, machine_workers
from hasbench.runner.progress import PROGRESS_FILE, Progress, Relay, announce, duration
from hasbench.simulator import Backends
from hasbench.sync import run_sync


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (0.04, 4.2, 42, 185, 4800)] == [
        "40 ms", "4.2 s", "42 s", "3 min 5 s", "1 h 20 min",
    ]  # fmt: skip


def test_progress_counts_and_relays_to_the_terminal_of_hasbench_notebook(tmp_path, monkeypatch):
    relayed = tmp_path / "relay.jsonl"
    monkeypatch.setenv(PROGRESS_FILE, str(relayed))
    bar = Progress(4, "grid", unit="episode")
    assert bar.text().startswith("grid: 0 of 4 episodes, ")
    bar.update(4)
    bar.close()
    assert bar.text().startswith("grid: 4 of 4 episodes in ")
    assert "<progress value='4' max='4'" in bar.html()
    lines = [json.loads(line) for line in relayed.read_text().splitlines()]
    assert lines[0] == {"description": "grid", "unit": "episode", "done": 0, "total": 4,
                        "final": False}  # fmt: skip
    assert lines[-1]["done"] == 4 and lines[-1]["final"] is True
    quiet = Progress(3, "quiet", enabled=False)
    quiet.update()
    assert quiet.done == 1 and len(relayed.read_text().splitlines()) == len(lines)


def test_the_relay_draws_what_the_kernel_reports(tmp_path, monkeypatch):
    monkeypatch.delenv(PROGRESS_FILE, raising=False)
    screen = io.StringIO()
    with Relay(tmp_path / "p.progress", output=screen) as relay:
        assert (tmp_path / "p.progress").exists()
        announce("Plan. 6 episodes.")
        with Progress(6, "rq1") as bar:
            bar.update(6)
        relay.cell(2, 5, "\nout = rq1.run(\n    x)")
    assert not (tmp_path / "p.progress").exists()
    shown = screen.getvalue()
    assert shown.index("Plan. 6 episodes.") < shown.index("cell 2 of 5: out = rq1.run(")
    assert "rq1: 100%" in shown and "6/6" in shown


def test_estimate_times_a_few_episodes_per_backend_and_the_run_skips_them(tmp_path):
    grid = Experiment(
        name="tiny",
        tasks=TaskSelection(files=["data/tasks/examples.yaml"], ids=["mock_A_001", "mock_C_001"]),
        backends=[Backends(agent="scripted:strong"), Backends(agent="scripted:weak")],
        settings=[Setting(agency="A1"), Setting(agency="A3")],
        seeds=[0, 1, 2],
    )
    plan = run_sync(estimate(grid, tmp_path))
    assert (plan.total, plan.stored, plan.to_run) == (24, 0, 16)
    assert plan.timed == {"scripted:strong": 4, "scripted:weak": 4}
    workers = min(machine_workers(), 8)  # 24 offline episodes: the run opens its worker pool
    # whose speedup is measured: all its workers' on a quiet machine, fewer on a busy one
    assert plan.parallel["scripted:strong"] == plan.parallel["scripted:weak"]
    assert 1 <= plan.parallel["scripted:strong"] <= workers
    assert plan.seconds == pytest.approx(
        sum(plan.measured[b] * 8 / plan.parallel[b] for b in plan.measured)
    )
    assert "24 episodes (2 tasks × 2 agent backends × 2 settings × 3 seeds)" in str(plan)
    assert "over 4 episodes" in str(plan) and "the other 16 should take about" in str(plan)
    summary = run_sync(run_experiment(grid, tmp_path, progress=False))
    assert (summary.skipped, summary.ran) == (8, 16)
    again = run_sync(estimate(grid, tmp_path))
    assert str(again).endswith("all of them are in the results store already.")


def test_the_first_timed_episode_is_left_out_of_the_rate(tmp_path, monkeypatch):
    """The first episode pays the start-up; the rate comes from the ones after it."""
    calls = []

    async def slow_first(*args):
        calls.append(args)
        if len(calls) == 1:
            await asyncio.sleep(1.0)  # the start-up a first episode pays
        return await run_one(*args)

    monkeypatch.setattr(planning, "run_one", slow_first)
    grid = Experiment(
        name="warm",
        tasks=TaskSelection(files=["data/tasks/examples.yaml"], ids=["mock_A_001"]),
        backends=[Backends(agent="scripted:strong")],
        settings=[Setting(agency="A1")],
        seeds=[0, 1, 2, 3, 4, 5],
    )
    plan = run_sync(estimate(grid, tmp_path))
    assert plan.timed == {"scripted:strong": 4} and plan.pending == {"scripted:strong": 2}
    assert plan.measured["scripted:strong"] < 0.5


def test_a_local_model_backend_is_timed_once_per_stratum_side_by_side_in_the_pool(
    tmp_path, monkeypatch
):
    """Its episodes take seconds each: the plan times one per stratum in the workers (at
    the seconds each took there), a task's at a time to whichever worker is free, and the
    pool runs the rest."""
    here, busy, taken = [], {}, []
    slow = {"mock_A_001": 0.3}  # the first task takes long: the next two go to the other worker

    async def record_only(spec, *args):
        here.append(spec.backends.user)
        return {"error": None}

    class Workers:  # the pool's own dealing, episodes run here
        workers = 2

        def __init__(self):
            self.seconds = {}
            self.dealer = TaskDealer(self.workers)

        def slot(self, spec):
            return Admission(self.dealer, spec.scenario.task_id)

        def worker_of(self, task_id):
            return self.dealer.worker_of(task_id)

        async def run(self, spec, identity, key, store):
            worker = self.worker_of(spec.scenario.task_id)
            async with busy.setdefault(worker, asyncio.Lock()):  # one at a time, as a process
                taken.append((spec.scenario.task_id, worker))
                await asyncio.sleep(slow.get(spec.scenario.task_id, 0.01))
            self.seconds[key] = 7.0  # what the episode took in its worker
            return {"error": None}

        def close(self):
            pass

    monkeypatch.setattr(planning, "run_one", record_only)
    monkeypatch.setattr(planning, "open_pool", lambda *args: Workers())
    grid = Experiment(
        name="local",
        tasks=TaskSelection(
            files=["data/tasks/examples.yaml", "data/tasks/retail.yaml",
                   "data/tasks/airline.yaml"],
            ids=["mock_A_001", "mock_B_001", "retail_A_001", "airline_A_001"],
        ),
        backends=[Backends(agent="scripted:strong"),
                  Backends(agent="scripted:strong", user="local/smollm2-135m")],
        settings=[Setting(agency="A1"), Setting(agency="A3")],
        seeds=[0, 1],
    )  # fmt: skip
    plan = run_sync(estimate(grid, tmp_path))
    local = "scripted:strong with local/smollm2-135m"
    assert plan.timed[local] == 6 and plan.pending[local] == 10  # a stratum: domain × agency
    assert "local/smollm2-135m" not in here and plan.measured[local] == 7.0
    expected = plan.expected_seconds()  # what a run given the plan orders its tasks by
    local_keys = {cell.key for s in plan.strata if s.backend == local for cell in s.cells}
    assert {expected[key] for key in local_keys} == {7.0}
    assert max(v for k, v in expected.items() if k not in local_keys) < 1.0
    workers = {task: {w for t, w in taken if t == task} for task, _ in taken}
    assert all(len(w) == 1 for w in workers.values())  # a task's episodes share a worker
    assert workers == {"mock_A_001": {0}, "retail_A_001": {1}, "airline_A_001": {1}}


def test_a_grid_timed_whole_says_so(tmp_path):
    grid = Experiment(
        name="small",
        tasks=TaskSelection(files=["data/tasks/examples.yaml"], ids=["mock_A_001"]),
        backends=[Backends(agent="scripted:strong")],
        settings=[Setting(agency="A1"), Setting(agency="A3")],
        seeds=[0],
    )
    plan = run_sync(estimate(grid, tmp_path))
    assert plan.to_run == 0 and str(plan).endswith("they were the whole grid.")


def test_a_grid_of_user_simulators_is_timed_per_agent_and_simulator(tmp_path):
    users = ("scripted:user", "scripted:user-guarded")
    grid = Experiment(
        name="simulators",
        tasks=TaskSelection(files=["data/tasks/examples.yaml"], ids=["mock_A_001", "mock_C_001"]),
        backends=[Backends(agent="scripted:strong", user=u) for u in users],
        settings=[Setting(agency="A3")],
        seeds=[0],
    )
    plan = run_sync(estimate(grid, tmp_path))
    assert set(plan.measured) == {f"scripted:strong with {u}" for u in users}
    assert (plan.total, plan.to_run) == (4, 0)  # two per backend: both timed
    assert "4 episodes (2 tasks × 1 agent backend × 2 user simulators × 1 setting × 1 seed)" in (
        str(plan)
    )


def test_the_pool_s_speedup_is_measured_on_tasks_of_different_workers():
    """Tasks the plan's pool already dealt to one worker are not both picked to measure it."""
    from types import SimpleNamespace

    class Pool:
        workers = 2
        dealer = TaskDealer(2)

        def worker_of(self, task_id):
            return self.dealer.worker_of(task_id)

    async def deal_to_the_first_worker(task_ids):
        for task_id in task_ids:  # one at a time: the first worker is idle again each time
            Pool.dealer.release(await Pool.dealer.admit(task_id))

    run_sync(deal_to_the_first_worker(["a", "b"]))

    def unit(task_id):
        return [SimpleNamespace(spec=SimpleNamespace(scenario=SimpleNamespace(task_id=task_id)))]

    queue = [unit("a"), unit("b"), unit("c"), unit("d")]
    picked = planning._task_per_worker(queue, Pool())
    assert [u[0].spec.scenario.task_id for u in picked] == ["a", "c"]
