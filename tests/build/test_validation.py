"""Step 4, the validation panels: majority per dimension, the paper's verdict rules, model
reviewers through the LLM client, rule reviewers on real adapted tasks, and the bounded
repair-and-review loop (real τ² files; skips without them)."""

import asyncio
import functools
import json

import pytest
from tau2_reference import base_task

from hasbench.build.adaptation import adapt
from hasbench.build.checks import check_task
from hasbench.build.validation import (
    RULE_REVIEWERS,
    Evidence,
    Review,
    combine,
    majority,
    make_reviewer,
    parse_review,
    review_panel,
    validate,
)
from hasbench.llm import LLMClient, register_test_provider
from hasbench.scenario import Relationship

RULES = [make_reviewer(name) for name in RULE_REVIEWERS]


def review(panel, **labels):
    return Review(reviewer="r", panel=panel, labels=labels)


def test_majority_then_median_toward_the_worse_label():
    assert majority(["PASS", "PASS", "FAIL"]) == "PASS"
    assert majority(["PASS", "WARN", "FAIL"]) == "WARN"
    assert majority(["PASS", "FAIL"]) == "FAIL"
    assert majority(["WARN"]) == "WARN"


@pytest.mark.parametrize(
    ("labels", "overall"),
    [
        ({}, "INCLUDE"),
        ({"W2": "WARN"}, "INCLUDE"),
        ({"W3": "WARN"}, "CONDITIONAL"),
        ({"W1": "WARN", "W5": "WARN"}, "CONDITIONAL"),
        ({"W4": "FAIL"}, "EXCLUDE"),
        ({"W3": "FAIL", "W1": "PASS"}, "EXCLUDE"),
    ],
)
def test_worthiness_verdicts_follow_the_paper(labels, overall):
    full = {d: "PASS" for d in ("W1", "W2", "W3", "W4", "W5")} | labels
    verdict = combine("worthiness", [review("worthiness", **full)] * 3)
    assert verdict.overall == overall


def test_structural_overall_and_abstaining_reviewers():
    a = review("structural", D1="PASS", D2="PASS", D3="WARN")
    b = review("structural", D1="PASS", D3="WARN", D4="PASS", D5="PASS", D6="PASS", D7="PASS")
    c = review("structural", D2="PASS", D4="FAIL", D5="PASS", D6="PASS", D7="PASS")
    verdict = combine("structural", [a, b, c])
    assert verdict.labels["D3"] == "WARN" and verdict.labels["D4"] == "FAIL"  # one each way
    assert verdict.overall == "FAIL"


def test_model_reviewers_answer_through_the_llm_client():
    answer = {f"D{i}": "PASS" for i in range(1, 8)} | {"D3": "WARN", "overall": "WARN"}
    answer["issues"] = ["D3: one agent, star mode is the only option"]
    model = register_test_provider(
        "structural-reviewer", lambda m, t: {"content": json.dumps(answer)}
    )
    task = adapted("retail", "74", "C")
    result = asyncio.run(make_reviewer(model, LLMClient()).review("structural", Evidence(task)))
    assert result.error is None and result.labels["D3"] == "WARN"
    assert "retail_C_001" in asyncio.run(_prompt_of(task))
    with pytest.raises(ValueError, match="D4: expected one of"):
        parse_review("structural", json.dumps(answer | {"D4": "WARN"}))


async def _prompt_of(task):
    seen = []
    model = register_test_provider(
        "seeing-reviewer", lambda m, t: seen.append(m) or {"content": "{}"}
    )
    await make_reviewer(model, LLMClient()).review("worthiness", Evidence(task))
    return seen[0][-1]["content"]


def test_a_failed_model_reviewer_makes_the_validation_an_error():
    task = adapted("retail", "74", "C")
    broken = register_test_provider("broken-reviewer", lambda m, t: {"content": "looks fine"})
    evidence = Evidence(task, base("retail", "74"), check_task(task))
    result, _ = asyncio.run(validate(evidence, [*RULES, make_reviewer(broken, LLMClient())],
                                     RULES, check_task))  # fmt: skip
    assert result.verdict == "error" and "broken-reviewer: off-format" in result.reason


def base(domain, source_id):
    return base_task(domain, source_id)


@functools.cache
def adapted(domain, source_id, pattern):
    return adapt(base(domain, source_id), pattern, 1)


def run(task, source_id):
    evidence = Evidence(task, base(task.domain, source_id), check_task(task))
    return asyncio.run(validate(evidence, RULES, RULES, check_task))


def test_rule_panels_include_a_sound_task_and_exclude_one_doing_nothing_passes():
    good, _ = run(adapted("retail", "74", "C"), "74")
    assert good.verdict == "INCLUDE"
    reviews = good.rounds[0]["worthiness"]["reviews"]
    assert [r["reviewer"] for r in reviews] == list(RULE_REVIEWERS)
    refusal = adapted("airline", "1", "A")  # τ²: look up, then refuse the cancellation
    bad, _ = run(refusal, "1")  # the automatic checks gate the panels (App. B.4.1)
    assert bad.verdict == "EXCLUDE" and bad.reason == (
        "automatic checks fail: idle (doing nothing scores), oracle_fails_A1 (solved without "
        "a human)"
    )
    assert "worthiness" not in bad.rounds[0] and bad.checks["idle"].startswith("idle scored")
    evidence = Evidence(refusal, base("airline", "1"), check_task(refusal))
    worth = asyncio.run(review_panel("worthiness", RULES, evidence))  # what a panel would say
    assert worth.labels["W2"] == "FAIL" and worth.labels["W3"] == "FAIL"


def test_a_vacuous_assertion_is_repaired_before_the_panels():
    task = adapted("telecom", "[service_issue]airplane_mode_on|unseat_sim_card[PERSONA:None]", "A")
    assert not check_task(task).passed  # τ² asserts "no overdue bill B1234321", never made
    result, final = run(task, "[service_issue]airplane_mode_on|unseat_sim_card[PERSONA:None]")
    assert result.rounds[0]["preflight_repairs"] == ["drop_vacuous_assertions"]
    assert result.verdict == "INCLUDE" and all(v in ("ok", "-") for v in result.checks.values())
    assert [a.func_name for a in final.evaluation_criteria.env_assertions] == [
        "assert_service_status"
    ]
    assert final.metadata["dropped_vacuous_assertions"] == [
        'assert_no_overdue_bill({"overdue_bill_id":"B1234321"})'
    ]


def doubtful(task):
    """A task with an unusual role, no behaviour instructions and an edge nothing uses."""
    user = task.users[0].model_copy(update={"task_instructions": "", "role": "time traveller"})
    edge = Relationship(source="user_0", target="agent_0", label="authorizes")
    return task.model_copy(update={"users": [user], "relationships": [*task.relationships, edge]})


def test_conditional_tasks_are_repaired_and_reviewed_again():
    result, final = run(doubtful(adapted("retail", "74", "A")), "74")
    first = result.rounds[0]
    worth = first["worthiness"]
    assert worth["labels"]["W1"] == "WARN" and worth["labels"]["W4"] == "WARN"
    assert worth["overall"] == "CONDITIONAL"
    assert first["repairs"] == ["default_instructions", "drop_unused_edges"]
    assert result.rounds[1]["worthiness"]["overall"] == "INCLUDE"  # W1 alone is one WARN
    assert result.verdict == "INCLUDE" and len(result.rounds) == 2
    assert final.users[0].task_instructions
    assert "authorizes" not in [r.label for r in final.relationships]


def test_the_repair_loop_is_bounded():
    task = doubtful(adapted("retail", "74", "A"))
    evidence = Evidence(task, base("retail", "74"), check_task(task))
    result, _ = asyncio.run(validate(evidence, RULES, RULES, check_task, max_rounds=0))
    assert result.verdict == "EXCLUDE"
    assert result.reason == "still CONDITIONAL after 0 repair rounds"
