"""The post-task questionnaires answered by a simulated participant from its session.

The items are the study's ten post-survey statements and the five NASA-TLX dimensions
without physical demand (DocuTeam paper App. B.2, §5.1.5), all on 7 points. What the
participant experienced is read from its session log and its own step log
(:class:`Experience`); every answer is marked simulated wherever it is reported.

Two respondents:

- ``scripted``: a documented rule per item over the experience and the persona's
  expertise e, initiative i and trust t. Each answer is 4 (3 or 2 where noted) plus the
  terms below, rounded and kept within 1-7. A "[x]" term is 1 when x holds, else 0.

  ==================  ===============================================================
  expanded_thinking   3 + min(2, speakers / 2) + [agent discussions >= 1] + 2(t - 0.5)
  deepened_thinking   3 + [a Discussion or Evaluation discussion] + min(2, (posts +
                      answers) / 2) + (e - 0.5)
  use_again           4 + 2(t - 0.5) + [applied >= 2] - [failed steps >= 2]
  confidence          4 + 2(e - 0.5) + clip(open points before - after, -1, 1)
  satisfaction        4 + [applied >= 2] + clip(open points before - after, -1, 1)
                      - [failed steps >= 2]
  hard_to_engage      3 + [agent discussions >= 2] + [failed steps >= 2] + [agent
                      turns >= 20] - 2(i - 0.5)
  ai_aware_of_me      3 + min(2, agent discussions) + [agents reacted to an edit]
  aware_of_ai         4 + [at least half the discussions anchored to blocks] -
                      [discussions >= 4] + (e - 0.5)
  easy_to_apply       3 + min(2, applied) + [at least half the applications adapted]
                      - [an application failed]
  tool_not_partner    4 - min(2, agent discussions) - [the agents asked a question]
                      + 2(0.5 - t)
  mental_demand       3 + min(2, agent turns / 15) + min(1, discussions / 4) + 2(0.5 - e)
  temporal_demand     2 + 3 x steps used / step budget + [agent discussions >= 2]
  performance         4 + 2(e - 0.5) + [applied >= 2] - [failed steps >= 2]
  effort              2 + 4 x own actions / step budget
  frustration         2 + min(2, failed steps) + [a question left unanswered] + 2(0.5 - t)
  ==================  ===============================================================

- any model string: the model plays the persona, reads a digest of its session and
  answers every item; an unusable reply (after one retry) or a failed call leaves the
  answers missing, with the reason.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel, Field

from hasbench.docuteam import schemas as s
from hasbench.docuteam.log import SessionLog
from hasbench.docuteam.measures import final_document, initial_document, session_measures
from hasbench.docuteam.simulation.personas import StudyPersona
from hasbench.docuteam.simulation.rating import open_points
from hasbench.docuteam.simulation.user import PROMPT_FOLDER, UserLog
from hasbench.docuteam.steps import ask_model, parse_reply
from hasbench.docuteam.study.questionnaire import ITEMS
from hasbench.llm import LLMClient
from hasbench.prompts import render

SCRIPTED_RESPONDENT = "scripted"


@dataclass(frozen=True)
class Experience:
    """What a participant did and met in one session (from its logs)."""

    condition: str
    budget: int
    steps_used: int
    failed_steps: int
    own_actions: int
    user_discussions: int
    agent_discussions: int
    anchored_share: float
    deep_modes: int
    agent_turns: int
    speakers: int
    questions_asked: int
    questions_answered: int
    unanswered: int
    posts: int
    applied: int
    adapted_share: float
    failed_applications: int
    reactions: int
    open_before: int
    open_after: int
    word_changes: int

    @classmethod
    def of(cls, log: SessionLog, user_log: UserLog) -> Experience:
        """The experience recorded in a session log and the participant's step log."""
        measures = session_measures(log)
        opened = [e.payload for e in log.of_type("discussion_opened")]
        messages = [e.payload for e in log.of_type("message")]
        utterances = [m for m in messages if m["kind"] == "utterance"]
        asked = [e for e in log.of_type("clarification") if e.payload["action"] == "asked"]
        applications = [e.payload for e in log.of_type("application")]
        steps = user_log.steps
        acted = [
            st for st in steps if st["action"] and st["action"]["action"] not in ("wait", "finish")
        ]
        return cls(
            condition=log.header.condition,
            budget=int(user_log.header.get("budget", len(steps)) or 1),
            steps_used=len(steps),
            failed_steps=sum(not st["ok"] for st in steps),
            own_actions=sum(st["ok"] for st in acted),
            user_discussions=measures["user_discussions"],
            agent_discussions=measures["agent_discussions"],
            anchored_share=(sum(d["scope"] is not None for d in opened) / len(opened))
            if opened
            else 0.0,
            deep_modes=sum(d["mode"] in ("discussion", "evaluation") for d in opened),
            agent_turns=len(utterances),
            speakers=len({m["author"] for m in utterances}),
            questions_asked=len(asked),
            questions_answered=measures["clarifications_answered"],
            unanswered=len(asked) - measures["clarifications_answered"],
            posts=measures["steering_messages"],
            applied=measures["messages_applied"],
            adapted_share=(sum(a["adapted"] for a in applications) / len(applications))
            if applications
            else 0.0,
            failed_applications=sum(
                1 for st in acted if st["action"]["action"] == "apply" and not st["ok"]
            ),
            reactions=sum(1 for e in log.of_type("trigger") if e.payload["scores"]),
            open_before=len(open_points(initial_document(log))),
            open_after=len(open_points(final_document(log))),
            word_changes=measures["draft_word_changes"],
        )


class Questionnaire(BaseModel):
    """One participant's answers after one session (missing answers say why)."""

    respondent: str
    answers: dict[str, int | None]
    evidence: dict[str, Any] = Field(default_factory=dict)
    comment: str = ""
    missing_reason: str | None = None
    calls: list[dict[str, Any]] = Field(default_factory=list)


def _clip(value: float) -> int:
    return int(min(7, max(1, round(value))))


def scripted_answers(x: Experience, persona: StudyPersona) -> Questionnaire:
    """The rule answers of the module docstring."""
    e, i, t = persona.expertise, persona.initiative, persona.trust
    discussions = x.user_discussions + x.agent_discussions
    progress = max(-1, min(1, x.open_before - x.open_after))
    raw = {
        "expanded_thinking": 3
        + min(2, x.speakers / 2)
        + (x.agent_discussions >= 1)
        + 2 * (t - 0.5),
        "deepened_thinking": 3
        + (x.deep_modes >= 1)
        + min(2, (x.posts + x.questions_answered) / 2)
        + (e - 0.5),
        "use_again": 4 + 2 * (t - 0.5) + (x.applied >= 2) - (x.failed_steps >= 2),
        "confidence": 4 + 2 * (e - 0.5) + progress,
        "satisfaction": 4 + (x.applied >= 2) + progress - (x.failed_steps >= 2),
        "hard_to_engage": 3
        + (x.agent_discussions >= 2)
        + (x.failed_steps >= 2)
        + (x.agent_turns >= 20)
        - 2 * (i - 0.5),
        "ai_aware_of_me": 3 + min(2, x.agent_discussions) + (x.reactions >= 1),
        "aware_of_ai": 4 + (x.anchored_share >= 0.5) - (discussions >= 4) + (e - 0.5),
        "easy_to_apply": 3
        + min(2, x.applied)
        + (x.adapted_share >= 0.5)
        - (x.failed_applications >= 1),
        "tool_not_partner": 4
        - min(2, x.agent_discussions)
        - (x.questions_asked >= 1)
        + 2 * (0.5 - t),
        "mental_demand": 3 + min(2, x.agent_turns / 15) + min(1, discussions / 4) + 2 * (0.5 - e),
        "temporal_demand": 2 + 3 * x.steps_used / x.budget + (x.agent_discussions >= 2),
        "performance": 4 + 2 * (e - 0.5) + (x.applied >= 2) - (x.failed_steps >= 2),
        "effort": 2 + 4 * x.own_actions / x.budget,
        "frustration": 2 + min(2, x.failed_steps) + (x.unanswered >= 1) + 2 * (0.5 - t),
    }
    return Questionnaire(
        respondent=SCRIPTED_RESPONDENT,
        answers={item: _clip(value) for item, value in raw.items()},
        evidence={"experience": asdict(x), "persona": persona.model_dump()},
    )


def session_digest(log: SessionLog, user_log: UserLog) -> str:
    """What happened in a session, as the participant would recall it, in plain lines."""
    x = Experience.of(log, user_log)
    lines = [f"You took {x.steps_used} of your {x.budget} steps:"]
    for step in user_log.steps:
        action = step["action"]["action"] if step["action"] else "nothing"
        lines.append(f"- step {step['step']}: {action} -> {step['result']}")
    lines.append(
        f"The agents started {x.agent_discussions} discussion(s) on their own; you started "
        f"{x.user_discussions}."
    )
    for e in log.of_type("discussion_opened"):
        d = e.payload
        said = sum(
            1
            for m in log.of_type("message")
            if m.discussion == d["id"] and m.payload["kind"] == "utterance"
        )
        who = "you" if d["initiator"] == "user" else "the agents"
        bubbles = [b.payload["text"] for b in log.of_type("bubble") if b.discussion == d["id"]]
        last = f" In one line: {bubbles[-1]}" if bubbles else ""
        lines.append(
            f"- {d['id']}: {d['mode']} mode, started by {who}, {said} agent messages.{last}"
        )
    lines.append(
        f"The agents asked you {x.questions_asked} question(s); you answered "
        f"{x.questions_answered}. You wrote {x.posts} message(s) into discussions."
    )
    lines.append(
        f"You applied {x.applied} agent message(s) to your plan"
        + (f", {round(100 * x.adapted_share)}% of them rewritten to fit." if x.applied else ".")
    )
    lines.append(
        f"Open points in the plan: {x.open_before} at the start, {x.open_after} at the end; "
        f"{x.word_changes} words changed in all."
    )
    return "\n".join(lines)


class SurveyOutput(s.Strict):
    """A model's answers to the questionnaire."""

    answers: dict[str, int]
    comment: str = Field(default="", max_length=600)

    def check(self) -> None:
        """Every item answered once with a whole number from 1 to 7."""
        missing = sorted(set(ITEMS) - set(self.answers))
        unknown = sorted(set(self.answers) - set(ITEMS))
        if missing or unknown:
            raise s.StepOutputError(
                f"answer exactly the items {', '.join(ITEMS)} (missing: "
                f"{', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'})"
            )
        outside = [k for k, v in self.answers.items() if not 1 <= v <= 7]
        if outside:
            raise s.StepOutputError(f"answers outside 1-7: {', '.join(outside)}")


async def model_answers(
    model: str, client: LLMClient, persona: StudyPersona, log: SessionLog, user_log: UserLog
) -> Questionnaire:
    """A model's answers as the persona (missing answers and the reason when it fails)."""
    condition = render(f"{PROMPT_FOLDER}/condition_{log.header.condition.lower()}")
    items = "\n".join(f"- {item}: {statement}" for item, (_, statement) in ITEMS.items())
    digest = session_digest(log, user_log)
    messages = [
        {
            "role": "system",
            "content": render(
                f"{PROMPT_FOLDER}/survey_system", persona=persona.describe(), condition=condition
            ),
        },
        {
            "role": "user",
            "content": render(f"{PROMPT_FOLDER}/survey_user", session=digest, items=items),
        },
    ]
    calls: list[dict[str, Any]] = []
    failure: list[str] = []

    def parse(content: str | None) -> BaseModel:
        output = parse_reply(SurveyOutput, content, "questionnaire")
        output.check()
        return output

    output = await ask_model(
        client,
        model,
        messages,
        "questionnaire",
        SurveyOutput,
        parse,
        on_call=lambda response, attempt: calls.append(
            {"model": response.model, "attempt": attempt, "cached": response.cached}
        ),
        on_error=lambda kind, message, attempt, raw, _: failure.append(f"{kind}: {message}"),
    )
    if output is None:
        return Questionnaire(
            respondent=model,
            answers=dict.fromkeys(ITEMS),
            evidence={"digest": digest},
            missing_reason=failure[0],
            calls=calls,
        )
    return Questionnaire(
        respondent=model,
        answers=dict(output.answers),
        evidence={"digest": digest},
        comment=output.comment,
        calls=calls,
    )


async def answer_questionnaire(
    respondent: str,
    persona: StudyPersona,
    log: SessionLog,
    user_log: UserLog,
    client: LLMClient | None,
) -> Questionnaire:
    """The persona's answers after a session, by rule (``scripted``) or by a model.

    Raises:
        ValueError: a model respondent without a client.
    """
    if respondent == SCRIPTED_RESPONDENT:
        return scripted_answers(Experience.of(log, user_log), persona)
    if client is None:
        raise ValueError(f"the respondent {respondent!r} needs an LLMClient")
    return await model_answers(respondent, client, persona, log, user_log)
