"""A local model whose process dies mid-episode: an error of that episode, not a dead run.

The model runs in a process of its own; these tests kill it with SIGSEGV (what a llama.cpp
built for another CPU does to itself) while it answers a request.
"""

import asyncio
import json
import os
import signal
import threading

import pytest
from pieces import needs_local_model

from hasbench import runner
from hasbench.llm import LLMClient, local
from hasbench.paths import TASKS_DIR

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    needs_local_model,
]

MODEL = "local/smollm2-135m"
IDS = ["mock_A_001", "mock_B_001", "mock_C_001"]


class Killer(threading.Thread):
    """Kills the model's process with SIGSEGV while it answers request ``at`` (or every one
    from then on)."""

    def __init__(self, at: int, every: bool = False) -> None:
        super().__init__(daemon=True)
        self.at, self.every = at, every
        self.kills: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.005):
            model = local._PROCESSES.get("smollm2-135m")
            process = model.process if model is not None else None
            if process is None or not model.busy or model.requests < self.at:
                continue
            if process.pid in self.kills or (self.kills and not self.every):
                continue
            os.kill(process.pid, signal.SIGSEGV)
            self.kills.append(process.pid)

    def __enter__(self):
        local.stop_models()  # a fresh process, whose requests are counted from here
        local._PROCESSES.pop("smollm2-135m", None)
        self.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.join()


def grid(tmp_path, backends, ids):
    spec = {
        "name": "crash",
        "tasks": {"files": [str(TASKS_DIR / "examples.yaml")], "ids": ids},
        "backends": backends,
        "settings": [{"agency": "A1", "max_iterations": 1}],  # one model call per episode
        "judge_process": False,
        "concurrency": {"local": 1},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(json.dumps(spec))
    return runner.load_experiment(path)


def run(experiment, store):
    client = LLMClient(cache=None)
    return asyncio.run(
        runner.run_experiment(experiment, store, client=client, progress=False, workers=1)
    )


def records(store):
    return [json.loads(p.read_text()) for p in sorted((store / "episodes").glob("*.json"))]


def test_a_killed_model_is_an_error_of_its_episode_and_the_run_goes_on(tmp_path):
    experiment = grid(tmp_path, [{"agent": MODEL}], IDS[:2])
    with Killer(at=1) as killer:  # the first episode's call; the second gets a new process
        done = run(experiment, tmp_path / "store")
    assert len(killer.kills) == 1
    assert (done.total, done.ran, done.failed, done.stopped) == (2, 2, 1, [])
    (failed,) = [r for r in records(tmp_path / "store") if r["error"] is not None]
    assert failed["error"]["kind"] == "died" and failed["error"]["role"] == "agent"
    assert failed["error"]["model"] == MODEL and "signal SIGSEGV" in failed["error"]["message"]
    trace = (tmp_path / "store" / failed["trace"]).read_text().splitlines()
    assert json.loads(trace[-1])["reason"] == "model_error"
    assert any(json.loads(line).get("type") == "model_error" for line in trace)
    others = [r for r in records(tmp_path / "store") if r["error"] is None]
    assert len(others) == 1 and all(r["outcome"] is not None for r in others)
    assert local._PROCESSES["smollm2-135m"].process.pid not in killer.kills  # started again


def test_a_model_that_keeps_dying_stops_its_backend_and_the_others_go_on(tmp_path):
    experiment = grid(
        tmp_path,
        [
            {"agent": MODEL, "endpoints": {"agent": {"stop_after": 2}}},
            {"agent": "scripted:oracle"},
        ],
        IDS,
    )
    with Killer(at=1, every=True) as killer:
        done = run(experiment, tmp_path / "store")
    assert len(killer.kills) == 2
    assert (done.total, done.ran, done.failed, done.not_started) == (6, 5, 2, 1)
    (message,) = done.stopped
    assert message.startswith(f"stopped the agent backend {MODEL}: 2 episodes in a row failed")
    assert "(died 2x)" in message and "signal SIGSEGV" in message
    found = records(tmp_path / "store")
    assert [r["error"]["kind"] for r in found if r["backends"]["agent"] == MODEL] == ["died"] * 2
    oracle = [r for r in found if r["backends"]["agent"] == "scripted:oracle"]
    assert len(oracle) == 3 and all(r["error"] is None for r in oracle)


def model_processes() -> list[int]:
    """This process's descendants that run a local model."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                parents[int(entry)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                commands[int(entry)] = handle.read()
        except (OSError, ValueError, IndexError):
            continue
    found = []
    for pid, command in commands.items():
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, os.getpid()):
            ancestor = parents.get(ancestor)
        if ancestor == os.getpid() and b"hasbench.llm\x00serve" in command:
            found.append(pid)
    return found


def test_a_model_dying_in_a_worker_process_takes_down_no_sweep(tmp_path):
    experiment = grid(
        tmp_path,
        [
            {"agent": MODEL, "endpoints": {"agent": {"stop_after": 2}}},
            {"agent": "scripted:oracle"},
        ],
        IDS,
    )
    killed: list[int] = []
    done_event = threading.Event()

    def kill_every_model() -> None:
        while not done_event.wait(0.05):
            for pid in set(model_processes()) - set(killed):
                os.kill(pid, signal.SIGSEGV)
                killed.append(pid)

    watcher = threading.Thread(target=kill_every_model, daemon=True)
    watcher.start()
    try:
        client = LLMClient(cache=None)
        done = asyncio.run(
            runner.run_experiment(
                experiment, tmp_path / "store", client=client, progress=False, workers=2
            )
        )
    finally:
        done_event.set()
        watcher.join()
    assert killed and done.ran >= 5  # every oracle episode and at least two local ones
    found = records(tmp_path / "store")
    kinds = [r["error"]["kind"] for r in found if r["backends"]["agent"] == MODEL]
    assert len(kinds) >= 2 and set(kinds) == {"died"}
    assert [r["error"] for r in found if r["backends"]["agent"] != MODEL] == [None] * 3
    assert done.ran + done.not_started == 6


def test_the_installed_llama_cpp_is_a_portable_build():
    from hasbench.llm.llama import build_problem

    assert build_problem() is None


def test_a_build_native_to_an_avx512_cpu_is_named(monkeypatch):
    import llama_cpp

    from hasbench.llm.llama import build_problem

    native = b"CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 |"
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: native)
    problem = build_problem()
    assert "uses AMX_INT8, AVX512, AVX512_VNNI" in problem and "make setup-local" in problem
