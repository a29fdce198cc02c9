"""Models over HTTP: failures are errors, never results.

Every test here talks to a real server on 127.0.0.1 through litellm's ``openai/`` provider:
the fault-injecting server of tests/fault_server.py, which answers like an OpenAI-style
endpoint or fails on purpose.
"""

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from fault_server import FaultServer, random_faults

from hasbench import llm, runner
from hasbench.cli import main
from hasbench.llm import CallBudget, Endpoint, LLMClient, ModelError, ResponseCache
from hasbench.paths import REPO_ROOT
from hasbench.simulator import Backends, Episode
from hasbench.trace import Trace

EXAMPLES = str(REPO_ROOT / "data" / "tasks" / "examples.yaml")
MESSAGES = [{"role": "user", "content": "Where is my order #W1?"}]
SECRET = "hb-fault-credential-0123456789abcdef"
"""A key value; its variable's name has none of KEY, TOKEN, SECRET or PASSWORD in it."""


class FakeSleep:
    def __init__(self):
        self.delays = []

    async def __call__(self, seconds):
        self.delays.append(seconds)


@pytest.fixture
def server():
    """Start fault servers; stop them all at the end."""
    started = []

    def start(**options):
        started.append(FaultServer(**options))
        return started[-1]

    yield start
    for each in started:
        each.stop()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The workbench response cache, in a temporary folder."""
    monkeypatch.setattr(llm.cache, "CACHE_DIR", tmp_path / "cache")
    return tmp_path / "cache"


def complete(client, api_base, model="openai/fault", **endpoint):
    endpoint = Endpoint(api_base=api_base, **endpoint)
    return asyncio.run(client.complete(model, MESSAGES, endpoint=endpoint))


def experiment(path: Path, backends, **fields) -> Path:
    spec = {
        "name": "http",
        "tasks": {"files": [EXAMPLES]},
        "backends": backends,
        "settings": [{"agency": "A3"}],
        "seeds": [0],
        "judge_process": False,
        **fields,
    }
    path.write_text(yaml.safe_dump(spec))
    return path


def records(store: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (store / "episodes").glob("*.json")}


# -- one call: each fault is a typed error ---------------------------------------------


@pytest.mark.parametrize(
    ("fault", "kind", "attempts"),
    [
        ("rate_limit", "rate_limit", 3),
        ("server", "server", 3),
        ("not_json", "server", 3),
        ("slow", "timeout", 3),
        ("auth", "auth", 1),
        ("not_found", "not_found", 1),
    ],
)
def test_each_fault_is_a_typed_error_retried_only_when_transient(server, fault, kind, attempts):
    srv = server(faults=lambda n, body: fault, retry_after="0", slow_seconds=1.0)
    client = LLMClient(max_retries=2, timeout=0.3, sleep=FakeSleep())
    with pytest.raises(ModelError) as info:
        complete(client, srv.api_base)
    assert info.value.kind == kind
    assert len(srv.requests) == attempts
    assert info.value.permanent == (kind in ("auth", "not_found"))


def test_retry_after_is_honoured_and_a_long_one_is_not_waited_for(server):
    srv = server(faults=lambda n, body: "rate_limit" if n < 2 else None, retry_after="7")
    sleep = FakeSleep()
    response = complete(LLMClient(sleep=sleep), srv.api_base)
    assert sleep.delays == [7.0, 7.0] and response.attempts == 3
    srv = server(faults=lambda n, body: "rate_limit", retry_after="3600")
    sleep = FakeSleep()
    with pytest.raises(ModelError, match="asked to wait 3600 s") as info:
        complete(LLMClient(sleep=sleep, max_backoff=60), srv.api_base)
    assert info.value.kind == "rate_limit" and sleep.delays == [] and len(srv.requests) == 1


def test_backoff_has_seeded_jitter_and_the_endpoint_sets_the_policy(server):
    srv = server(faults=lambda n, body: "server")

    def pauses(seed):
        sleep = FakeSleep()
        client = LLMClient(max_retries=9, backoff=5.0, sleep=sleep, rng=np.random.default_rng(seed))
        with pytest.raises(ModelError):
            complete(client, srv.api_base, retries=3, backoff=0.1)  # the endpoint's policy wins
        return sleep.delays

    first = pauses(seed=1)
    assert len(first) == 3
    for delay, ceiling in zip(first, [0.1, 0.2, 0.4], strict=True):
        assert ceiling / 2 <= delay < ceiling
    assert pauses(seed=1) == first and pauses(seed=2) != first


def test_a_server_that_never_answered_is_unreachable_one_that_died_is_a_connection_error(server):
    srv = server()
    client = LLMClient(max_retries=1, sleep=FakeSleep())
    complete(client, srv.api_base)
    srv.stop()
    with pytest.raises(ModelError) as info:
        complete(client, srv.api_base)
    assert info.value.kind == "connection" and not info.value.permanent
    with pytest.raises(ModelError) as info:
        complete(LLMClient(max_retries=1, sleep=FakeSleep()), srv.api_base)
    assert info.value.kind == "unreachable" and info.value.permanent


def test_a_missing_key_is_a_permanent_auth_error_without_a_call(server, monkeypatch):
    srv = server()
    monkeypatch.delenv("HB_FAULT_CREDENTIAL", raising=False)
    with pytest.raises(ModelError, match="HB_FAULT_CREDENTIAL") as info:
        complete(LLMClient(), srv.api_base, api_key_env="HB_FAULT_CREDENTIAL")
    assert info.value.kind == "auth" and srv.requests == []
    # the key named by api_key_env is sent; with an api_base alone, a placeholder is sent
    monkeypatch.setenv("HB_FAULT_CREDENTIAL", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-never-sent-elsewhere")
    complete(LLMClient(), srv.api_base, api_key_env="HB_FAULT_CREDENTIAL")
    complete(LLMClient(), srv.api_base)
    assert [h["authorization"] for h in srv.headers] == [f"Bearer {SECRET}", "Bearer no-key"]


def test_extra_parameters_reach_the_server_and_the_endpoint_is_in_the_cache_key(server, tmp_path):
    srv = server()
    cache = ResponseCache(tmp_path / "responses.sqlite")
    complete(LLMClient(cache=cache), srv.api_base, params={"max_tokens": 7})
    assert srv.requests[0]["max_tokens"] == 7
    again = complete(LLMClient(cache=cache), srv.api_base, params={"max_tokens": 7})
    assert again.cached and len(srv.requests) == 1
    # the same request to another server is not answered from the cache
    with pytest.raises(ModelError) as info:
        complete(LLMClient(cache=cache, max_retries=0), "http://127.0.0.1:9/v1")
    assert info.value.kind == "unreachable"
    # the key's variable and the retry policy do not change what the server answers
    key = Endpoint(api_base=srv.api_base, params={"max_tokens": 7}).identity()
    same = Endpoint(
        api_base=srv.api_base + "/", params={"max_tokens": 7}, api_key_env="X", timeout=3, retries=0
    )
    assert same.identity() == key


def test_a_server_set_in_the_environment_is_part_of_the_cache_and_episode_keys(
    server, tmp_path, monkeypatch
):
    srv = server()
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_BASE", srv.api_base)  # litellm's own variable
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder")
    cache = ResponseCache(tmp_path / "responses.sqlite")
    asyncio.run(LLMClient(cache=cache).complete("openai/fault", MESSAGES))
    assert len(srv.requests) == 1
    # pointed elsewhere, the same request is not answered from the cache
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:9/v1")
    with pytest.raises(ModelError) as info:
        asyncio.run(LLMClient(cache=cache, max_retries=0).complete("openai/fault", MESSAGES))
    assert info.value.kind == "unreachable"
    backends = Backends(agent="openai/fault")
    assert backends.identity()["endpoints"] == {
        "agent": {"api_base_env": {"OPENAI_API_BASE": "http://127.0.0.1:9/v1"}}
    }
    monkeypatch.delenv("OPENAI_API_BASE")
    assert "endpoints" not in backends.identity()
    assert "endpoints" not in Backends(agent="scripted:oracle").identity()


def test_a_budget_of_calls_or_cost_refuses_further_calls(server):
    srv = server()
    client = LLMClient(budget=CallBudget(max_calls=2))
    complete(client, srv.api_base)
    complete(client, srv.api_base)
    with pytest.raises(ModelError, match="budget of 2 model calls") as info:
        complete(client, srv.api_base)
    assert info.value.kind == "budget" and len(srv.requests) == 2
    priced = LLMClient(budget=CallBudget(max_cost=1e-9))  # litellm prices gpt-4o-mini calls
    complete(priced, srv.api_base, model="openai/gpt-4o-mini")
    assert priced.stats.cost > 1e-9
    with pytest.raises(ModelError, match=r"budget of \$1e-09"):
        complete(priced, srv.api_base, model="openai/gpt-4o-mini")


# -- episodes and runs: infrastructure failures are errors -----------------------------


def test_an_agent_model_failure_ends_the_episode_in_error(server):
    srv = server(faults=lambda n, body: "server" if n >= 1 else "malformed_tool_call")
    scenario = runner.select_tasks(runner.TaskSelection(files=[EXAMPLES], ids=["mock_A_001"]))[0]
    endpoint = Endpoint(api_base=srv.api_base, retries=0)
    backends = Backends(agent="openai/fault", endpoints={"agent": endpoint})
    trace = asyncio.run(Episode(scenario, backends=backends, client=LLMClient()).run())
    # the malformed tool call is the agent's own output: an error event that counts
    # against it; the server error is not: the episode ends with model_error
    assert [e.payload.error_type for e in trace.of_type("error")] == ["invalid_json"]
    failure = trace.of_type("model_error")[0]
    assert (failure.actor, failure.payload.role, failure.payload.kind) == (
        "agent_0", "agent", "server",
    )  # fmt: skip
    assert trace.termination.reason == "model_error"
    assert trace.header.endpoints == {"agent": {"api_base": srv.api_base}}
    assert Trace.from_jsonl(trace.to_jsonl()) == trace


@pytest.mark.parametrize("role", ["user", "judge"])
def test_a_user_simulator_or_judge_failure_is_an_error_of_the_episode(
    server, tmp_path, cache_dir, capsys, role
):
    srv = server(faults=lambda n, body: "server")
    exp = experiment(
        tmp_path / "exp.yaml",
        [{"agent": "scripted:oracle", role: "openai/fault",
          "endpoints": {role: {"api_base": srv.api_base, "retries": 0}}}],
        tasks={"files": [EXAMPLES], "ids": ["mock_A_001"]}, judge_process=True,
    )  # fmt: skip
    assert main(["run", str(exp), "--out", str(tmp_path / "store"), "--quiet"]) == 1
    (record,) = records(tmp_path / "store").values()
    assert record["error"]["kind"] == "server" and record["error"]["role"] == role
    assert record["outcome"] is None and record["metrics"] is None
    frame = runner.load_results(tmp_path / "store")
    assert frame["error_kind"].tolist() == ["server"] and frame["success"].isna().all()
    assert runner.summary(frame)["errors"].tolist() == [1]
    assert main(["results", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    assert "1 episode(s) ended in error" in out and "mock_A_001" in out


def test_a_permanent_failure_stops_its_backend_only_and_the_run_exits_nonzero(
    server, tmp_path, cache_dir, capfd, caplog, monkeypatch
):
    bad = server(faults=lambda n, body: "auth")
    good = server()
    monkeypatch.setenv("HB_FAULT_CREDENTIAL", SECRET)
    exp = experiment(
        tmp_path / "exp.yaml",
        [
            {"agent": "openai/bad", "endpoints": {"agent": {
                "api_base": bad.api_base, "api_key_env": "HB_FAULT_CREDENTIAL"}}},
            {"agent": "openai/good", "endpoints": {"agent": {"api_base": good.api_base}}},
        ],
        concurrency={"openai": 1},
    )  # fmt: skip
    store = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(store), "--quiet"]) == 1
    captured = capfd.readouterr()
    assert len(bad.requests) == 1  # stopped after the first occurrence
    assert captured.err.count("stopped the agent backend openai/bad") == 1
    assert f"at {bad.api_base}: auth" in captured.err and "To fix: put a valid key" in captured.err
    assert "9 not started" in captured.out and "1 backend(s) stopped" in captured.out
    frame = runner.load_results(store)
    assert (frame[frame.agent_model == "openai/good"]["error"].isna()).sum() == 10
    assert frame[frame.agent_model == "openai/bad"]["error_kind"].tolist() == ["auth"]
    # the key value is in no file, output or cache (the server echoed it in its 401)
    written = [p.read_bytes() for p in [*store.rglob("*"), *cache_dir.rglob("*")] if p.is_file()]
    assert not any(SECRET.encode() in data for data in written)
    assert SECRET not in captured.out + captured.err + caplog.text  # nor in any log
    shown = runner.error_rows(frame).to_string() + str(runner.error_note(frame))
    assert "auth" in shown and SECRET not in shown  # nor in what a notebook displays
    # fixed: the next run runs the error and the episodes not started
    bad.faults = None
    assert main(["run", str(exp), "--out", str(store), "--quiet"]) == 0
    assert "10 run, 10 already done, 0 ended in error" in capfd.readouterr().out


def test_a_missing_provider_key_stops_its_backend_at_once(tmp_path, cache_dir, capfd, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)  # the SDK refuses before any request
    exp = experiment(
        tmp_path / "exp.yaml",
        [{"agent": "openai/gpt-4o-mini"}, {"agent": "scripted:oracle"}],
        concurrency={"openai": 1},
    )
    store = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(store), "--quiet"]) == 1
    captured = capfd.readouterr()
    assert captured.err.count("stopped the agent backend openai/gpt-4o-mini: auth") == 1
    assert "OPENAI_API_KEY" in captured.err and "9 not started" in captured.out
    frame = runner.load_results(store)
    assert frame[frame.agent_model == "openai/gpt-4o-mini"]["error_kind"].tolist() == ["auth"]
    assert frame[frame.agent_model == "scripted:oracle"]["error"].isna().sum() == 10


def test_the_plan_names_a_backend_whose_timed_episode_failed(tmp_path, cache_dir, monkeypatch):
    from hasbench.runner.planning import estimate
    from hasbench.sync import run_sync

    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    exp = experiment(
        tmp_path / "exp.yaml", [{"agent": "openai/gpt-4o-mini"}, {"agent": "scripted:oracle"}]
    )
    plan = run_sync(estimate(runner.load_experiment(exp), tmp_path / "store"))
    assert list(plan.failed) == ["openai/gpt-4o-mini"]
    assert "The timed episode of openai/gpt-4o-mini ended in error (auth: " in str(plan)
    assert plan.pending["openai/gpt-4o-mini"] == 10  # the failed one runs again
    assert plan.pending["scripted:oracle"] == 6 and plan.stored == 0  # four timed offline


def test_fifty_episodes_with_a_fifth_of_calls_failing_lose_nothing(server, tmp_path):
    srv = server(faults=random_faults(0.2, seed=3), retry_after="0", slow_seconds=1.0)
    # no retries: a failed call is its episode's error, so the errors are the same however
    # concurrent episodes sending identical requests interleave (with one retry, about one
    # episode in fifty failed, and some orders left none)
    endpoint = {"api_base": srv.api_base, "retries": 0, "timeout": 0.4}
    exp = runner.load_experiment(
        experiment(
            tmp_path / "exp.yaml",
            [{"agent": "openai/fault", "endpoints": {"agent": endpoint}}],
            seeds=[0, 1, 2, 3, 4],
        )
    )
    store = tmp_path / "store"
    client = LLMClient(cache=ResponseCache(tmp_path / "cache.sqlite"))
    first = asyncio.run(runner.run_experiment(exp, store, client=client, progress=False))
    assert (first.total, first.ran, first.not_started) == (50, 50, 0)
    done = records(store)
    assert len(done) == 50  # every episode a result or a recorded error: none lost
    errors = {key for key, r in done.items() if r["error"] is not None}
    assert first.failed == len(errors) > 0
    assert {done[k]["error"]["kind"] for k in errors} <= {"rate_limit", "server", "timeout"}
    assert all((store / r["trace"]).exists() for r in done.values())
    results_before = {k: (store / "episodes" / f"{k}.json").read_bytes() for k in done}
    assert "malformed_tool_call" in srv.served  # a bad tool call counts against the agent:
    bad_calls = [r for r in done.values() if r["error"] is None and "invalid_json" in (
        (store / r["trace"]).read_text())]  # fmt: skip
    assert bad_calls and all(r["outcome"] is not None for r in bad_calls)
    # the rerun (the server healthy again) runs exactly the errors, and only them; its
    # time-out is longer (not part of the episode key), so a loaded machine cannot trip it
    srv.faults = None
    patient = runner.load_experiment(
        experiment(
            tmp_path / "patient.yaml",
            [{"agent": "openai/fault", "endpoints": {"agent": {**endpoint, "timeout": 30.0}}}],
            seeds=[0, 1, 2, 3, 4],
        )
    )
    second = asyncio.run(runner.run_experiment(patient, store, client=client, progress=False))
    assert (second.ran, second.skipped, second.failed) == (len(errors), 50 - len(errors), 0)
    done = records(store)
    assert all(r["error"] is None for r in done.values())
    for key, data in results_before.items():
        if key not in errors:
            assert (store / "episodes" / f"{key}.json").read_bytes() == data


def test_a_server_dying_mid_run_leaves_errors_that_the_next_run_completes(server, tmp_path):
    srv = server(faults=lambda n, body: "die" if n == 4 else None)
    endpoint = {"api_base": srv.api_base, "retries": 1, "backoff": 0.01}
    exp = runner.load_experiment(
        experiment(
            tmp_path / "exp.yaml",
            [{"agent": "openai/fault", "endpoints": {"agent": endpoint}}],
            concurrency={"openai": 1},
        )
    )
    store = tmp_path / "store"
    first = asyncio.run(runner.run_experiment(exp, store, client=LLMClient(), progress=False))
    assert first.ran == 10 and first.failed == 6 and not first.stopped
    kinds = {r["error"]["kind"] for r in records(store).values() if r["error"]}
    assert kinds == {"connection"}
    restarted = server(port=srv.port)
    second = asyncio.run(runner.run_experiment(exp, store, client=LLMClient(), progress=False))
    assert (second.ran, second.failed, len(restarted.requests)) == (6, 0, 6)


def test_a_budget_stops_the_run_cleanly_and_the_next_run_goes_on(
    server, tmp_path, cache_dir, capsys
):
    def two_calls(body):  # prose first (the agent's own error), then finish
        said = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return {"content": "Let me think."} if said == 0 else {
            "tool_calls": [{"name": "finish", "arguments": {"deliverable": "ok"}}]}  # fmt: skip

    srv = server(reply=two_calls)
    exp = experiment(
        tmp_path / "exp.yaml",
        [{"agent": "openai/fault", "endpoints": {"agent": {"api_base": srv.api_base}}}],
        concurrency={"openai": 2},
    )
    store = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(store), "--quiet", "--max-calls", "5"]) == 3
    out = capsys.readouterr().out
    assert "stopped early: the run's budget of 5 model calls is spent" in out
    assert len(srv.requests) == 5
    kept = records(store)
    assert len(kept) == 2 and all(r["error"] is None for r in kept.values())
    assert main(["run", str(exp), "--out", str(store), "--quiet"]) == 0
    assert len(records(store)) == 10 and "8 run, 2 already done" in capsys.readouterr().out


def test_a_cost_budget_stops_the_run_cleanly_and_the_next_run_goes_on(
    server, tmp_path, cache_dir, capsys
):
    srv = server()  # litellm prices openai/gpt-4o-mini calls
    exp = experiment(
        tmp_path / "exp.yaml",
        [{"agent": "openai/gpt-4o-mini", "endpoints": {"agent": {"api_base": srv.api_base}}}],
        concurrency={"openai": 1},
        budget={"max_cost": 1e-9},
    )
    store = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(store), "--quiet"]) == 3
    out = capsys.readouterr().out
    assert "stopped early: the run's budget of $1e-09 is spent" in out
    assert len(srv.requests) == 1  # one episode, finished in one call; the next refused
    (kept,) = records(store).values()  # the refused episode is not recorded
    assert kept["error"] is None and kept["outcome"] is not None
    assert main(["run", str(exp), "--out", str(store), "--quiet", "--max-cost", "100"]) == 0
    assert len(records(store)) == 10 and "9 run, 1 already done" in capsys.readouterr().out


def test_the_episode_command_names_the_failure_and_exits_nonzero(server, cache_dir, capsys):
    srv = server(faults=lambda n, body: "not_found")
    code = main([
        "episode", EXAMPLES, "mock_A_001", "--agent", "openai/nosuch",
        "--agent-api-base", srv.api_base, "--agent-param", "max_tokens", "64", "--retries", "0",
    ])  # fmt: skip
    assert code == 1
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["error"]["kind"] == "not_found" and "success" not in summary
    assert "the agent model openai/nosuch failed: not_found" in captured.err
    assert "check the model name" in captured.err
    assert srv.requests[0]["max_tokens"] == 64


def test_cli_endpoint_options_override_the_experiment(server, tmp_path, cache_dir, monkeypatch):
    srv = server()
    monkeypatch.setenv("HB_FAULT_CREDENTIAL", SECRET)
    exp = experiment(
        tmp_path / "exp.yaml",
        [{"agent": "openai/fault", "endpoints": {"agent": {"api_base": "http://127.0.0.1:9/v1"}}}],
        tasks={"files": [EXAMPLES], "ids": ["mock_A_001"]},
    )
    store = tmp_path / "store"
    code = main([
        "run", str(exp), "--out", str(store), "--quiet", "--agent-api-base", srv.api_base,
        "--agent-api-key-env", "HB_FAULT_CREDENTIAL", "--agent-param", "max_tokens", "9",
        "--timeout", "5",
    ])  # fmt: skip
    assert code == 0 and srv.requests[0]["max_tokens"] == 9
    assert srv.headers[0]["authorization"] == f"Bearer {SECRET}"
    (record,) = records(store).values()
    assert record["backends"]["endpoints"] == {
        "agent": {"api_base": srv.api_base, "params": {"max_tokens": 9}}
    }
    (definition,) = (store / "experiments").glob("*.json")
    assert SECRET not in definition.read_text()
    assert "HB_FAULT_CREDENTIAL" in definition.read_text()


def test_a_backend_that_keeps_failing_is_stopped_and_the_others_go_on(
    server, tmp_path, cache_dir, capfd
):
    dead = server(faults=lambda n, body: ("server", "not_json")[n % 2])
    good = server()
    endpoint = {"api_base": dead.api_base, "retries": 2, "backoff": 0.01}

    def grid(**policy):
        return experiment(
            tmp_path / "exp.yaml",
            [
                {"agent": "openai/dead", "endpoints": {"agent": {**endpoint, **policy}}},
                {"agent": "openai/good", "endpoints": {"agent": {"api_base": good.api_base}}},
            ],
            seeds=[0, 1, 2, 3],
            concurrency={"openai": 1},
        )

    store = tmp_path / "store"
    assert main(["run", str(grid()), "--out", str(store), "--quiet"]) == 1
    captured = capfd.readouterr()
    # the default: ten episodes in a row, each after its three attempts, then no more
    assert len(dead.requests) == llm.STOP_AFTER * 3 == 30
    assert captured.err.count("hasbench: stopped the agent backend openai/dead") == 1
    assert (
        f"stopped the agent backend openai/dead at {dead.api_base}: 10 episodes in a row "
        "failed with transient errors after their retries (server 10x); the last: "
        "openai/dead: " in captured.err
    )
    assert "(after 3 attempt(s)). Its remaining episodes were not started" in captured.err
    assert "30 not started" in captured.out and "1 backend(s) stopped" in captured.out
    frame = runner.load_results(store)
    assert frame[frame.agent_model == "openai/good"]["error"].isna().sum() == 40
    assert frame[frame.agent_model == "openai/dead"]["error_kind"].tolist() == ["server"] * 10
    # per endpoint: stop_after 2 stops it after two more episodes
    assert main(["run", str(grid(stop_after=2)), "--out", str(store), "--quiet"]) == 1
    captured = capfd.readouterr()
    assert len(dead.requests) == 30 + 2 * 3
    assert "2 episodes in a row failed with transient errors" in captured.err
    # once it answers, the next run runs the rest
    dead.faults = None
    assert main(["run", str(grid()), "--out", str(store), "--quiet"]) == 0
    assert "40 run, 40 already done, 0 ended in error" in capfd.readouterr().out


def test_an_episode_without_error_starts_the_count_again(server, tmp_path, cache_dir):
    flaky = server(faults=lambda n, body: None if n % 3 == 2 else "server")
    endpoint = {"api_base": flaky.api_base, "retries": 0, "stop_after": 3}
    exp = runner.load_experiment(
        experiment(
            tmp_path / "exp.yaml",
            [{"agent": "openai/flaky", "endpoints": {"agent": endpoint}}],
            concurrency={"openai": 1},
        )
    )
    done = asyncio.run(runner.run_experiment(exp, tmp_path / "store", progress=False))
    assert (done.ran, done.not_started, done.stopped) == (10, 0, [])
    assert done.failed == 7  # two failures, then one success, and again
