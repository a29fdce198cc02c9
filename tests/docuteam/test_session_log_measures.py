"""Point 8: the JSONL session log and the process measures that feed `hasbench study`."""

import asyncio
import json

import pandas as pd
import pytest
from docuteam_helpers import NETWORKING_EDIT, make_session

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
from hasbench.docuteam.log import LogError
from hasbench.docuteam.steps import RoleModels
from hasbench.docuteam.study import load_study
from hasbench.docuteam.study.data import COLUMNS
from hasbench.llm import LLMClient, register_test_provider


def demo_log(tmp_path, participant, condition, task, order):
    config = SessionConfig(
        condition=condition,
        participant=participant,
        task_name=task,
        order=order,
        simulated_user=True,
    )
    path = tmp_path / f"{participant}_{condition}.jsonl"
    session = Session.from_folder(
        DOCUTEAM_DATA / task, config=config, clock=ManualClock(), log_path=path
    )
    asyncio.run(run_demo(session, DEMOS[task]))
    return path


def test_the_log_records_every_kind_of_event_with_a_header(tmp_path):
    path = demo_log(tmp_path, "P01", "DocuTeam", "workshop", 1)
    log = SessionLog.read(path)
    assert log.header.condition == "DocuTeam" and log.header.participant == "P01"
    assert log.header.backends["moderator"] == "scripted:docuteam"
    assert "moderator_system" in log.header.prompt_hashes
    assert len(log.header.document["blocks"]) == 25 and len(log.header.agents) == 4
    types = {e.type for e in log.events}
    assert types >= {
        "edit", "trigger", "discussion_opened", "focus", "moderator", "message", "clarification",
        "steering", "status", "memory", "summary", "bubble", "application",
    }  # fmt: skip
    assert [e.seq for e in log.events] == list(range(1, len(log.events) + 1))
    assert all(line.startswith('{"') for line in path.read_text().splitlines())
    frame = log.to_dataframe()
    assert len(frame) == len(log.events) and {"type", "payload", "prompt_tokens"} <= set(
        frame.columns
    )


def test_model_calls_are_logged_with_their_tokens():
    reply = json.dumps({"trivial": True, "goal": None, "interpretation": None})
    model = register_test_provider("docuteam-reader", lambda m, t: {"content": reply})
    session = make_session(backends=RoleModels(trigger=model), client=LLMClient(cache=None))
    session.edit("b22", NETWORKING_EDIT)
    asyncio.run(session.flush_edits())
    call = session.log.of_type("model_call")[0]
    assert call.payload["step"] == "read_edit" and call.payload["model"] == model
    assert call.usage.prompt_tokens > 0 and call.usage.completion_tokens > 0
    assert session_measures(session.log)["model_calls"] == 1


def test_bad_logs_name_the_file_and_line(tmp_path):
    path = demo_log(tmp_path, "P01", "DocuTeam", "workshop", 1)
    lines = path.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], lines[1], "{not json"]) + "\n")
    with pytest.raises(LogError, match=r"broken\.jsonl: line 3"):
        SessionLog.read(broken)
    broken.write_text("\n".join([lines[0], lines[2]]) + "\n")
    with pytest.raises(LogError, match="seq 2 out of order"):
        SessionLog.read(broken)


def test_measures_count_what_the_user_and_agents_did():
    session = make_session(auto_run=False)

    async def main():
        session.edit(
            "b3",
            "A one-day workshop for about 45 graduate students and postdocs from three labs, "
            "on campus in early May.",
        )
        d = await session.start_discussion(["budget", "program"], "evaluation", ("b8", "b10"))
        await session.post(d.id, "Can we drop the printed booklets?")
        await session.post(d.id, "And the name badges too?")
        session.set_mode(d.id, "discussion")
        e = await session.start_discussion(["attendee", "logistics"], "idea", "b22")
        first, second = d.messages[0], e.messages[0]
        await session.apply_message(d.id, first.id, "b10", placement="after")
        await session.apply_message(e.id, second.id, "b21", placement="after")
        session.delete("b25")
        await session.flush_edits()

    asyncio.run(main())
    measures = session_measures(session.log)
    inserted = [b for b in session.document.blocks if b.id in ("b26", "b27")]
    assert measures["steering_messages"] == 2 and measures["steering_actions"] == 1
    assert measures["messages_applied"] == 2
    assert (measures["user_discussions"], measures["evaluation_mode"], measures["idea_mode"]) == (
        2,
        1,
        1,
    )
    # 45/40 and May/April with early/late (3 words) + the two inserted blocks + the
    # deleted to-do (5 words)
    expected = 3 + sum(len(b.text.split()) for b in inserted) + 5
    assert measures["draft_word_changes"] == expected


def test_study_rows_are_in_the_study_schema():
    session = make_session(participant="P07", task_name="workshop", order=2)
    rows = study_rows(session.log)
    assert list(rows.columns) == list(COLUMNS)
    assert set(rows["measure_group"]) == {"interaction"} and set(rows["scale"]) == {"count"}
    assert (
        rows[["participant", "condition", "order", "task"]].drop_duplicates().values.tolist()
    ) == [["P07", "DocuTeam", "2", "workshop"]]
    assert {
        "steering_messages",
        "draft_word_changes",
        "messages_applied",
        "agent_discussions",
    } <= set(rows["measure"])
    with pytest.raises(ValueError, match="participant"):
        study_rows(make_session().log)


@pytest.mark.slow  # the study analysis with its power simulation, a few seconds
def test_session_logs_feed_the_study_analysis(tmp_path, capsys):
    logs = []
    for number, first in zip((1, 2, 3), ("DocuTeam", "Baseline", "DocuTeam"), strict=True):
        second = "Baseline" if first == "DocuTeam" else "DocuTeam"
        participant = f"P{number:02d}"
        logs.append(demo_log(tmp_path, participant, first, "workshop", 1))
        logs.append(demo_log(tmp_path, participant, second, "sports_day", 2))
    assert study_data(logs).participants == ["P01", "P02", "P03"]

    out = tmp_path / "study.csv"
    assert cli(["study", "logs", *map(str, logs), "--out", str(out)]) == 0
    loaded = load_study(out)
    assert loaded.participants == ["P01", "P02", "P03"] and loaded.synthetic  # a scripted user
    assert cli(["study", "analyze", str(out), "--out", str(tmp_path / "figures")]) == 0
    results = pd.read_csv(tmp_path / "figures" / "results_raw.csv", comment="#")
    results = results.set_index("measure")
    row = results.loc["agent_discussions"]
    assert row["DocuTeam_mean"] == 1 and row["Baseline_mean"] == 0  # never in Baseline
    assert (tmp_path / "figures" / "table2.csv").exists()

    assert cli(["study", "logs", str(logs[0]), "--out", str(out)]) == 1
    assert "unpaired" in capsys.readouterr().err


def test_the_demo_command_writes_a_log_and_prints_measures(tmp_path, capsys):
    out = tmp_path / "demo.jsonl"
    assert cli(["docuteam", "demo", "--task", "sports_day", "--out", str(out)]) == 0
    measures = json.loads(capsys.readouterr().out)
    log = SessionLog.read(out)
    assert measures == session_measures(log) and log.header.config["simulated_user"]
    assert measures["agent_discussions"] == 1 and measures["messages_applied"] == 1
