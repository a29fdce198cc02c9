"""Issue 26, point 6: DocuTeam failures are errors, not measures.

A session whose model steps fail for infrastructure reasons (a missing extra, key, model
or endpoint, time-outs) fails: the command exits non-zero with the reason, the log is
marked failed, no model step runs after it, and it gives no measures and no study rows.
A session that loses a few steps goes on and says how many beside its measures.
"""

import asyncio
import json

import pytest

import hasbench.llm.cache
import hasbench.llm.llama
import hasbench.llm.local
from hasbench.cli import main as cli
from hasbench.docuteam import (
    ManualClock,
    Session,
    SessionConfig,
    SessionLog,
    session_measures,
    study_data,
    study_rows,
)
from hasbench.docuteam.demo import DEMOS, DOCUTEAM_DATA, run_demo
from hasbench.docuteam.failures import FailedSessionError
from hasbench.docuteam.simulation import SimulationConfig, simulate_study
from hasbench.docuteam.simulation.personas import load_study_personas
from hasbench.docuteam.steps import RoleModels
from hasbench.docuteam.widget import DocuTeamWidget
from hasbench.llm import LLMClient, ModelError, register_test_provider

DOWN_KINDS = {
    "auth": "the environment variable OPENAI_API_KEY is not set",
    "not_found": "no such model",
    "unreachable": "nothing answers at http://127.0.0.1:9",
    "timeout": "the request timed out",
}


def failing_provider(name, kind):
    """A ``test/`` model that fails every call with ``kind``; returns it and its call list."""
    calls = []

    def respond(messages, tools):
        calls.append(messages)
        raise ModelError(kind, DOWN_KINDS[kind])

    return register_test_provider(name, respond), calls


def demo_session(model, tmp_path, participant="P01", condition="DocuTeam", **roles):
    """The demo script on a session; DocuTeam on the workshop first, then Baseline."""
    backends = RoleModels.all(model) if model else RoleModels(**roles)
    task = "workshop" if condition == "DocuTeam" else "sports_day"
    config = SessionConfig(
        condition=condition,
        participant=participant,
        task_name=task,
        order=1 if condition == "DocuTeam" else 2,
        simulated_user=True,
    )
    session = Session.from_folder(
        DOCUTEAM_DATA / task,
        config=config,
        backends=backends,
        client=LLMClient(cache=None, max_retries=0),
        clock=ManualClock(),
        log_path=tmp_path / f"{participant}_{condition}.jsonl",
    )
    asyncio.run(run_demo(session, DEMOS[task]))
    return session


@pytest.mark.parametrize("kind", ["auth", "not_found", "unreachable"])
def test_a_permanent_failure_fails_the_session_at_once(tmp_path, kind):
    model, calls = failing_provider(f"docuteam-down-{kind}", kind)
    session = demo_session(model, tmp_path)
    assert len(calls) == 1  # nothing is asked again once the backend cannot answer
    failure = session.failure
    assert failure["kind"] == kind and failure["permanent"] and failure["model"] == model
    assert failure["role"] == "trigger" and failure["step"] == "read_edit"
    log = SessionLog.read(tmp_path / "P01_DocuTeam.jsonl")
    assert log.failure == failure and len(log.of_type("session_failed")) == 1
    assert [e.payload["kind"] for e in log.of_type("error")] == [kind]
    with pytest.raises(FailedSessionError, match=f"session failed.*{kind}"):
        session_measures(log)
    with pytest.raises(FailedSessionError, match="P01_DocuTeam.jsonl"):
        study_rows(log)


def test_time_outs_in_a_row_fail_the_session(tmp_path):
    model, calls = failing_provider("docuteam-timeout", "timeout")
    session = demo_session(model, tmp_path)
    assert len(calls) == SessionConfig().failed_steps_in_a_row == 3
    assert session.failure["kind"] == "timeout" and not session.failure["permanent"]
    errors = session.log.of_type("error")
    assert [e.payload["kind"] for e in errors] == ["timeout"] * 3
    failed = session.log.of_type("session_failed")[0]
    assert failed.seq > errors[-1].seq and not session.log.of_type("model_call")


def test_a_few_lost_steps_are_counted_beside_the_measures(tmp_path):
    model, calls = failing_provider("docuteam-slow-incorporator", "timeout")
    session = demo_session(None, tmp_path, incorporator=model)
    assert len(calls) == 1 and session.failure is None  # one lost step: the session goes on
    measures = session_measures(session.log)
    assert measures["steps_lost"] == 1 and measures["step_errors"] == 1
    assert measures["messages_applied"] == 0  # the one application was the lost step
    rows = study_rows(session.log)
    assert set(rows["measure"]) >= {"messages_applied", "steering_messages"}


def test_the_demo_without_the_local_extra_exits_non_zero_with_the_reason(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(hasbench.llm.llama, "model_file", lambda name: None)  # no extra
    monkeypatch.setattr(hasbench.llm.local, "_PROCESSES", {})
    monkeypatch.setattr(hasbench.llm.cache, "CACHE_DIR", tmp_path / "cache")
    out = tmp_path / "demo.jsonl"
    code = cli(["docuteam", "demo", "--backend", "local/smollm2-135m", "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 1 and printed.out == ""  # no measures
    assert "the DocuTeam session failed" in printed.err
    assert "needs the [local] extra" in printed.err and str(out) in printed.err
    log = SessionLog.read(out)
    assert log.failure["kind"] == "not_found" and log.failure["model"] == "local/smollm2-135m"
    assert cli(["study", "logs", str(out), "--out", str(tmp_path / "study.csv")]) == 1
    refused = capsys.readouterr().err
    assert "1 of 1 sessions failed" in refused and "needs the [local] extra" in refused
    assert not (tmp_path / "study.csv").exists()


def test_the_demo_command_reports_lost_steps_beside_its_measures(tmp_path, monkeypatch, capsys):
    def refuses(messages, tools):
        raise ModelError("bad_request", "the server refused the request")

    model = register_test_provider("docuteam-refusing-incorporator", refuses)
    monkeypatch.setattr(RoleModels, "all", classmethod(lambda cls, _: cls(incorporator=model)))
    monkeypatch.setattr(hasbench.llm.cache, "CACHE_DIR", tmp_path / "cache")
    out = tmp_path / "demo.jsonl"
    assert cli(["docuteam", "demo", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    measures = json.loads(printed.out)
    assert measures["steps_lost"] == 1 and measures == session_measures(SessionLog.read(out))
    assert "1 model step(s) lost to infrastructure failures" in printed.err


def test_study_logs_refuse_failed_sessions_and_name_lost_steps(tmp_path, capsys):
    down, _ = failing_provider("docuteam-study-down", "auth")
    flaky, _ = failing_provider("docuteam-study-flaky", "timeout")
    logs = []
    for number in (1, 2, 3):
        participant = f"P{number:02d}"
        lossy = {"incorporator": flaky} if number == 2 else {}
        logs.append(demo_session(None, tmp_path, participant, "DocuTeam", **lossy).log.path)
        logs.append(demo_session(None, tmp_path, participant, "Baseline").log.path)
    csv = tmp_path / "study.csv"
    assert cli(["study", "logs", *map(str, logs), "--out", str(csv)]) == 0
    note = capsys.readouterr().out
    assert "steps lost to infrastructure failures" in note and "P02_DocuTeam.jsonl: 1" in note
    meta = [line for line in csv.read_text().splitlines() if line.startswith("# steps_lost:")]
    assert len(meta) == 1 and meta[0].endswith("P02_DocuTeam.jsonl: 1")  # in the metadata

    failed = demo_session(down, tmp_path, "P03", "Baseline").log.path  # replaces P03's log
    assert cli(["study", "logs", *map(str, logs), "--out", str(tmp_path / "again.csv")]) == 1
    refused = capsys.readouterr().err
    assert f"{failed}: the moderator model {down} failed at the focus step: auth" in refused
    assert not (tmp_path / "again.csv").exists()
    with pytest.raises(FailedSessionError, match="1 of 6 sessions failed"):
        study_data(logs)


def test_the_simulated_study_lists_failed_sessions_apart(tmp_path):
    personas = load_study_personas()
    failing = personas[0].name  # P01 plays the first persona (see assign_personas)

    def user(messages, tools):
        if failing in messages[0]["content"]:
            raise ModelError("auth", "no key for this participant's model")
        return {"content": json.dumps({"action": "finish", "reasoning": "done"})}

    model = register_test_provider("docuteam-sim-partly-down", user)
    config = SimulationConfig(participants=4, budget=2, user=model, respondent="scripted")
    study = asyncio.run(simulate_study(config, tmp_path, LLMClient(cache=None, max_retries=0)))
    assert sorted((f["participant"], f["condition"]) for f in study.failed) == [
        ("P01", "Baseline"),
        ("P01", "DocuTeam"),
    ]
    assert all("participant model" in f["reason"] and "auth" in f["reason"] for f in study.failed)
    assert study.data.participants == ["P02", "P03", "P04"]
    manifest = json.loads((tmp_path / "simulation.json").read_text())
    assert manifest["failed"] == study.failed and len(manifest["design"]) == 8
    for failed in study.failed:
        assert SessionLog.read(tmp_path / failed["log"]).failure["role"] == "participant"
    assert "# left_out: P01" in (tmp_path / "study.csv").read_text()


def test_a_simulated_study_whose_engine_is_down_is_an_error(tmp_path, monkeypatch, capsys):
    model, _ = failing_provider("docuteam-sim-engine-down", "unreachable")
    monkeypatch.setattr(hasbench.llm.cache, "CACHE_DIR", tmp_path / "cache")
    code = cli(
        ["study", "simulate", "--participants", "3", "--budget", "2", "--engine", model,
         "--out", str(tmp_path / "sim"), "--figures", str(tmp_path / "figures")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "every simulated participant has a failed session" in err
    manifest = json.loads((tmp_path / "sim" / "simulation.json").read_text())
    failed = manifest["failed"]
    assert {f["participant"] for f in failed} == {"P01", "P02", "P03"}
    assert err.count(": unreachable: ") == len(failed)  # each failed session, with its reason
    assert not (tmp_path / "sim" / "study.csv").exists()
    assert not (tmp_path / "figures").exists()


def test_the_widget_says_the_session_failed():
    model, _ = failing_provider("docuteam-widget-down", "auth")
    session = Session.from_folder(
        DOCUTEAM_DATA / "workshop",
        backends=RoleModels.all(model),
        client=LLMClient(cache=None, max_retries=0),
        clock=ManualClock(),
    )

    async def main():
        widget = DocuTeamWidget(session, watch_edits=False)
        widget.act({"do": "edit", "block": "b22", "text": DEMOS["workshop"].rewrite[2]})
        await session.flush_edits()
        await widget.settle()
        return widget

    shown = asyncio.run(main()).state["failed"]
    assert "The session failed: the trigger model" in shown and "auth" in shown
    assert "gives no study data" in shown
