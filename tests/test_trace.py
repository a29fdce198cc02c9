"""Trace model: JSONL round trip, errors that name file and line, the DataFrame view."""

import pytest

from hasbench.trace import Termination, Trace, TraceError, TraceHeader, Usage


def sample() -> Trace:
    trace = Trace(
        header=TraceHeader(
            scenario_id="mock_A_001", scenario_hash="ab" * 8, domain="mock", pattern="A",
            setting={"agency": "A3", "channels": "full"}, backends={"agent": "scripted:oracle"},
            seed=7, package_version="0.1.0", participants={"agent_0": "agent", "user_0": "human"},
        )
    )  # fmt: skip
    trace.append(
        step=1, actor="agent_0", type="channel_request", target="user_0",
        channel="clarification", initiator="agent",
        payload={"request_id": "clar-0001", "form": "question", "content": "Your email?"},
    )  # fmt: skip
    trace.append(
        step=1, actor="user_0", type="channel_response", target="agent_0",
        channel="clarification", initiator="agent",
        payload={"request_id": "clar-0001", "form": "question", "content": "a@b.org, ünï"},
    )  # fmt: skip
    trace.append(
        step=2, actor="agent_0", type="model_call",
        payload={"model": "test/x", "role": "agent", "cached": False, "cost": None},
        usage=Usage(prompt_tokens=12, completion_tokens=3),
    )  # fmt: skip
    trace.termination = Termination(reason="agent_done", step=3, final_state_hash="f" * 64)
    return trace


def test_jsonl_round_trip_is_exact_and_byte_stable(tmp_path):
    trace = sample()
    path = trace.write(tmp_path / "t.jsonl")
    again = Trace.read(path)
    assert again == trace
    assert again.to_jsonl() == path.read_text(encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line.split('"kind":"')[1].split('"')[0] for line in lines] == [
        "header", "event", "event", "event", "termination",
    ]  # fmt: skip


def test_sequence_numbers_follow_append_order():
    assert [e.seq for e in sample().events] == [0, 1, 2]


def test_dataframe_has_one_row_per_event_with_kinds_and_tokens():
    frame = sample().to_dataframe()
    assert list(frame["type"]) == ["channel_request", "channel_response", "model_call"]
    assert list(frame["actor_kind"]) == ["agent", "human", "agent"]
    assert frame["prompt_tokens"].sum() == 12 and frame["completion_tokens"].sum() == 3
    assert frame.loc[0, "payload"]["request_id"] == "clar-0001"


def test_unknown_event_type_is_an_error_naming_the_line(tmp_path):
    text = sample().to_jsonl().replace('"type":"model_call"', '"type":"telepathy"')
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TraceError, match=r"bad\.jsonl: line 4: "):
        Trace.read(path)


def test_missing_header_and_broken_json_are_errors():
    with pytest.raises(TraceError, match="no header line"):
        Trace.from_jsonl(sample().to_jsonl().split("\n", 1)[1], source="x.jsonl")
    with pytest.raises(TraceError, match="x.jsonl: line 1: "):
        Trace.from_jsonl("{not json", source="x.jsonl")


def test_unset_optional_fields_are_left_out_of_the_file_and_set_ones_kept():
    import json

    trace = sample()
    trace.append(
        step=3, actor="agent_0", type="tool_call",
        payload={"call_id": "c1", "name": "get_user", "arguments": {"id": 1}},
    )  # fmt: skip
    trace.append(
        step=3, actor="agent_0", type="tool_call", target="user_0",
        payload={"call_id": "c2", "name": "refund", "unauthorized": False, "risk": "high"},
    )  # fmt: skip
    trace.append(step=4, actor="agent_0", type="finish", payload={"deliverable": "done"})
    lines = [json.loads(line) for line in trace.to_jsonl().splitlines()]
    header, request, response, call, plain, flagged, finish, end = lines
    assert "endpoints" not in header and "counterparties" not in header
    assert "environment" not in header and "people" not in header  # empty: left out too
    assert request["target"] == "user_0" and "usage" not in request
    assert "topics" not in request["payload"] and "action" not in request["payload"]
    assert "decision" not in response["payload"] and "info" not in response["payload"]
    assert call["usage"] == {"prompt_tokens": 12, "completion_tokens": 3}
    assert call["payload"] == {"model": "test/x", "role": "agent", "cached": False, "cost": None}
    assert "target" not in plain and "unauthorized" not in plain["payload"]
    assert plain["payload"]["authorization"] is None  # not optional: kept as null
    assert flagged["target"] == "user_0" and flagged["payload"]["unauthorized"] is False
    assert finish["payload"] == {"deliverable": "done"}
    assert end["kind"] == "termination" and end["detail"] is None
    shown = TraceHeader(
        **{
            **trace.header.model_dump(),
            "environment": {"sandbox": "bwrap"},
            "people": {"user_0": "human:notebook"},
            "counterparties": ["b"],
        }
    )
    dumped = shown.model_dump(mode="json")  # fmt: skip
    assert dumped["environment"] == {"sandbox": "bwrap"} and dumped["counterparties"] == ["b"]
    assert dumped["people"] == {"user_0": "human:notebook"} and "endpoints" not in dumped
