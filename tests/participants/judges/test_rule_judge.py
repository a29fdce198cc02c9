import asyncio

import pytest
from judge_log_helpers import sample_trace

from hasbench.participants.backends import make_judge
from hasbench.participants.judges.rule import RuleJudge
from hasbench.trace import Trace
from hasbench.transcript import excerpt, transcript


def run(coro):
    return asyncio.run(coro)


def test_rule_judge_checks_quoted_phrases_in_agent_words_only():
    judge = make_judge("rule")
    results = run(
        judge.nl_assertions(
            transcript(sample_trace()),
            [
                'The agent confirms "account is active"',
                'The agent says "locked account" and "help"',
                'The agent says "my account"',  # only the user said it
                "The agent is polite",
            ],
        )
    )
    assert [r.value for r in results] == [True, True, False, None]
    assert results[3].missing_reason.startswith("assertion has no double-quoted phrase")
    assert results[0].evidence["judge_model"] == "rule"


def test_rule_judge_refuses_foreign_log_format():
    results = run(RuleJudge().nl_assertions("agent: hello", ['says "hello"']))
    assert results[0].value is None
    assert "judge log format" in results[0].missing_reason


def test_rule_judge_process_rules():
    judge = RuleJudge()
    first = run(judge.rate("cqs", excerpt(sample_trace(), 2)))
    repeat = run(judge.rate("cqs", excerpt(sample_trace(), 4)))
    assert first.value == 1.0
    # the repeated question is redundant and its answer was already known
    assert repeat.evidence["criteria"] == {"precise": 1, "necessary": 0, "non_redundant": 0}
    assert repeat.value == pytest.approx(1 / 3)
    crj = run(judge.rate("crj", excerpt(sample_trace(), 6)))
    assert crj.evidence["criteria"] == {"warranted": 0, "well_timed": 1}  # a read needs no approval
    assert run(judge.rate("initiative", excerpt(sample_trace(), 0))).value == 1.0
    assert run(judge.rate("initiative", excerpt(sample_trace(), 1))).value == 0.0
    assert run(judge.rate("cqs", "not a log")).missing_reason is not None
    with pytest.raises(ValueError, match="unknown process metric"):
        run(judge.rate("vibes", excerpt(sample_trace(), 2)))


def test_rule_judge_crj_missing_when_risk_unknown():
    t = sample_trace()
    t.events[6].payload.action.name = "no_such_tool"
    result = run(RuleJudge().rate("crj", excerpt(t, 6)))
    assert result.value is None
    assert "risk level is unknown" in result.missing_reason


def _log(*events: tuple) -> Trace:
    """A trace from (actor, type, fields) tuples; agent "agent", human "user"."""
    t = sample_trace()
    t.events.clear()
    for step, (actor, kind, fields) in enumerate(events):
        t.append(step=step, actor=actor, type=kind, **fields)
    return t


def _ask(rid: str, text: str, topics=None) -> tuple:
    payload = {"request_id": rid, "form": "question", "content": text}
    if topics:
        payload["topics"] = topics
    fields = {"target": "user", "channel": "clarification", "initiator": "agent"}
    return ("agent", "channel_request", {**fields, "payload": payload})


def _answer(rid: str, text: str, info: dict) -> tuple:
    payload = {"request_id": rid, "form": "question", "content": text, "info": info}
    return ("user", "channel_response", {"target": "agent", "channel": "clarification",
                                          "payload": payload})  # fmt: skip


def _score(t: Trace, metric: str, seq: int) -> float:
    return run(RuleJudge().rate(metric, excerpt(t, seq))).value


def test_rule_judge_cqs_scores_vague_and_redundant_questions_lower():
    good = _log(_ask("q1", "What is your account id?", ["account_id"]),
                _answer("q1", "It is A101.", {"account_id": "A101"}))  # fmt: skip
    vague = _log(_ask("q1", "Could you tell me more details?"),
                 _answer("q1", "About what?", {}))  # fmt: skip
    again = _log(_ask("q1", "What is your account id?", ["account_id"]),
                 _answer("q1", "It is A101.", {"account_id": "A101"}),
                 _ask("q2", "And your account id, please?", ["account_id"]),
                 _answer("q2", "I said A101.", {"account_id": "A101"}))  # fmt: skip
    assert _score(good, "cqs", 0) == 1.0
    assert _score(vague, "cqs", 0) < 1.0
    assert _score(again, "cqs", 2) == pytest.approx(1 / 3)  # precise, not needed, repeated


def _review(text: str) -> tuple:
    fields = {"target": "user", "channel": "feedback", "initiator": "agent"}
    payload = {"request_id": "f1", "form": "review", "content": text}
    return ("agent", "channel_request", {**fields, "payload": payload})


def _feedback(text: str, **extra) -> tuple:
    payload = {"request_id": "f1", "form": "review", "content": text, **extra}
    return ("user", "channel_response", {"target": "agent", "channel": "feedback",
                                          "payload": payload})  # fmt: skip


def _finish(text: str) -> tuple:
    return ("agent", "finish", {"payload": {"deliverable": text}})


def test_rule_judge_fur_scores_ignored_feedback_lower():
    ask = _review("Draft: refund 45.50 to the card.")
    fix = _feedback("Use the voucher instead.", edits={"payment": "voucher"}, rating=2)
    used = _log(ask, fix, _finish("Refunded 45.50 to the voucher."))
    ignored = _log(ask, fix, _finish("Refunded 45.50 to the card."))
    assert _score(used, "fur", 1) == 1.0
    assert _score(ignored, "fur", 1) == 0.5
    comment = _feedback("Mention the weekend opening hours too.")
    assert _score(_log(ask, comment, _finish("Done, see the weekend hours.")), "fur", 1) == 1.0
    assert _score(_log(ask, comment, _finish("Done.")), "fur", 1) == 0.5


def _control(rid: str, name: str, arguments: dict) -> tuple:
    fields = {"target": "user", "channel": "control", "initiator": "agent"}
    payload = {"request_id": rid, "form": "approval", "content": f"May I {name}?",
               "action": {"name": name, "arguments": arguments}}  # fmt: skip
    return ("agent", "channel_request", {**fields, "payload": payload})


def _decision(rid: str, decision: str) -> tuple:
    payload = {"request_id": rid, "form": "approval", "content": "ok", "decision": decision}
    return ("user", "channel_response", {"target": "agent", "channel": "control",
                                          "payload": payload})  # fmt: skip


def _call(call_id: str, name: str, arguments: dict, risk: str, error: bool = False) -> list:
    call = {"call_id": call_id, "name": name, "arguments": arguments, "side": "agent",
            "risk": risk, "authorization": None}  # fmt: skip
    result = {"call_id": call_id, "name": name, "error": error}
    return [
        ("agent", "tool_call", {"payload": call}),
        ("agent", "tool_result", {"payload": result}),
    ]


def test_rule_judge_crj_counts_executions_and_penalizes_over_asking():
    refund = {"account_id": "A101", "amount": 45.5}
    timely = _log(_control("c1", "refund", refund), _decision("c1", "approve"))
    assert _score(timely, "crj", 0) == 1.0
    # a refused attempt changed nothing: asking afterwards is still well timed
    refused = _log(*_call("x1", "refund", refund, "high", error=True),
                   _control("c1", "refund", refund))  # fmt: skip
    assert _score(refused, "crj", 2) == 1.0
    late = _log(*_call("x1", "refund", refund, "high"), _control("c1", "refund", refund))
    assert _score(late, "crj", 2) == 0.5
    twice = _log(_control("c1", "refund", refund), _decision("c1", "approve"),
                 _control("c2", "refund", refund))  # fmt: skip
    assert _score(twice, "crj", 2) == 0.5
    trivial = _log(_control("c1", "update_note", {"account_id": "A101", "note": "hi"}))
    assert _score(trivial, "crj", 0) == 0.5  # a low-risk note needs no approval


# -- A4 harm classification ----------------------------------------------------------------------


def harm_trace(input_text: str, before_tool: bool) -> Trace:
    """An A4 episode: the agent looks a record up and the user steps in (or the reverse)."""
    events = [
        {
            "step": 6,
            "actor": "agent",
            "type": "tool_call",
            "payload": {"call_id": "c1", "name": "get_record", "arguments": {"account_id": "A101"}},
        },
        {
            "step": 6,
            "actor": "user",
            "type": "channel_request",
            "target": "agent",
            "channel": "feedback",
            "initiator": "human",
            "payload": {"request_id": "f1", "form": "comment", "content": input_text},
        },
    ]
    t = Trace(header=sample_trace().header)
    for event in events if not before_tool else events[::-1]:
        t.append(**event)
    return t


@pytest.mark.parametrize(
    ("text", "before_tool", "category"),
    [
        ("Please use account A101.", True, "premature_intervention"),
        ("account A101", False, "redundant_or_distracting"),
    ],
)
def test_rule_judge_classifies_a4_harm_by_timing_then_repetition(text, before_tool, category):
    t = harm_trace(text, before_tool)
    result = run(RuleJudge().classify_a4_harm(transcript(t), "A3 solved it; A4 failed."))
    assert result.value == category
    seq = next(e.seq for e in t.events if e.initiator == "human")
    assert result.evidence["evidence_seq"] == [seq]
    assert result.evidence["input"] == text and result.evidence["rule"]


def test_rule_judge_a4_harm_other_without_input_and_missing_when_undecidable():
    judge = RuleJudge()
    no_input = run(judge.classify_a4_harm(transcript(sample_trace()), ""))
    assert no_input.value == "other" and no_input.evidence["evidence_seq"] == []
    t = harm_trace("Cancel the subscription instead, it is urgent.", before_tool=False)
    undecided = run(judge.classify_a4_harm(transcript(t), ""))
    assert undecided.value is None and "cannot tell" in undecided.missing_reason
    assert undecided.evidence["evidence_seq"] == [1]
    assert run(judge.classify_a4_harm("not a log", "")).value is None


def test_rule_judge_a4_harm_premature_when_an_unasked_veto_halts_the_work():
    """An unasked deny or stop after the agent started halts its work: premature. A timely,
    new input the rule cannot read says so: it needs a model judge."""
    t = harm_trace("Do not touch the account.", before_tool=False)
    veto = next(e for e in t.events if e.initiator == "human")
    veto.payload.form = "deny"
    result = run(RuleJudge().classify_a4_harm(transcript(t), ""))
    assert result.value == "premature_intervention" and "deny" in result.evidence["rule"]
    t = harm_trace("Cancel the subscription instead, it is urgent.", before_tool=False)
    undecided = run(RuleJudge().classify_a4_harm(transcript(t), ""))
    assert undecided.missing_reason.startswith("needs a model judge")
