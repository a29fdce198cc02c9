"""CPU-bound episodes in worker processes: same records, one writer, resume holds."""

import asyncio
import json
import subprocess
import sys

import pandas as pd
import pytest

from hasbench.experiments import rq1
from hasbench.llm import LLMClient
from hasbench.runner import load_results, run_experiment
from hasbench.runner.cluster import ClusterError
from hasbench.runner.pool import Admission, TaskDealer, cpu_bound, open_pool
from hasbench.simulator import Backends


def small_grid():
    service = ["retail", "airline", "telecom"]
    return rq1.experiment(["scripted:strong", "scripted:weak"], domains=service,
                          max_tasks_per_domain=2)  # fmt: skip


def run(grid, directory, workers):
    return asyncio.run(run_experiment(grid, directory, progress=False, workers=workers))


def test_episodes_in_worker_processes_give_the_same_store_as_in_process(tmp_path):
    grid = small_grid()
    local = run(grid, tmp_path / "local", workers=1)
    pooled = run(grid, tmp_path / "pooled", workers=2)
    assert pooled.total == local.total == 24 and pooled.ran == 24 and pooled.failed == 0
    pd.testing.assert_frame_equal(
        load_results(tmp_path / "pooled"), load_results(tmp_path / "local")
    )
    for path in sorted((tmp_path / "local").glob("*/*.json*")):
        twin = tmp_path / "pooled" / path.relative_to(tmp_path / "local")
        assert twin.read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), path.name


def test_a_pooled_rerun_resumes_only_the_missing_episodes(tmp_path):
    grid = small_grid()
    run(grid, tmp_path / "store", workers=2)
    records = sorted((tmp_path / "store" / "episodes").glob("*.json"))
    removed = records[:5]
    kept = {p: p.read_text(encoding="utf-8") for p in records[5:]}
    for path in removed:
        path.unlink()
    again = run(grid, tmp_path / "store", workers=2)
    assert (again.ran, again.skipped) == (5, 19)
    assert all(p.read_text(encoding="utf-8") == text for p, text in kept.items())
    assert all(json.loads(p.read_text(encoding="utf-8"))["error"] is None for p in removed)


def test_only_offline_episodes_go_to_the_pool():
    assert cpu_bound(Backends(agent="scripted:strong", user="scripted:user", judge="rule"))
    assert cpu_bound(Backends(agent="local/smollm2-135m"))
    assert not cpu_bound(Backends(agent="openai/gpt-4o"))
    assert not cpu_bound(Backends(agent="scripted:strong", judge="anthropic/claude-sonnet-4"))
    from hasbench.runner.experiment import grid

    specs = grid(small_grid())
    client = LLMClient()
    assert open_pool(specs[:3], None, client, None) is None  # too few to pay for workers
    assert open_pool(specs, 1, client, None) is None


def test_a_worker_finishes_its_tasks_and_a_free_worker_is_dealt_the_next_task():
    """A task's episodes share one worker, two in flight; the tasks go to whoever is free."""
    dealer = TaskDealer(2)
    long_task_may_end = asyncio.Event()
    ran: list[tuple[str, int]] = []
    in_flight = [0, 0]

    async def episode(task_id: str) -> None:
        async with Admission(dealer, task_id) as worker:
            in_flight[worker] += 1
            assert in_flight[worker] <= TaskDealer.PLACES
            ran.append((task_id, worker))
            if task_id == "long":
                await long_task_may_end.wait()
            else:
                await asyncio.sleep(0)
            in_flight[worker] -= 1

    async def main() -> None:
        waiting = [asyncio.create_task(episode(t)) for t in ["long"] * 3 + ["b", "c", "d", "e"]]
        shorts = asyncio.gather(*waiting[3:])
        await shorts  # all four ran while the long task held its worker
        long_task_may_end.set()
        await asyncio.gather(*waiting[:3])

    asyncio.run(main())
    assert [w for t, w in ran if t == "long"] == [0, 0, 0]
    assert {w for t, w in ran if t != "long"} == {1}  # a deal by counts gave two of them to 0


def test_a_run_given_a_plan_s_expectations_deals_the_longest_tasks_first():
    """The last task to end is then a short one; a task's episodes keep their order."""
    from hasbench.runner.execution import longest_tasks_first
    from hasbench.runner.experiment import resolve

    cells = resolve(small_grid()).cells
    todo = [(cell.spec, cell.identity, cell.key) for cell in cells]
    tasks = list(dict.fromkeys(cell.spec.scenario.task_id for cell in cells))
    long_task = tasks[-1]  # the last in grid order: dealt out last without expectations
    expected = {cell.key: 5.0 if cell.spec.scenario.task_id == long_task else 0.1 for cell in cells}
    ordered = longest_tasks_first(todo, expected)
    order = list(dict.fromkeys(spec.scenario.task_id for spec, _, _ in ordered))
    assert order == [long_task, *tasks[:-1]]  # tasks alike keep the grid's order
    for task in tasks:
        assert [k for s, _, k in ordered if s.scenario.task_id == task] == [
            k for s, _, k in todo if s.scenario.task_id == task
        ]


def test_an_episode_cancelled_while_it_waits_takes_no_place():
    dealer = TaskDealer(1)

    async def main() -> list[int]:
        first, second = await dealer.admit("a"), await dealer.admit("a")
        cancelled = asyncio.create_task(dealer.admit("b"))
        later = asyncio.create_task(dealer.admit("c"))
        await asyncio.sleep(0)
        cancelled.cancel()
        dealer.release(first)
        dealer.release(second)
        return [first, second, await asyncio.wait_for(later, 5)]

    assert asyncio.run(main()) == [0, 0, 0]


def test_local_model_episodes_run_without_litellm():
    """Offline runs never import litellm (about 3 CPU-s): ``local/`` models are called here.

    The model's process is replaced by one that answers at once; what reaches it and what
    comes back go through the client as a real call would.
    """
    code = """
import asyncio, sys
from hasbench.experiments import robustness
from hasbench.llm import LLMClient, local
from hasbench.runner.experiment import grid
from hasbench.runner.pool import open_pool

class Answers:
    def ask(self, messages, params):
        print(sorted(k for k in params if k in local.REQUEST_PARAMS))
        return {"reply": {"content": "fine", "tool_calls": [{"name": "f", "arguments": {}}]},
                "usage": {"prompt_tokens": 3, "completion_tokens": 2}}

local.model_process = lambda name: Answers()
specs = grid(robustness.experiment(["scripted:standin?strong"], ["local/smollm2-135m"], "rule",
                                   None, 2, 0))
open_pool(specs, 2, LLMClient(cache=None), None).close()
tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
messages = [{"role": "user", "content": "hi"}]
reply = asyncio.run(LLMClient(cache=None).complete("local/smollm2-135m", messages, tools=tools,
                                                   temperature=0.0, seed=7))
print(reply.content, reply.tool_calls[0].name, reply.usage.completion_tokens, reply.cost)
print("litellm" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['seed', 'temperature', 'tools']", "fine f 2 0.0", "False"]


def test_a_local_dask_cluster_gives_the_same_table_as_a_local_run(tmp_path):
    pytest.importorskip("distributed")
    grid = small_grid()
    run(grid, tmp_path / "local", workers=1)
    remote = asyncio.run(
        run_experiment(grid, tmp_path / "cluster", progress=False, cluster="local:2")
    )
    assert (remote.ran, remote.failed) == (24, 0)
    pd.testing.assert_frame_equal(
        load_results(tmp_path / "cluster"), load_results(tmp_path / "local")
    )
    again = asyncio.run(
        run_experiment(grid, tmp_path / "cluster", progress=False, cluster="local:2")
    )
    assert (again.ran, again.skipped) == (0, 24)


def test_a_bad_cluster_address_is_a_clear_error(tmp_path):
    pytest.importorskip("distributed")
    with pytest.raises(ClusterError, match="local:N"):
        asyncio.run(run_experiment(small_grid(), tmp_path, progress=False, cluster="local:x"))


def _grading_folder() -> str:
    from hasbench.envs.coding.hidden import _hidden_dir

    return str(_hidden_dir("def test_one():\n    assert True\n"))


def _scratch() -> str:
    from hasbench.paths import scratch_folder

    return str(scratch_folder("hasbench-test-"))


def test_a_worker_s_scratch_folders_are_removed_when_the_pool_ends(tmp_path, monkeypatch):
    """Pool workers end without running atexit handlers: their folders used to pile up."""
    from pathlib import Path

    from hasbench import paths
    from hasbench.runner.pool import worker_pool

    monkeypatch.setattr(paths, "SCRATCH_BASE", str(tmp_path))  # the forked workers' too
    with worker_pool(2) as pool:
        made = [
            pool.submit(_grading_folder).result(),
            pool.submit(_scratch).result(),
        ]
        assert all(Path(folder).is_dir() for folder in made)
    assert not any(Path(folder).exists() for folder in made), sorted(tmp_path.iterdir())
