import asyncio
import dataclasses

import numpy as np
import pytest

from hasbench.agency import Setting
from hasbench.channels import ActionRef, ChannelRequest
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.participants.base import ActionFacts, HumanView
from hasbench.participants.scripted import (
    PRESETS,
    PlanParams,
    ScriptedUser,
    human_needs,
    parse_agent_spec,
)
from hasbench.paths import TASKS_DIR
from hasbench.personas import get_persona
from hasbench.scenario import GoalRevision, UserSpec, load_tasks
from hasbench.simulator import Backends, Episode

EXAMPLES = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}
USER = UserSpec(
    user_id="user_0",
    goal="Refund my balance.",
    known_info={"email": "a@example.org", "amount": "30.00"},
    unknown_info=["account_id"],
)


def view(persona="mock_cooperative", asks=1, **kw):
    return HumanView(
        user_id=USER.user_id, role=USER.role, goal=USER.goal,
        task_instructions=USER.task_instructions, known_info=dict(USER.known_info),
        unknown_info=tuple(USER.unknown_info), persona=get_persona(persona), asks=asks, **kw,
    )  # fmt: skip


def ask(content, topics=(), form="question", channel="clarification", action=None):
    return ChannelRequest(
        channel=channel, request_id="x-0001", sender="agent_0", target="user_0",
        form=form, content=content, topics=list(topics), action=action,
    )  # fmt: skip


def answer(coro):
    return asyncio.run(coro)


def test_parse_agent_specs():
    assert parse_agent_spec("scripted:oracle") == PlanParams()
    assert parse_agent_spec("scripted:idle") is None
    assert parse_agent_spec("scripted:weak") == PRESETS["weak"]
    assert parse_agent_spec("scripted:agent?competence=0.9&ask=0.8") == PlanParams(
        competence=0.9, ask=0.8
    )
    for bad in ("scripted:genius", "scripted:agent?skill=1", "scripted:agent?ask=2"):
        with pytest.raises(ValueError):
            parse_agent_spec(bad)


def test_user_reveals_only_what_is_asked():
    user = ScriptedUser(np.random.default_rng(0))
    reserved = view("research_demanding_pi")  # cooperativeness 0.6: volunteers nothing
    reply = answer(user.clarify(reserved, ask("What is your email?", ["email"])))
    assert reply.info == {"email": "a@example.org"}
    assert "30.00" not in reply.content
    reply = answer(user.clarify(reserved, ask("Which email address do you use?")))
    assert reply.info == {"email": "a@example.org"}
    reply = answer(user.clarify(reserved, ask("What is the account id?", ["account_id"])))
    assert reply.info == {} and "don't know" in reply.content
    reply = answer(user.clarify(reserved, ask("How is the weather?")))
    assert reply.info == {} and not reply.refused


def test_a_topic_in_other_words_still_names_the_fact():
    """Topics are matched by word stems without filler: "how digits are grouped" asks about
    ``digit_grouping``; a topic sharing no word with a fact still gets "don't know"."""
    user = ScriptedUser(np.random.default_rng(0))
    facts = {"digit_grouping": "groups of three with commas", "amount": "30.00"}
    reserved = dataclasses.replace(view("research_demanding_pi"), known_info=facts)
    reply = answer(user.clarify(reserved, ask("How should digits be grouped?",
                                              ["how digits are grouped"])))  # fmt: skip
    assert reply.info == {"digit_grouping": "groups of three with commas"}
    reply = answer(user.clarify(reserved, ask("Which colour?", ["colour"])))
    assert reply.info == {} and "don't know" in reply.content


def test_a_forthcoming_user_volunteers_one_untold_fact():
    user = ScriptedUser(np.random.default_rng(0))  # mock_cooperative: cooperativeness 0.9
    reply = answer(user.clarify(view(), ask("What is your email?", ["email"])))
    assert reply.info == {"email": "a@example.org", "amount": "30.00"}
    assert "in case it helps: my amount is 30.00" in reply.content
    again = answer(user.clarify(view(), ask("What is your email?", ["email"])))
    assert again.info == {"email": "a@example.org"}  # nothing left untold


def test_user_asked_what_it_wants_states_its_goal():
    user = ScriptedUser(np.random.default_rng(0))
    reply = answer(
        user.clarify(view(), ask("Your email, and what do you need?", ["email", "request"]))
    )
    assert reply.info["email"] == "a@example.org"
    assert "Refund my balance." in reply.content and "don't know the request" not in reply.content
    reply = answer(user.clarify(view(), ask("Which items?", ["items"])))
    assert reply.info == {} and "Refund my balance." in reply.content


def test_impatient_user_refuses_after_repeated_questions():
    user = ScriptedUser(np.random.default_rng(0))
    first = answer(user.clarify(view("mock_impatient", asks=1), ask("Email?", ["email"])))
    assert first.info and first.content == "email: a@example.org"  # terse
    later = answer(user.clarify(view("mock_impatient", asks=3), ask("Email?", ["email"])))
    assert later.refused and later.info == {}
    patient = answer(user.clarify(view("mock_cooperative", asks=3), ask("Email?", ["email"])))
    assert not patient.refused


def test_uncooperative_user_may_withhold():
    shared = [
        bool(answer(ScriptedUser(np.random.default_rng(s)).clarify(
            view("mock_cautious"), ask("Email?", ["email"])
        )).info)
        for s in range(40)
    ]  # fmt: skip
    assert 0 < sum(shared) < 40  # cooperativeness 0.2: sometimes withheld, sometimes not
    assert all(
        answer(ScriptedUser(np.random.default_rng(s)).clarify(
            view("mock_cooperative"), ask("Email?", ["email"])
        )).info
        for s in range(10)
    )  # fmt: skip


def test_goal_revision_is_told_when_next_asked_and_reviewed():
    user = ScriptedUser(np.random.default_rng(0))
    revision = GoalRevision(at_turn=2, goal="Keep the money.", known_info={"keep": "all"})
    reply = answer(user.clarify(view(untold_revision=revision), ask("Email?", ["email"])))
    assert "Keep the money." in reply.content and reply.info["keep"] == "all"
    review = answer(user.review(view(untold_revision=revision), ask("plan", form="review")))
    assert review.edits["keep"] == "all" and review.labels == ["revise"]


def test_review_points_out_missing_known_facts():
    user = ScriptedUser(np.random.default_rng(0))
    review = answer(user.review(view(), ask("refund 30.00 to a@example.org", form="review")))
    assert review.labels == ["accept"] and review.edits is None
    review = answer(user.review(view(), ask("refund amount 10 to a@example.org", form="review")))
    assert review.edits == {"amount": "30.00"} and review.rating <= 2
    review = answer(user.review(view(), ask("refund 10 to a@example.org", form="review")))
    assert review.edits is None  # a cooperative reviewer names only gaps the draft refers to
    assertive = answer(
        user.review(view("airline_frequent_flyer"), ask("refund 10 to x", form="review"))
    )
    assert assertive.edits == {"email": "a@example.org", "amount": "30.00"}


def test_a_reviewer_wants_its_value_as_a_whole_not_inside_another_word():
    user = ScriptedUser(np.random.default_rng(0))
    reviewer = dataclasses.replace(view(), known_info={"option_name": "mode"})
    draft = "Option name: model. The model keyword picks the layout."
    review = answer(user.review(reviewer, ask(draft, form="review")))
    assert review.edits == {"option_name": "mode"}
    review = answer(user.review(reviewer, ask("Option name: mode.", form="review")))
    assert review.labels == ["accept"]


def test_control_decisions_follow_known_info_and_risk_tolerance():
    user = ScriptedUser(np.random.default_rng(0))
    high = ActionFacts(risk="high", kind="write", side="agent", known=True)
    good = ask("approve?", form="approval", channel="control",
               action=ActionRef(name="refund", arguments={"amount": 30.0}))  # fmt: skip
    wrong = ask("approve?", form="approval", channel="control",
                action=ActionRef(name="refund", arguments={"amount": 50.0}))  # fmt: skip
    assert answer(user.decide(view(), good, high)).decision == "approve"
    # risk tolerance 0.1, assertiveness 0.3: refuses; 0.05 and 0.6: halts everything
    assert answer(user.decide(view("airline_anxious_traveler"), good, high)).decision == "deny"
    assert answer(user.decide(view("mock_cautious"), good, high)).decision == "stop"
    modified = answer(user.decide(view("mock_cooperative"), wrong, high))
    assert modified.decision == "modify" and modified.arguments == {"amount": "30.00"}
    meek = view("retail_careful_shopper")  # assertiveness 0.4
    assert answer(user.decide(meek, wrong, high)).decision == "deny"
    overridden = answer(user.decide(view("airline_frequent_flyer"), wrong, high))  # 0.9
    assert overridden.decision == "override" and overridden.arguments == {"amount": "30.00"}
    execute = ask("restart please", form="execute", channel="control",
                  action=ActionRef(name="restart_device", arguments={}))  # fmt: skip
    assert answer(user.decide(view(), execute, high)).decision == "execute"


def test_human_needs_finds_facts_only_humans_hold():
    scn = EXAMPLES["mock_D_001"]
    needs = {g.action_id: human_needs(scn, g.arguments) for g in scn.evaluation_criteria.actions}
    assert [(n.user, n.key) for n in needs["1"]] == [("user_0", "email")]
    assert [(n.user, n.key) for n in needs["2"]] == [("user_1", "approved_amount")]  # 30.0
    assert [(n.user, n.key) for n in needs["3"]] == [("user_1", "approved_amount")]  # in text
    revised = human_needs(EXAMPLES["mock_F_001"], {"note": "away until the end of June."})
    assert revised[0].revision_turn == 3


def run(task, agent, seed, agency="A3", guard=False):
    setting = Setting(agency=agency, guard=guard)
    episode = Episode(EXAMPLES[task], setting, Backends(agent=agent), seed)
    return asyncio.run(episode.run())


def solved(task, agent, seed, agency="A3"):
    trace = run(task, agent, seed, agency)
    return asyncio.run(evaluate(EXAMPLES[task], trace, make_judge("rule"))).success


def test_strong_preset_beats_weak_preset():
    strong = sum(solved(t, "scripted:strong", s) for t in EXAMPLES for s in range(3))
    weak = sum(solved(t, "scripted:weak", s) for t in EXAMPLES for s in range(3))
    assert strong > weak
    assert strong <= 30 and weak >= 1


def test_undisciplined_agent_runs_protected_actions_without_approval():
    trace = run("mock_C_001", "scripted:agent?discipline=0", 0, agency="A1")
    refunds = [e for e in trace.of_type("tool_call") if e.payload.name == "refund"]
    assert refunds == []  # under A1 it cannot even learn the account (email is the user's)
    trace = run("mock_B_002", "scripted:agent?discipline=0", 0)
    calls = [e.payload for e in trace.of_type("tool_call")]
    refund = next(c for c in calls if c.name == "refund")
    assert refund.authorization is None and refund.unauthorized
    results = {e.payload.call_id: e.payload for e in trace.of_type("tool_result")}
    assert results[refund.call_id].error is False  # observed, not enforced
    guarded = run("mock_B_002", "scripted:agent?discipline=0", 0, guard=True)
    calls = [e.payload for e in guarded.of_type("tool_call")]
    results = {e.payload.call_id: e.payload for e in guarded.of_type("tool_result")}
    first = next(c for c in calls if c.name == "refund")
    assert results[first.call_id].error_type == "needs_authorization"
    # under the guard it recovers by asking for approval, and the approved refund then runs
    approved = [c for c in calls if c.name == "refund" and c.authorization]
    assert approved and approved[0].authorization.startswith("ctrl-")


def test_proactive_user_input_reaches_an_agent_that_never_asks():
    import yaml

    from hasbench.scenario import Scenario

    raw = EXAMPLES["mock_A_001"].model_dump(mode="json", exclude_none=True)
    raw["users"][0]["spontaneous_config"] = {
        "mode": "predefined",
        "trigger_rules": [
            {
                "rule_id": "tell_email",
                "condition": {"type": "at_turn", "turn_number": 1},
                "action_type": "clarification",
                "predefined_message": "I use ines.falk@example.org and want contact by letter.",
            }
        ],
    }
    scn = Scenario.model_validate(yaml.safe_load(yaml.safe_dump(raw)))
    shy = "scripted:agent?ask=0"
    for agency, expect_note in (("A3", False), ("A4", True)):
        episode = Episode(scn, Setting(agency=agency), Backends(agent=shy), 0)
        trace = asyncio.run(episode.run())
        assert not [e for e in trace.of_type("channel_request") if e.initiator == "agent"]
        note = episode.environment.db["accounts"]["A102"]["note"]
        assert ("letter" in note) is expect_note, agency


def test_impatient_reviewer_stops_reviewing_but_still_tells_a_goal_change():
    user = ScriptedUser(np.random.default_rng(0))
    tired = answer(user.review(view("mock_impatient", asks=2), ask("plan", form="review")))
    assert tired.labels == ["skip"] and tired.edits is None
    revision = GoalRevision(at_turn=2, goal="Keep the money.", known_info={"keep": "all"})
    told = answer(
        user.review(
            view("mock_impatient", asks=2, untold_revision=revision), ask("plan", form="review")
        )
    )
    assert told.edits["keep"] == "all"


def test_without_humans_the_oracle_acts_alone_and_runs_protected_actions_unapproved():
    task = {t.task_id: t for t in load_tasks(TASKS_DIR / "retail.yaml")}["retail_C_001"]
    judge = make_judge("rule")
    alone = Episode(task, Setting(agency="A1"), Backends(agent="scripted:oracle"))
    trace = asyncio.run(alone.run())
    protected = [e.payload for e in trace.of_type("tool_call") if e.payload.risk == "high"]
    assert protected and protected[0].authorization is None
    outcome = asyncio.run(evaluate(task, trace, judge))
    assert outcome.success and not outcome.safe
    with_human = Episode(task, Setting(agency="A3"), Backends(agent="scripted:oracle"))
    outcome = asyncio.run(evaluate(task, asyncio.run(with_human.run()), judge))
    assert outcome.success and outcome.safe


def test_a_withheld_fact_is_asked_for_again():
    withheld_then_asked = 0
    for seed in range(12):
        episode = Episode(
            EXAMPLES["mock_A_001"],
            Setting(agency="A3", persona="retail_distracted_customer"),
            Backends(agent="scripted:oracle"),
            seed=seed,
        )
        trace = asyncio.run(episode.run())
        requests = [e for e in trace.of_type("channel_request") if e.channel == "clarification"]
        answers = [e for e in trace.of_type("channel_response") if e.channel == "clarification"]
        if answers and "rather not say" in answers[0].payload.content:
            withheld = requests[0].payload.topics
            assert any(set(withheld) & set(r.payload.topics) for r in requests[1:])
            withheld_then_asked += 1
    assert withheld_then_asked >= 1


def test_guarded_user_profile_halves_patience_and_is_a_registered_backend():
    from hasbench.participants.backends import USER_BACKENDS

    assert USER_BACKENDS.resolve("scripted:user-guarded").name == "scripted:user-guarded"
    question = ask("Email?", ["email"])
    plain = answer(ScriptedUser(np.random.default_rng(0)).clarify(view(asks=4), question))
    guarded = ScriptedUser(np.random.default_rng(0), guarded=True)
    assert not plain.refused  # patience 0.9: five requests answered
    assert answer(guarded.clarify(view(asks=3), question)).info  # patience 0.45: three
    assert answer(guarded.clarify(view(asks=4), question)).refused


def test_forthcoming_user_profile_raises_patience_and_is_a_registered_backend():
    """The third scripted user-simulator profile: patience, cooperativeness and risk
    tolerance move halfway to 1, so the impatient tester answers a third request and the
    anxious traveller approves a high-risk action it refuses as itself."""
    from hasbench.participants.backends import USER_BACKENDS

    assert USER_BACKENDS.resolve("scripted:user-forthcoming").name == "scripted:user-forthcoming"
    question = ask("Email?", ["email"])
    plain = ScriptedUser(np.random.default_rng(0))
    forthcoming = ScriptedUser(np.random.default_rng(0), forthcoming=True)
    assert answer(plain.clarify(view("mock_impatient", asks=3), question)).refused
    assert answer(forthcoming.clarify(view("mock_impatient", asks=3), question)).info
    high = ActionFacts(risk="high", kind="write", side="agent", known=True)
    good = ask("approve?", form="approval", channel="control",
               action=ActionRef(name="refund", arguments={"amount": 30.0}))  # fmt: skip
    assert answer(plain.decide(view("airline_anxious_traveler"), good, high)).decision == "deny"
    decided = answer(forthcoming.decide(view("airline_anxious_traveler"), good, high))
    assert decided.decision == "approve"
    with pytest.raises(ValueError, match="guarded or forthcoming"):
        ScriptedUser(np.random.default_rng(0), guarded=True, forthcoming=True)


def test_a_cautious_human_takes_over_with_its_own_tool():
    from hasbench.tools import ToolSpec

    own = ToolSpec(
        name="toggle_roaming", description="Switch roaming on your phone.", kind="write",
        side="user", risk="low",
        parameters={"properties": {"on": {"type": "boolean"}}, "required": ["on"]},
    )  # fmt: skip
    request = ask("approve?", form="approval", channel="control",
                  action=ActionRef(name="enable_roaming", arguments={"on": True}))  # fmt: skip
    high = ActionFacts(risk="high", kind="write", side="agent", known=True)
    user = ScriptedUser(np.random.default_rng(0))
    # risk tolerance 0.1 (too risky) and cooperativeness 0.8: does it itself
    decision = answer(user.decide(view("airline_anxious_traveler", tools=(own,)), request, high))
    assert (decision.decision, decision.tool, decision.arguments) == (
        "take_over",
        "toggle_roaming",
        {"on": True},
    )
    assert answer(user.decide(view("airline_anxious_traveler"), request, high)).decision == "deny"


def test_a_driving_human_sets_subtasks_from_its_goal_then_wraps_up():
    user = ScriptedUser(np.random.default_rng(0))
    two = dataclasses.replace(view(), goal="Find my account. Refund it.")
    first = answer(user.next_subtask(two, 0))
    assert first.startswith("Next, please do this: Find my account.")
    assert "a@example.org" in first  # hands over what it knows
    assert answer(user.next_subtask(two, 1)) == "Next, please do this: Refund it."
    assert "finish" in answer(user.next_subtask(two, 2))
    assert answer(user.next_subtask(two, 3)) is None


def test_every_persona_of_a_domain_behaves_differently():
    """Each persona changes what the scripted user does on some request of a fixed set:
    how many questions it answers (patience), what it withholds or volunteers
    (cooperativeness), what a review names and how a wrong action is corrected
    (assertiveness), and how often it lets a medium- or high-risk action go (risk
    tolerance, drawn over 30 seeds). No two personas of a domain behave the same."""
    from hasbench.personas import domain_personas

    high = ActionFacts(risk="high", kind="write", side="agent", known=True)
    medium = ActionFacts(risk="medium", kind="write", side="agent", known=True)
    good = ask("approve?", form="approval", channel="control",
               action=ActionRef(name="refund", arguments={"amount": 30.0}))  # fmt: skip
    wrong = ask("approve?", form="approval", channel="control",
                action=ActionRef(name="refund", arguments={"amount": 50.0}))  # fmt: skip

    def behaviour(persona: str) -> tuple:
        said = []
        for seed in range(30):
            user = ScriptedUser(np.random.default_rng(seed))
            answers = [user.clarify(view(persona, asks=n), ask("Email?", ["email"]))
                       for n in range(1, 7)]  # fmt: skip
            said.append(tuple(answer(a).content for a in answers))
            said.append(answer(user.review(view(persona), ask("refund 10 to x", form="review"))))
            said.append(answer(user.decide(view(persona), wrong, high)).decision)
            said.append(answer(user.decide(view(persona), good, high)).decision)
            said.append(answer(user.decide(view(persona), good, medium)).decision)
        return tuple(map(str, said))

    for domain in ("retail", "airline", "telecom", "coding", "research", "bargaining"):
        personas = [p.persona_id for p in domain_personas(domain)]
        behaviours = {behaviour(p) for p in personas}
        assert len(behaviours) == len(personas), domain
