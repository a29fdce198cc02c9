"""Model steps: prompts for every step, validated JSON, one retry, recorded errors, cache."""

import asyncio
import json

import pytest
from docuteam_helpers import NETWORKING_EDIT, make_session

from hasbench.docuteam import schemas as s
from hasbench.docuteam.document import Block
from hasbench.docuteam.steps import PROMPT_FOLDER, STEPS, RoleModels, StepRunner
from hasbench.llm import LLMClient, ModelError, ResponseCache, register_test_provider
from hasbench.prompts import prompt_hashes

AGENTS = [
    s.PublicProfile(
        id="budget", name="Bora", role="Budget keeper", stance="Spend less.", expertise=["budget"]
    ),
    s.PublicProfile(
        id="attendee", name="Mina", role="Advocate", stance="Include all.", expertise=["groups"]
    ),
]
SCOPE = s.ScopeView(
    section="Budget", blocks=[Block(id="b9", type="table_row", text="Lunch | 900,000 KRW")]
)
MODERATOR_INPUT = s.ModeratorInput(
    task="Plan a workshop.",
    mode="discussion",
    scope=SCOPE,
    focus="Cut lunch costs.",
    agents=AGENTS,
    agent_turns=0,
    messages=[],
    dialog_state=s.DialogState(),
    asked_user=False,
)
SPEAK = {
    "reasoning": "Nobody has spoken.",
    "dialog_state": {
        "stage": "position_statement",
        "progress_summary": "",
        "agents_spoken": [],
        "key_points": [],
    },
    "decision": "speak",
    "next_speaker_id": "budget",
    "speaking_direction": "State your priority for lunch.",
}


def sample_inputs():
    """One realistic input per step (built by a scripted session run)."""
    session = make_session()
    seen = {}
    original = session._state.steps.run

    async def spy(name, data, discussion=None):
        seen.setdefault(name, data)
        return await original(name, data, discussion)

    session._state.steps.run = spy

    async def main():
        session.edit("b22", NETWORKING_EDIT)
        await session.flush_edits()
        await session.settle()
        d = session.discussions["d1"]
        await session.answer(d.id, 1)
        message = next(m for m in d.messages if m.kind == "utterance")
        await session.apply_message(d.id, message.id, "b22")

    asyncio.run(main())
    return seen


def test_every_step_has_prompts_that_render_without_leftover_placeholders():
    inputs = sample_inputs()
    assert set(inputs) == set(STEPS)
    for name, data in inputs.items():
        system, user = STEPS[name].messages(data)
        assert system["role"] == "system" and user["role"] == "user"
        for message in (system, user):
            assert "$" not in message["content"], name
            assert message["content"].strip()
    hashes = prompt_hashes(PROMPT_FOLDER)
    assert {f"{n}_system" for n in STEPS} | {f"{n}_user" for n in STEPS} <= set(hashes)


def test_prompts_show_the_inputs_a_model_needs():
    system, user = STEPS["moderator"].messages(MODERATOR_INPUT)
    assert "position_statement" in system["content"]  # the mode's stages
    assert (
        "budget: Bora, Budget keeper" in user["content"] and "Cut lunch costs." in user["content"]
    )


def run(runner, name, data):
    events = []
    runner.record = lambda type, payload, discussion=None, usage=None: events.append(
        (type, payload, usage)
    )
    return asyncio.run(runner.run(name, data, "d1")), events


def replies(*contents):
    calls = []

    def respond(messages, tools):
        calls.append(messages)
        return {"content": contents[min(len(calls), len(contents)) - 1]}

    return respond, calls


def test_valid_json_is_parsed_and_the_call_recorded_with_tokens():
    respond, _ = replies(json.dumps(SPEAK))
    model = register_test_provider("docuteam-valid", respond)
    runner = StepRunner(RoleModels(moderator=model), LLMClient(cache=None), None)
    out, events = run(runner, "moderator", MODERATOR_INPUT)
    assert out.decision == "speak" and out.next_speaker_id == "budget"
    assert [e[0] for e in events] == ["model_call"]
    assert events[0][1]["step"] == "moderator" and events[0][2].prompt_tokens > 0


def test_an_invalid_reply_is_retried_once_with_the_problem_stated():
    respond, calls = replies("not json", "```json\n" + json.dumps(SPEAK) + "\n```")
    model = register_test_provider("docuteam-retry", respond)
    runner = StepRunner(RoleModels(moderator=model), LLMClient(cache=None), None)
    out, events = run(runner, "moderator", MODERATOR_INPUT)
    assert out.next_speaker_id == "budget"
    assert [e[0] for e in events] == ["model_call", "model_call"]
    assert "cannot be used" in calls[1][-1]["content"] and calls[1][-2]["content"] == "not json"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("{}", "not a valid moderator object"),
        (json.dumps({**SPEAK, "next_speaker_id": "nobody"}), "is not one of budget, attendee"),
        (json.dumps({**SPEAK, "decision": "converged"}), "must be speak"),
    ],
)
def test_a_second_invalid_reply_is_an_error_and_no_output(reply, problem):
    respond, calls = replies(reply)
    model = register_test_provider("docuteam-invalid", respond)
    runner = StepRunner(RoleModels(moderator=model), LLMClient(cache=None), None)
    out, events = run(runner, "moderator", MODERATOR_INPUT)
    assert out is None and len(calls) == 2
    kind, payload, _ = events[-1]
    assert (
        kind == "error" and payload["error_type"] == "invalid_output" and payload["attempts"] == 2
    )
    assert problem in payload["message"] and payload["raw"] == reply


def test_a_model_failure_is_recorded_not_retried_by_the_step():
    def respond(messages, tools):
        raise ModelError("auth", "no key")

    model = register_test_provider("docuteam-down", respond)
    runner = StepRunner(RoleModels(moderator=model), LLMClient(cache=None, max_retries=0), None)
    out, events = run(runner, "moderator", MODERATOR_INPUT)
    assert out is None
    error, failed = events  # a missing key fails the session at once (see test_failures.py)
    assert (error[0], error[1]["error_type"], error[1]["kind"]) == (
        "error",
        "model_failure",
        "auth",
    )
    assert failed[0] == "session_failed" and failed[1]["permanent"]


def test_responses_are_cached(tmp_path):
    respond, calls = replies(json.dumps(SPEAK))
    model = register_test_provider("docuteam-cached", respond)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for _ in range(2):
        out, events = run(
            StepRunner(RoleModels(moderator=model), LLMClient(cache=cache), None),
            "moderator",
            MODERATOR_INPUT,
        )
        assert out.next_speaker_id == "budget"
    assert len(calls) == 1 and events[0][1]["cached"] is True


def test_a_model_backend_needs_a_client():
    with pytest.raises(ValueError, match="LLMClient"):
        StepRunner(RoleModels.all("openai/gpt-4o-mini"), None, None)
    with pytest.raises(ValueError, match="unknown scripted backend"):
        RoleModels(moderator="scripted:oracle")


def test_moderator_ask_user_needs_a_question_and_two_different_options():
    data = MODERATOR_INPUT.model_copy(update={"agent_turns": 5})
    ask = {**SPEAK, "decision": "ask_user", "question_for_user": "How many people?"}
    with pytest.raises(s.StepOutputError, match="two different"):
        s.ModeratorOutput.model_validate(
            {**ask, "possible_answer_1": "30-50", "possible_answer_2": "30-50"}
        ).check(data)
    s.ModeratorOutput.model_validate(
        {**ask, "possible_answer_1": "30-50", "possible_answer_2": "50+"}
    ).check(data)


def test_utterances_are_two_sentences_that_do_not_repeat():
    earlier = s.Message(
        id="d1-m1",
        author="budget",
        author_name="Bora",
        kind="utterance",
        text="Cut the buffet. Order sandwiches instead.",
    )
    data = s.UtteranceInput(
        task="t",
        mode="idea",
        focus="f",
        scope=SCOPE,
        agent=AGENTS[1],
        memory=[],
        elsewhere=[],
        direction="d",
        messages=[earlier],
    )
    s.UtteranceOutput(
        act="CLAIM", utterance="Let people pick a lunch box. It is cheap and quick."
    ).check(data)
    with pytest.raises(s.StepOutputError, match="exactly two sentences, not 1"):
        s.UtteranceOutput(act="CLAIM", utterance="Let people pick a lunch box.").check(data)
    with pytest.raises(s.StepOutputError, match="repeats"):
        s.UtteranceOutput(
            act="SUPPORT", utterance="Cut the buffet! Order sandwiches instead."
        ).check(data)


def test_summaries_link_only_to_messages_that_exist_and_cover_each_speaker():
    m = s.Message(
        id="d1-m1", author="budget", author_name="Bora", kind="utterance", text="x. y.", act="ISSUE"
    )
    data = s.SummaryInput(
        mode="evaluation", focus="f", agents=AGENTS, speakers=["budget"], messages=[m]
    )
    good = s.AgentEvaluation(
        agent_id="budget", evaluation="too costly", suggestion="sandwiches", message_id="d1-m1"
    )
    s.EvaluationSummary(evaluations=[good]).check(data)
    with pytest.raises(s.StepOutputError, match="each speaker once"):
        s.EvaluationSummary(evaluations=[good, good]).check(data)
    with pytest.raises(s.StepOutputError, match="unknown message id"):
        s.EvaluationSummary(evaluations=[good.model_copy(update={"message_id": "d1-m9"})]).check(
            data
        )
    with pytest.raises(s.StepOutputError, match="exactly one sentence"):
        s.BubbleOutput(sentence="One. Two.").check(
            s.BubbleInput(mode="idea", focus="f", messages=[m])
        )


def test_agent_selection_and_need_scores_are_bounded():
    data = s.SelectInput(goal="g", interpretation="i", agents=AGENTS)
    with pytest.raises(s.StepOutputError, match="between 2 and 2"):
        s.SelectOutput(agents=[s.Selection(id="budget", reason="r")]).check(data)
    with pytest.raises(s.StepOutputError, match="unknown agent"):
        s.SelectOutput(
            agents=[s.Selection(id="budget", reason="r"), s.Selection(id="x", reason="r")]
        ).check(data)
    with pytest.raises(ValueError):
        s.NeedOutput(idea=1.2, discussion=0, evaluation=0, reaction="Budget!")
