import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from hasbench import runner
from hasbench.cli import main
from hasbench.participants.backends import agent_backend
from hasbench.paths import REPO_ROOT
from hasbench.prompts import prompt_hashes
from hasbench.runner.store import open_trace

EXAMPLES = str(REPO_ROOT / "data" / "tasks" / "examples.yaml")

DRIVER = textwrap.dedent(
    """
    import sys
    from hasbench.llm import register_test_provider
    from hasbench.cli import main

    def respond(messages, tools):
        prompt = messages[-1]["content"]
        if "Statement:" in prompt:
            return {"content": '{"holds": true, "quote": ""}', "tool_calls": []}
        scores = dict.fromkeys(
            ["precise", "necessary", "non_redundant", "actionable", "integrated",
             "warranted", "well_timed", "self_initiated"], 1)
        import json
        return {"content": json.dumps(scores), "tool_calls": []}

    register_test_provider("slowjudge", respond, delay=float(sys.argv[1]))
    raise SystemExit(main(["run", sys.argv[2], "--out", sys.argv[3], "--quiet"]))
    """
)


def write_experiment(path: Path, **overrides) -> Path:
    spec = {
        "name": "runner_test",
        "tasks": {"files": [EXAMPLES]},
        "backends": [{"agent": "scripted:strong"}],
        "settings": [{"agency": "A1"}, {"agency": "A3"}],
        "seeds": [0],
    }
    spec.update(overrides)
    path.write_text(yaml.safe_dump(spec))
    return path


def records(directory: Path) -> list[Path]:
    return sorted((directory / "episodes").glob("*.json"))


def test_run_writes_one_record_and_trace_per_episode_and_rerun_skips(tmp_path, capsys):
    exp = write_experiment(tmp_path / "exp.yaml", tasks={"files": [EXAMPLES], "ids": None})
    out = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    first = capsys.readouterr().out
    n = len(records(out))
    assert n == 2 * len(runner.select_tasks(runner.load_experiment(exp).tasks))
    assert "0 already done" in first
    for path in records(out):
        record = json.loads(path.read_text())
        assert record["error"] is None, record["error"]
        assert (out / record["trace"]).exists()
        assert path.stem == runner.episode_key({k: record[k] for k in IDENTITY_KEYS})
    frame = runner.load_results(out)
    assert len(frame) == n and frame["key"].is_unique
    assert frame["success"].notna().all()
    assert not list(out.rglob("*.tmp"))
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    assert f"0 run, {n} already done" in capsys.readouterr().out
    pd.testing.assert_frame_equal(runner.load_results(out), frame)
    twin = tmp_path / "twin"  # same grid, fresh store: byte-identical traces and records
    assert main(["run", str(exp), "--out", str(twin), "--quiet"]) == 0
    for path in sorted(out.glob("*/*.json*")):
        assert (twin / path.relative_to(out)).read_bytes() == path.read_bytes()
    assert main(["results", str(out)]) == 0
    table = capsys.readouterr().out
    assert "scripted:strong" in table and "A3/full" in table and "pass@1" in table


IDENTITY_KEYS = (
    "format", "task_id", "scenario_hash", "setting", "backends", "seed", "judge_process",
    "package_version", "code", "prompt_hashes",
)  # fmt: skip


def test_the_episode_key_changes_with_the_package_code(tmp_path, monkeypatch):
    """Results of other code are never reused: the key includes a hash of the source."""
    from hasbench.runner import experiment

    package = tmp_path / "hasbench"
    (package / "envs").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "envs" / "retail.py").write_text("LIMIT = 10\n")
    monkeypatch.setattr(experiment.hasbench, "__file__", str(package / "__init__.py"))
    keys = []
    for source in ("LIMIT = 10\n", "LIMIT = 10\n", "LIMIT = 11\n"):
        (package / "envs" / "retail.py").write_text(source)
        experiment.code_fingerprint.cache_clear()
        keys.append(experiment.code_fingerprint())
    experiment.code_fingerprint.cache_clear()
    assert keys[0] == keys[1] != keys[2]


@agent_backend("scripted:crashing", label="cannot build its policies (a test double)")
def crashing_team(model, seats):
    raise RuntimeError("the policy crashed in no_such_policy")


def test_failed_episode_is_recorded_and_the_run_goes_on(tmp_path):
    # (an unknown backend string no longer gets this far: it is refused when the file is
    # read, see test_every_experiment_field_is_validated_naming_file_and_field)
    exp = write_experiment(
        tmp_path / "exp.yaml",
        backends=[{"agent": "scripted:crashing"}, {"agent": "scripted:oracle"}],
        settings=[{"agency": "A3"}],
        tasks={"files": [EXAMPLES], "max_per_domain": 2},
    )
    out = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 1  # an episode failed
    frame = runner.load_results(out)
    assert len(frame) == 4
    bad = frame[frame["agent_model"] == "scripted:crashing"]
    assert bad["error"].notna().all() and (bad["error_kind"] == "crash").all()
    assert bad["error"].str.contains("no_such_policy").all()
    good = frame[frame["agent_model"] == "scripted:oracle"]
    assert good["error"].isna().all() and good["success"].all()


def test_task_filters(tmp_path):
    sel = runner.TaskSelection(files=[EXAMPLES], patterns=["C"])
    assert {s.adaptation_pattern for s in runner.select_tasks(sel)} == {"C"}
    sel = runner.TaskSelection(files=[EXAMPLES], max_per_domain=3)
    three = runner.select_tasks(sel)
    assert len({s.adaptation_pattern for s in three}) == 3  # round-robin over patterns
    ids = [s.task_id for s in runner.select_tasks(runner.TaskSelection(files=[EXAMPLES]))][:2]
    assert [
        s.task_id for s in runner.select_tasks(runner.TaskSelection(files=[EXAMPLES], ids=ids))
    ] == ids
    with pytest.raises(runner.ExperimentError, match="tasks.ids"):
        runner.select_tasks(runner.TaskSelection(files=[EXAMPLES], ids=["nope_A_001"]))
    assert runner.select_tasks(runner.TaskSelection(files=[EXAMPLES], domains=["retail"])) == []


def test_bad_experiment_files_name_file_and_field(tmp_path, capsys):
    bad = write_experiment(tmp_path / "bad.yaml", settings=[{"agency": "A9"}])
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: settings.0.agency" in err and "Traceback" not in err
    typo = write_experiment(tmp_path / "typo.yaml", seed=[0])
    assert main(["run", str(typo)]) == 2
    assert "typo.yaml: seed: Extra inputs are not permitted" in capsys.readouterr().err
    missing = write_experiment(tmp_path / "m.yaml", tasks={"files": ["data/tasks/none.yaml"]})
    assert main(["run", str(missing)]) == 2
    assert "no such task file: data/tasks/none.yaml" in capsys.readouterr().err
    assert main(["results", str(tmp_path)]) == 2
    assert "not a results directory" in capsys.readouterr().err


def test_episode_key_changes_with_what_determines_the_episode():
    exp = runner.Experiment.model_validate(
        {
            "name": "k",
            "tasks": {"files": [EXAMPLES], "max_per_domain": 1},
            "settings": [{"agency": "A1"}, {"agency": "A3"}],
            "seeds": [0, 1],
            "backends": [
                {"agent": "scripted:strong"},
                {"agent": "scripted:strong", "judge": "x/y"},
            ],
        }
    )
    keys = [runner.episode_key(spec.identity(prompt_hashes())) for spec in runner.grid(exp)]
    assert len(keys) == len(set(keys)) == 8
    again = [runner.episode_key(spec.identity(prompt_hashes())) for spec in runner.grid(exp)]
    assert keys == again


@pytest.mark.slow
def test_killed_run_resumes_with_nothing_lost_or_duplicated(tmp_path):
    exp = write_experiment(
        tmp_path / "exp.yaml",
        backends=[{"agent": "scripted:strong", "judge": "test/slowjudge"}],
        seeds=[0, 1],
        concurrency={"scripted": 1, "test": 1},
    )
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    total = len(runner.grid(runner.load_experiment(exp)))

    def launch(delay: float, out: Path, cache: str) -> subprocess.Popen:
        env = {**os.environ, "HASBENCH_CACHE": str(tmp_path / cache)}
        return subprocess.Popen(
            [sys.executable, str(driver), str(delay), str(exp), str(out)],
            env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip

    reference = tmp_path / "reference"
    assert launch(0.0, reference, "cache_ref").wait(timeout=300) == 0
    assert len(records(reference)) == total

    resumed = tmp_path / "resumed"
    proc = launch(0.05, resumed, "cache_kill")
    deadline = time.time() + 120
    while len(records(resumed)) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_at_kill = len(records(resumed))
    assert 3 <= done_at_kill < total, "the kill must land mid-way"
    assert launch(0.0, resumed, "cache_kill").wait(timeout=300) == 0
    names = [p.name for p in records(resumed)]
    assert len(names) == total == len(set(names))
    assert not list(resumed.rglob("*.tmp"))
    pd.testing.assert_frame_equal(runner.load_results(resumed), runner.load_results(reference))


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "experiments").glob("*.yaml")), ids=str)
def test_shipped_experiment_files_are_valid(path):
    experiment = runner.load_experiment(path)
    assert runner.grid(experiment)


def test_concurrency_is_limited_per_agent_provider(tmp_path, monkeypatch):
    in_flight: dict[str, int] = {}
    peak: dict[str, int] = {}

    async def fake_run_one(spec, identity, key, store, client, judge_process=True):
        group = runner.provider(spec.backends.agent)
        in_flight[group] = in_flight.get(group, 0) + 1
        peak[group] = max(peak.get(group, 0), in_flight[group])
        await asyncio.sleep(0.01)
        in_flight[group] -= 1
        return {"error": None}

    monkeypatch.setattr(runner.execution, "run_one", fake_run_one)
    exp = runner.Experiment.model_validate(
        {
            "name": "limits",
            "tasks": {"files": [EXAMPLES]},
            "backends": [{"agent": "scripted:strong"}, {"agent": "test/anything"}],
            "seeds": [0, 1, 2],
            "concurrency": {"scripted": 2, "test": 5},
        }
    )
    # in-process (scripted episodes would otherwise go to worker processes, see test_runner_pool)
    done = asyncio.run(runner.run_experiment(exp, tmp_path, progress=False, workers=1))
    assert done.ran == 60
    assert peak == {"scripted": 2, "test": 5}


def test_notebook_command_names_the_available_notebooks(capsys):
    assert main(["notebook", "no_such_notebook"]) == 2
    err = capsys.readouterr().err
    assert "no notebook named 'no_such_notebook'" in err
    assert "rq1 (rq1_value_of_participation.ipynb)" in err
    assert "explore_traces" in err and "docuteam_user_study" in err


def test_notebooks_are_found_by_their_registered_name(tmp_path):
    registered = runner.registered_notebooks()
    assert registered == {
        "rq1": REPO_ROOT / "notebooks" / "rq1_value_of_participation.ipynb",
        "explore_traces": REPO_ROOT / "notebooks" / "explore_traces.ipynb",
        "docuteam_user_study": REPO_ROOT / "notebooks" / "docuteam_user_study.ipynb",
        "docuteam_session": REPO_ROOT / "notebooks" / "docuteam_session.ipynb",
        "docuteam_simulated_study": REPO_ROOT / "notebooks" / "docuteam_simulated_study.ipynb",
        "rq2": REPO_ROOT / "notebooks" / "rq2_agency.ipynb",
        "rq3": REPO_ROOT / "notebooks" / "rq3_channels_by_pattern.ipynb",
        "rq4": REPO_ROOT / "notebooks" / "rq4_personas.ipynb",
        "robustness": REPO_ROOT / "notebooks" / "robustness_user_simulator.ipynb",
    }
    assert runner.find_notebook("rq1") == registered["rq1"]
    with pytest.raises(runner.ExperimentError, match="no notebook named 'rq'"):
        runner.find_notebook("rq")  # a prefix is not a name

    def notebook(path, metadata):
        path.write_text(json.dumps({"cells": [], "metadata": metadata, "nbformat": 4}))

    notebook(tmp_path / "a.ipynb", {"hasbench": {"name": "study"}})
    notebook(tmp_path / "scratch.ipynb", {})
    assert runner.registered_notebooks(tmp_path) == {"study": tmp_path / "a.ipynb"}
    notebook(tmp_path / "b.ipynb", {"hasbench": {"name": "study"}})
    with pytest.raises(runner.ExperimentError, match=r"b.ipynb: .*'study' is also the name of a"):
        runner.registered_notebooks(tmp_path)


def test_a_registered_metric_becomes_a_results_column(tmp_path):
    from hasbench import metrics

    @metrics.episode_metric("tool_errors")
    def tool_errors(trace, scn):
        return sum(e.payload.error for e in trace.of_type("tool_result"))

    try:
        exp = write_experiment(
            tmp_path / "exp.yaml", tasks={"files": [EXAMPLES], "ids": ["mock_C_001"]}
        )
        out = tmp_path / "store"
        assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    finally:
        del metrics.EPISODE_METRICS["tool_errors"]
    frame = runner.load_results(out)
    assert list(frame.columns[: len(runner.COLUMNS)]) == runner.COLUMNS
    assert "tool_errors" in frame.columns and frame["tool_errors"].notna().all()


def test_damaged_records_and_traces_are_reported_quarantined_and_run_again(tmp_path, capsys):
    exp = write_experiment(tmp_path / "exp.yaml", tasks={"files": [EXAMPLES], "max_per_domain": 4})
    out = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    paths = records(out)
    assert len(paths) == 8
    truncated, no_setting, cut_trace, lost_trace = paths[:4]
    truncated.write_text(truncated.read_text()[:100])
    record = json.loads(no_setting.read_text())
    del record["setting"]
    no_setting.write_text(json.dumps(record))
    trace = out / json.loads(cut_trace.read_text())["trace"]
    trace.write_text(trace.read_text()[:-120])
    (out / json.loads(lost_trace.read_text())["trace"]).unlink()
    frame, damaged = runner.load_store(out)
    assert len(frame) == 4
    lost = out / "traces" / f"{lost_trace.stem}.jsonl"
    assert {d.path for d in damaged} == {truncated, no_setting, trace, lost}
    reasons = " | ".join(d.reason for d in damaged)
    assert "not valid JSON" in reasons and "missing field(s): setting" in reasons
    assert "trace of its record is missing" in reasons and "unreadable trace" in reasons
    with pytest.warns(UserWarning, match="skipped 4 damaged file"):
        assert len(runner.load_results(out)) == 4
    assert main(["results", str(out)]) == 1  # it skipped damaged records: not a clean table
    shown = capsys.readouterr().out
    assert "skipped 4 damaged file(s)" in shown and str(truncated) in shown
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    rerun = capsys.readouterr().out
    assert "4 run, 4 already done" in rerun and rerun.count("quarantined (run again):") == 4
    assert (out / "quarantine" / "episodes" / truncated.name).exists()
    assert (
        (out / "quarantine" / f"{no_setting.stem}.reason.txt")
        .read_text()
        .startswith(str(no_setting))
    )
    frame, damaged = runner.load_store(out)
    assert len(frame) == 8 and damaged == [] and frame["error"].isna().all()


def test_a_trace_changed_in_place_is_caught_when_opened_and_by_the_next_run(tmp_path, capsys):
    """Loading compares sizes only (fast on 50,000 records); a same-size edit is caught by
    the SHA-256 when the trace is opened, and a run quarantines the episode and reruns it."""
    exp = write_experiment(tmp_path / "exp.yaml", tasks={"files": [EXAMPLES], "max_per_domain": 2})
    out = tmp_path / "store"
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    record = json.loads(records(out)[0].read_text())
    trace = out / record["trace"]
    original = trace.read_bytes()
    edited = original.replace(b'"seed":0', b'"seed":7', 1)
    assert edited != original and len(edited) == len(original) == record["trace_bytes"]
    trace.write_bytes(edited)
    frame, damaged = runner.load_store(out)
    assert len(frame) == 4 and damaged == []  # the size matches: the row stays
    with pytest.raises(ValueError, match="SHA-256 differs from the record's"):
        open_trace(out, record["key"])
    _, damaged = runner.scan_store(out, verify=True)
    assert [(d.key, d.path) for d in damaged] == [(record["key"], trace)]
    assert main(["run", str(exp), "--out", str(out), "--quiet"]) == 0
    rerun = capsys.readouterr().out
    assert "1 run, 3 already done" in rerun and rerun.count("quarantined (run again):") == 1
    assert open_trace(out, record["key"]).header.seed == 0
    trace.write_bytes(original[:-2] + b" \n")  # its last line cut short, padded to the size
    with pytest.raises(ValueError, match="unreadable trace"):
        open_trace(out, record["key"])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"concurrency": {"scripted": 0}},
            "concurrency.scripted: Input should be greater than or equal to 1",
        ),
        ({"concurrency": {"scripted": -1}}, "concurrency.scripted: Input should be greater"),
        (
            {"concurrency": {"opnai": 2}},
            "concurrency: no backend of this experiment uses provider(s) ['opnai'] "
            "(they use: rule, scripted)",
        ),
        ({"seeds": [0, -1]}, "seeds.1: Input should be greater than or equal to 0"),
        (
            {"backends": [{"agent": ""}]},
            "backends.0.agent: String should have at least 1 character",
        ),
        (
            {"backends": [{"agent": "openai/x", "endpoints": {"coach": {}}}]},
            "backends.0.endpoints.coach",
        ),
        (
            {
                "backends": [
                    {"agent": "openai/x", "endpoints": {"agent": {"api_base": "localhost:8000"}}}
                ]
            },
            "backends.0.endpoints.agent.api_base: must be an http:// or https:// URL",
        ),
        (
            {
                "backends": [
                    {"agent": "openai/x", "endpoints": {"agent": {"params": {"api_key": "sk-1"}}}}
                ]
            },
            "backends.0.endpoints.agent.params: api_key: name the variable holding the key "
            "in api_key_env",
        ),
        (
            {"backends": [{"agent": "openai/x", "endpoints": {"agent": {"retries": -1}}}]},
            "backends.0.endpoints.agent.retries: Input should be greater than or equal to 0",
        ),
        (
            {"backends": [{"agent": "openai/x", "endpoints": {"agent": {"stop_after": 0}}}]},
            "backends.0.endpoints.agent.stop_after: Input should be greater than or equal to 1",
        ),
        (
            {"budget": {"max_calls": 0}},
            "budget.max_calls: Input should be greater than or equal to 1",
        ),
        ({"budget": {"max_cost": -1}}, "budget.max_cost: Input should be greater than 0"),
        ({"tasks": {"files": ["no_such.yaml"]}}, "tasks.files: no such task file: no_such.yaml"),
        (
            {"backends": [{"agent": "scripted:oracle"}, {"agent": "scripted:oracel"}]},
            "backends.1.agent: unknown scripted agent 'scripted:oracel'; did you mean "
            "'scripted:oracle'?",
        ),
        (
            {"backends": [{"agent": "scripted:no_such_policy"}]},
            "backends.0.agent: unknown scripted agent 'scripted:no_such_policy' (known: "
            "scripted:agent, scripted:crashing, scripted:idle, scripted:oracle",
        ),
        (
            {"backends": [{"agent": "nosuchprovider/x"}]},
            "backends.0.agent: unknown provider 'nosuchprovider' (not a litellm provider)",
        ),
        (
            {"backends": [{"agent": "scripted:oracle", "user": "scripted:usr"}]},
            "backends.0.user: unknown scripted user 'scripted:usr'; did you mean 'scripted:user'?",
        ),
        (
            {"backends": [{"agent": "scripted:oracle", "judge": "opnai/gpt-4o"}]},
            "backends.0.judge: unknown provider 'opnai' (not a litellm provider); did you mean "
            "'openai'?",
        ),
        (
            {"backends": [{"agent": "scripted:standin?ask=2"}]},
            "backends.0.agent: scripted:standin?ask=2: ask=2.0 is outside [0, 1]",
        ),
        (
            {"backends": [{"agent": "local/smolm2"}]},
            "backends.0.agent: unknown local model 'local/smolm2'; did you mean "
            "'local/smollm2-135m'?",
        ),
        (
            {"backends": [{"agent": "gtp-4o"}]},
            "backends.0.agent: unknown model 'gtp-4o': it names no provider (provider/model); "
            "did you mean 'gpt-4o'?",
        ),
        (
            {"tasks": {"files": [EXAMPLES], "ids": ["mock_Z_999"]}},
            "tasks.ids: not among the selected tasks: ['mock_Z_999']",
        ),
    ],
)
def test_every_experiment_field_is_validated_naming_file_and_field(
    tmp_path, capsys, fields, message
):
    bad = write_experiment(tmp_path / "bad.yaml", **fields)
    assert main(["run", str(bad), "--out", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert f"bad.yaml: {message}" in err
    assert "sk-1" not in err and not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-calls", "0"], "argument --max-calls: must be at least 1, got 0"),
        (["--max-cost", "x"], "argument --max-cost: not a number: 'x'"),
        (["--timeout", "0"], "argument --timeout: must be more than 0, got 0"),
        (["--retries", "-1"], "argument --retries: must be at least 0, got -1"),
        (["--workers", "0"], "argument --workers: must be at least 1, got 0"),
        (["--workers", "-2"], "argument --workers: must be at least 1, got -2"),
        (["--agent-api-base", "localhost:1"], "--agent-api-base: must be an http:// or https://"),
        (["--judge-api-key-env", "a b"], "--judge-api-key-env: must be an environment variable"),
        (["--user-param", "api_key", "sk-9"], "--user-param: api_key: name the variable"),
    ],
)
def test_every_command_line_option_is_validated_naming_the_option(
    tmp_path, capsys, options, message
):
    exp = write_experiment(tmp_path / "exp.yaml")
    try:
        code = main(["run", str(exp), "--out", str(tmp_path / "store"), *options])
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "sk-9" not in err and not (tmp_path / "store").exists()


def test_results_shows_one_experiment_of_a_store_that_holds_several(tmp_path, capsys):
    out = tmp_path / "store"
    two_tasks = {"files": [EXAMPLES], "ids": ["mock_A_001", "mock_C_001"]}
    first = write_experiment(tmp_path / "first.yaml", tasks=two_tasks, judge_process=False)
    assert main(["run", str(first), "--out", str(out), "--quiet"]) == 0
    one_task = {"files": [EXAMPLES], "ids": ["mock_A_001"]}
    second = write_experiment(tmp_path / "second.yaml", tasks=one_task, seeds=[1])
    assert main(["run", str(second), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    keys = [e.key for e in runner.store.stored_experiments(out)]
    assert len(keys) == 2 and len(records(out)) == 6
    assert main(["results", str(out)]) == 0  # the experiment run last: the second
    shown = capsys.readouterr().out
    assert f"experiment runner_test (key {keys[1]}): 2 of 2 episodes" in shown
    rows = [line.split() for line in shown.splitlines() if "/full" in line]
    assert [row[:3] for row in rows] == [["scripted:strong", "A1/full", "1"],
                                         ["scripted:strong", "A3/full", "1"]]  # fmt: skip
    assert f"runner_test ({keys[0][:8]}): 4 episodes" in shown  # named, not counted
    assert main(["results", str(out), "--experiment", keys[0][:6]]) == 0
    shown = capsys.readouterr().out
    assert f"experiment runner_test (key {keys[0]}): 4 of 4 episodes" in shown
    assert "process judging was off for this experiment (judge_process: false)" in shown
    assert main(["results", str(out), "--experiment", "nosuch"]) == 2
    assert "no experiment 'nosuch' here (experiments: runner_test" in capsys.readouterr().err


def test_a_run_refuses_a_backend_string_and_zero_workers_before_writing_anything(tmp_path):
    exp = runner.Experiment.model_validate(
        {"name": "bad", "tasks": {"files": [EXAMPLES]}, "backends": [{"agent": "scripted:x"}]}
    )
    with pytest.raises(runner.ExperimentError, match="backends.0.agent: unknown scripted agent"):
        asyncio.run(runner.run_experiment(exp, tmp_path / "store", progress=False))
    good = runner.Experiment.model_validate({"name": "good", "tasks": {"files": [EXAMPLES]}})
    with pytest.raises(ValueError, match="workers: must be at least 1, got 0"):
        asyncio.run(runner.run_experiment(good, tmp_path / "store", progress=False, workers=0))
    assert not (tmp_path / "store").exists()


def test_the_episode_command_refuses_a_backend_string_before_running(tmp_path, capsys):
    out = tmp_path / "trace.jsonl"
    argv = ["episode", EXAMPLES, "mock_A_001", "--agent", "scripted:oracel", "--judge", "rulee"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert (
        "--agent: unknown scripted agent 'scripted:oracel'; did you mean 'scripted:oracle'?" in err
    )
    assert "--judge: unknown judge backend 'rulee'; did you mean 'rule'?" in err
    assert not out.exists()
