"""Blind ratings of final plans (rule rubric or model), evidence kept (issue 17, point 4).

The rule rubric rates content, not length (issue 28, point 5).
"""

import asyncio
import json

from docuteam_helpers import WORKSHOP, adapted, make_session

from hasbench.docuteam import Document
from hasbench.docuteam.demo import DEMOS, run_demo
from hasbench.docuteam.simulation.rating import (
    DIMENSIONS,
    model_rating,
    open_points,
    rate_plan,
    rule_rating,
    task_requests,
)
from hasbench.llm import LLMClient, register_test_provider

TASK = (WORKSHOP / "task.md").read_text()


def plans():
    initial = Document.load(WORKSHOP / "plan.md")
    final = initial.copy()
    return initial, final


def test_the_starting_plan_scores_the_floor_except_for_its_open_points():
    initial, final = plans()
    rating = rule_rating(final, initial, TASK)
    opened = [f"{b.id}: {b.text}" for b in open_points(initial)]
    assert opened == ["b17: 14:00 | TBD", "b22: Networking: TBD"]
    assert rating.scores == {"novelty": 1, "workability": 3, "relevance": 1, "specificity": 1}
    assert rating.evidence["changed_blocks"] == [] and rating.backend == "rule"
    assert rating.evidence["workability"]["open_points"] == opened


def test_each_score_follows_its_documented_rule():
    initial, final = plans()
    final.update("b17", "14:00 | Small guided groups of five give feedback on projects across labs")
    final.update("b22", "Networking: mentor tables with 6 seats, rotating every 20 minutes")
    final.insert("Applied session: industry panel on practical careers", "list_item", "b22")
    rating = rule_rating(final, initial, TASK)
    ev = rating.evidence
    assert len(ev["changed_blocks"]) == 3
    # Novelty: ideas, each bringing a plan term new to the plan and the task sheet that no
    # earlier idea brought.
    ideas = ev["novelty"]["ideas"]
    b17, b22, added = ev["changed_blocks"]
    assert [i["block"] for i in ideas] == [b22, added]  # b17's words: the plan's and the task's
    assert {"mento", "panel", "rotat", "caree"} <= {w for i in ideas for w in i["new_terms"]}
    assert rating.scores["novelty"] == 1 + sum(len(ideas) >= n for n in (1, 2, 4, 6)) == 3
    # Relevance: requests sharing two plan terms with a changed block.
    requests = ev["relevance"]["requests"]
    assert len(requests) == len(task_requests(TASK)) == 6
    assert ev["relevance"]["addressed"] == sum(r["addressed"] for r in requests) >= 3
    assert rating.scores["relevance"] == 1 + round(4 * ev["relevance"]["addressed"] / 6)
    # Specificity: new numbers, distinct reasons and distinct sets of options.
    assert ev["specificity"]["new_numbers"] == ["6", "20"]
    assert ev["specificity"]["reasons"] == [] and ev["specificity"]["alternatives"] == []
    assert rating.scores["specificity"] == 2  # 2 details
    # Workability: no open point left.
    assert rating.scores["workability"] == 5


def test_a_model_rater_sees_the_task_and_the_plan_only_and_its_evidence_is_kept():
    seen = []

    def rater(messages, tools):
        seen.append(messages)
        return {
            "content": json.dumps(
                {d: {"score": 4, "evidence": f"{d} looks fine"} for d in DIMENSIONS}
            )
        }

    model = register_test_provider("docuteam-rater", rater)
    initial, final = plans()
    rating = asyncio.run(rate_plan(model, final, initial, TASK, "R2", LLMClient(cache=None)))
    assert rating.scores == dict.fromkeys(DIMENSIONS, 4) and rating.rater == "R2"
    assert rating.evidence["novelty"] == "novelty looks fine" and rating.missing_reason is None
    user = seen[0][1]["content"]
    assert "Networking: TBD" in user and "Constraints:" in user
    assert "<!--" not in user and "DocuTeam" not in user and "Baseline" not in user  # blind


def test_a_model_rater_that_cannot_rate_leaves_the_scores_missing_with_the_reason():
    model = register_test_provider("docuteam-rater-bad", lambda m, t: {"content": '{"novelty": 9}'})
    initial, final = plans()
    rating = asyncio.run(model_rating(model, LLMClient(cache=None), final, TASK, "R1"))
    assert rating.scores == dict.fromkeys(DIMENSIONS) and len(rating.calls) == 2
    assert rating.missing_reason.startswith("invalid_output after 2 attempt(s)")


TEAM = ("Bora", "Mina", "Jun", "Sora")


def rated_with(text: str, block: str = "b22", placement: str = "replace"):
    initial, final = plans()
    if placement == "replace":
        final.update(block, text)
    else:
        final.insert(text, final.block(block).type, block)
    return rule_rating(final, initial, TASK, team=TEAM)


def test_the_same_content_pasted_at_length_and_adapted_concisely_rates_the_same():
    pasted = (
        "I agree with Mina on small guided groups of six, and I would really add mentor "
        "tables that rotate every 20 minutes. Honestly, that matters to me because shy "
        "students get a named host at each table, so I think we should keep it."
    )
    concise = (
        "Networking: small guided groups of six, mentor tables that rotate every 20 minutes, "
        "because shy students get a named host at each table"
    )
    long, short = rated_with(pasted), rated_with(concise)
    assert len(pasted.split()) > 1.8 * len(concise.split())
    assert long.scores == short.scores
    assert long.evidence["novelty"]["count"] == short.evidence["novelty"]["count"] == 1
    assert long.evidence["specificity"] == short.evidence["specificity"]
    assert short.evidence["specificity"]["new_numbers"] == ["20"]
    assert short.evidence["specificity"]["reasons"] == ["b22"]


def test_saying_an_idea_again_adds_nothing():
    once = rated_with("Mentor tables that rotate every 20 minutes, because shy students get a host")
    initial, final = plans()
    final.update("b22", "Networking: mentor tables that rotate every 20 minutes")
    final.insert(
        "As Sora said, I would go with mentor tables rotating every 20 minutes, because shy "
        "students get a host.",
        "list_item",
        "b22",
    )
    twice = rule_rating(final, initial, TASK, team=TEAM)
    assert twice.scores == once.scores


def test_scripted_messages_pasted_or_adapted_rate_the_same():
    session = make_session()
    asyncio.run(run_demo(session, DEMOS["workshop"]))
    names = tuple(a.profile.name for a in session.agents.values())
    said = [m for d in session.discussions.values() for m in d.messages if m.kind == "utterance"]
    initial = Document.load(WORKSHOP / "plan.md")
    for message in said:
        text = adapted(message, list(names), initial.block("b21"), "after")
        ratings = []
        for written in (message.text, text):  # pasted whole, then adapted
            final = initial.copy()
            final.insert(written, "list_item", "b21")
            ratings.append(rule_rating(final, initial, TASK, team=names))
        assert ratings[0].scores == ratings[1].scores, (message.text, text)
