import json

from judge_log_helpers import sample_trace

from hasbench.transcript import excerpt, parse_log, transcript


def test_excerpt_marks_the_focal_event_and_adds_reply_and_risk_facts():
    lines = [json.loads(line) for line in excerpt(sample_trace(), 2, window=1).splitlines()]
    assert [r["seq"] for r in lines] == [1, 2, 3]
    assert [r.get("focus", False) for r in lines] == [False, True, False]
    assert lines[0]["in_reply_to"] == "user"  # the agent answers the user's opening message
    control = json.loads(excerpt(sample_trace(), 6, window=0))
    assert control["risk"] == "none"  # from the mock domain's tool spec
    assert len(transcript(sample_trace()).splitlines()) == 8


def test_parse_log_reads_the_log_back_and_refuses_other_text():
    log = transcript(sample_trace())
    records = parse_log(log)
    assert [r["seq"] for r in records] == list(range(8))
    assert records[0] == {
        "seq": 0, "step": 0, "actor": "user", "actor_kind": "human", "type": "message",
        "target": "agent", "text": "My account is locked.", "in_reply_to": None,
    }  # fmt: skip
    assert parse_log("agent: hello") is None  # not JSON
    assert parse_log('["a list"]') is None  # not an event object
    assert parse_log("\n") is None  # nothing
