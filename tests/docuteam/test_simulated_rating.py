"""Issue 17, point 4: blind ratings of final plans (rule rubric or model), evidence kept."""

import asyncio
import json

from docuteam_helpers import WORKSHOP

from hasbench.docuteam import Document
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
    # Novelty: new content words beyond the starting plan and the task sheet.
    assert {"mento", "panel", "rotat", "caree"} <= set(ev["novelty"]["new_words"])
    assert rating.scores["novelty"] == 1 + sum(ev["novelty"]["count"] >= n for n in (3, 8, 15, 25))
    # Relevance: requests sharing two content words with a changed block.
    requests = ev["relevance"]["requests"]
    assert len(requests) == len(task_requests(TASK)) == 6
    assert ev["relevance"]["addressed"] == sum(r["addressed"] for r in requests) >= 3
    assert rating.scores["relevance"] == 1 + round(4 * ev["relevance"]["addressed"] / 6)
    # Specificity: new numbers plus changed blocks of eight or more words.
    assert ev["specificity"]["new_numbers"] == ["6", "20"]
    assert len(ev["specificity"]["long_blocks"]) == 2
    assert rating.scores["specificity"] == 3  # 4 details
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
