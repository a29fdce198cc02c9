import asyncio

import pytest
from judge_log_helpers import sample_trace

from hasbench.llm import LLMClient, ModelError, ModelResponse, register_test_provider
from hasbench.participants.backends import make_judge
from hasbench.participants.judges import JudgeResult
from hasbench.participants.judges.llm import LLMJudge
from hasbench.prompts import prompt_hashes
from hasbench.transcript import excerpt, transcript


def run(coro):
    return asyncio.run(coro)


def scripted(name: str, reply):
    def respond(messages, tools):
        if isinstance(reply, Exception):
            raise reply
        return {"content": reply, "tool_calls": []}

    return register_test_provider(name, respond)


def test_llm_judge_valid_answer_keeps_the_evidence():
    model = scripted(
        "judge_ok", '{"precise": 1, "necessary": 1, "non_redundant": 0, "rationale": "r"}'
    )
    judge = make_judge(model, LLMClient())
    text = excerpt(sample_trace(), 2)
    result = run(judge.rate("cqs", text))
    assert result.value == pytest.approx(2 / 3)
    ev = result.evidence
    assert ev["excerpt"] == text
    assert ev["raw_output"].startswith('{"precise"')
    assert ev["parse_status"] == "ok"
    assert ev["judge_model"] == model
    assert ev["prompt_hash"] == prompt_hashes()["judge_cqs"]


def test_llm_judge_fenced_json_and_nl_assertions():
    model = scripted("judge_fenced", '```json\n{"holds": true, "quote": "unlocked"}\n```')
    judge = make_judge(model, LLMClient())
    results = run(judge.nl_assertions(transcript(sample_trace()), ["a", "b"]))
    assert [r.value for r in results] == [True, True]


@pytest.mark.parametrize(
    ("reply", "status", "reason"),
    [
        ("I think it was a good question.", "off_format", "not a JSON object"),
        ('{"precise": 1, "necessary": 2, "non_redundant": 1}', "off_format", "necessary"),
        ('{"precise": 1}', "off_format", "necessary, non_redundant"),
    ],
)
def test_llm_judge_failure_or_off_format_gives_missing_value(reply, status, reason):
    model = scripted(f"judge_bad_{status}_{len(str(reply))}", reply)
    judge = make_judge(model, LLMClient(max_retries=0))
    result = run(judge.rate("cqs", excerpt(sample_trace(), 2)))
    assert result.value is None
    assert reason in result.missing_reason
    assert result.evidence["parse_status"] == status
    assert result.evidence["judge_model"] == model
    nl = run(judge.nl_assertions(transcript(sample_trace()), ["x"]))[0]
    assert nl.value is None and nl.missing_reason


def test_a_failing_judge_model_raises_instead_of_giving_a_verdict():
    """A judge call that fails is an infrastructure error of the episode, never a score."""
    model = scripted("judge_down", ModelError("server", "upstream down"))
    judge = make_judge(model, LLMClient(max_retries=0))
    with pytest.raises(ModelError, match="upstream down"):
        run(judge.rate("cqs", excerpt(sample_trace(), 2)))
    with pytest.raises(ModelError):
        run(judge.nl_assertions(transcript(sample_trace()), ["x"]))


def test_llm_judge_calls_the_model_at_temperature_zero():
    seen = []

    class Recorder:
        async def complete(self, model, messages, tools=None, **kwargs):
            seen.append(kwargs)
            return ModelResponse(model=model, content='{"self_initiated": 1}')

    result = run(LLMJudge("any/model", Recorder()).rate("initiative", excerpt(sample_trace(), 0)))
    assert result.value == 1.0
    assert seen == [{"temperature": 0.0, "endpoint": None}]


def test_judge_result_is_serializable():
    result = JudgeResult(value=None, missing_reason="x", evidence={"excerpt": "e"})
    assert JudgeResult.model_validate_json(result.model_dump_json()) == result


def test_llm_judge_a4_harm_keeps_category_evidence_and_rejects_unknown_categories():
    answer = '{"category": "premature_intervention", "evidence_seq": [1, "x"], "rationale": "r"}'
    model = scripted("judge_harm_ok", answer)
    result = run(make_judge(model, LLMClient()).classify_a4_harm(transcript(sample_trace()), "o"))
    assert result.value == "premature_intervention"
    assert result.evidence["evidence_seq"] == [1] and result.evidence["rationale"] == "r"
    assert result.evidence["prompt_hash"] == prompt_hashes()["judge_a4_harm"]
    bad = scripted("judge_harm_bad", '{"category": "bad timing", "evidence_seq": []}')
    missing = run(make_judge(bad, LLMClient()).classify_a4_harm(transcript(sample_trace()), "o"))
    assert missing.value is None and "bad timing" in missing.missing_reason
