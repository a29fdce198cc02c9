"""Issue 17, point 4: questionnaires answered by the persona from its session."""

import asyncio
import json
from dataclasses import replace

from test_simulated_user import PERSONAS, play

from hasbench.docuteam.simulation.survey import (
    ITEMS,
    Experience,
    answer_questionnaire,
    scripted_answers,
    session_digest,
)
from hasbench.docuteam.study.data import KNOWN_MEASURES
from hasbench.llm import LLMClient, register_test_provider


def test_the_items_are_the_studys_survey_and_nasa_tlx_measures():
    known = {m.name for m in KNOWN_MEASURES.values() if m.group in ("survey", "nasa_tlx")}
    assert set(ITEMS) == known and len(ITEMS) == 15
    assert "physical" not in " ".join(statement for _, statement in ITEMS.values()).lower()


def test_the_experience_is_read_from_the_session_and_step_logs():
    session, log = play("seasoned_lead")
    x = Experience.of(session.log, log)
    actions = [st["action"]["action"] for st in log.steps if st["action"]]
    assert x.steps_used == len(log.steps) and x.budget == 12
    assert x.applied == actions.count("apply") == len(session.log.of_type("application"))
    assert x.posts == actions.count("post") and x.questions_answered == actions.count("answer")
    assert x.agent_discussions >= 1 and x.open_before == 2
    assert x.agent_turns == sum(
        1 for e in session.log.of_type("message") if e.payload["kind"] == "utterance"
    )


def test_scripted_answers_follow_the_documented_rules():
    session, log = play("eager_novice")
    x = Experience.of(session.log, log)
    persona = PERSONAS["eager_novice"]
    answers = scripted_answers(x, persona).answers
    assert set(answers) == set(ITEMS) and all(1 <= a <= 7 for a in answers.values())
    t = persona.trust
    assert answers["use_again"] == round(
        min(7, max(1, 4 + 2 * (t - 0.5) + (x.applied >= 2) - (x.failed_steps >= 2)))
    )
    assert answers["effort"] == round(min(7, max(1, 2 + 4 * x.own_actions / x.budget)))
    # More agent activity: the agents seem more aware of the participant.
    quiet = replace(x, agent_discussions=0, reactions=0)
    busy = replace(x, agent_discussions=2, reactions=1)
    assert scripted_answers(busy, persona).answers["ai_aware_of_me"] == 6
    assert scripted_answers(quiet, persona).answers["ai_aware_of_me"] == 3
    # A less trusting persona finds the agents more of a tool.
    sceptic = PERSONAS["sceptical_expert"]
    assert (
        scripted_answers(x, sceptic).answers["tool_not_partner"]
        > scripted_answers(x, persona).answers["tool_not_partner"]
    )


def test_a_model_respondent_answers_as_the_persona_from_a_digest_of_its_session():
    seen = []

    def respond(messages, tools):
        seen.append(messages)
        return {"content": json.dumps({"answers": dict.fromkeys(ITEMS, 5), "comment": "Busy."})}

    model = register_test_provider("docuteam-survey", respond)
    session, log = play("quiet_delegator")
    persona = PERSONAS["quiet_delegator"]
    answered = asyncio.run(
        answer_questionnaire(model, persona, session.log, log, LLMClient(cache=None))
    )
    assert answered.answers == dict.fromkeys(ITEMS, 5) and answered.comment == "Busy."
    system, user = seen[0][0]["content"], seen[0][1]["content"]
    assert "Quiet delegator" in system and "The agents follow the document" in system
    assert session_digest(session.log, log) in user and "- easy_to_apply:" in user


def test_a_model_respondent_that_skips_items_leaves_the_answers_missing():
    seen = []

    def short(messages, tools):
        seen.append(messages)
        return {"content": json.dumps({"answers": {"effort": 3}})}

    model = register_test_provider("docuteam-survey-short", short)
    session, log = play("quiet_delegator", condition="Baseline")
    answered = asyncio.run(
        answer_questionnaire(
            model, PERSONAS["quiet_delegator"], session.log, log, LLMClient(cache=None)
        )
    )
    assert answered.answers == dict.fromkeys(ITEMS) and "missing: " in answered.missing_reason
    assert len(seen) == 2 and "You are using the side-panel chat" in seen[0][0]["content"]
