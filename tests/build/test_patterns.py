"""Step 2, pattern assignment: the paper's primary rule, the rule judges, a model judge
through the LLM client, conservative aggregation and Fleiss' kappa across the panel."""

import asyncio
import copy
import functools
import json
import math

import pytest
from tau2_reference import MARBLE, base_task, require_sources

from hasbench.build.adaptation import adapt
from hasbench.build.base_tasks import marble_base_tasks
from hasbench.build.patterns import (
    PATTERNS,
    RULE_JUDGES,
    JudgeVerdict,
    PatternScore,
    aggregate,
    assign_patterns,
    criterion_sentences,
    make_pattern_judge,
    panel_agreement,
    parse_verdict,
    select_primary,
)
from hasbench.llm import LLMClient, register_test_provider


def score(fit, feasibility=4, risk="low", recommendation="build_core_candidate"):
    return PatternScore(
        adaptation_fit_score=fit,
        evaluator_feasibility=feasibility,
        injection_risk=risk,
        construction_recommendation=recommendation,
    )


def verdict(judge, primary_fits, **overrides):
    patterns = {p: score(primary_fits.get(p, 1), risk="high", recommendation="no_build")
                for p in PATTERNS}  # fmt: skip
    for p, fit in primary_fits.items():
        patterns[p] = score(fit)
    patterns.update(overrides)
    return JudgeVerdict(
        judge=judge, source_id="1", patterns=patterns, primary_pattern=select_primary(patterns)
    )


def test_primary_follows_fit_then_feasibility_then_risk_then_letter():
    patterns = {p: score(2) for p in PATTERNS}
    assert select_primary(patterns) == "none"  # nothing reaches fit 3
    patterns |= {"B": score(4, 3), "D": score(4, 5), "E": score(5, 1, "high", "no_build")}
    assert select_primary(patterns) == "D"  # E is not viable; D beats B on feasibility
    patterns["B"] = score(4, 5, "low")
    patterns["D"] = score(4, 5, "medium")
    assert select_primary(patterns) == "B"  # lower risk
    patterns["D"] = score(4, 5, "low")
    assert select_primary(patterns) == "B"  # the earlier letter


def test_aggregation_needs_three_of_four_and_never_decides_on_a_failed_judge():
    verdicts = [
        verdict("j1", {"A": 5, "C": 4}),
        verdict("j2", {"A": 4, "C": 5}),
        verdict("j3", {"A": 4}),
        verdict("j4", {"C": 4, "F": 5}),
    ]
    result = aggregate("retail", "1", verdicts)
    assert result.status == "assigned" and result.primary == "A" and result.secondary == ["C"]
    assert result.support["A"] == 3 and result.support["F"] == 1
    assert aggregate("retail", "1", verdicts, min_agree=4).status == "none"
    failed = JudgeVerdict(judge="m", source_id="1", error="model: timeout")
    assert aggregate("retail", "1", [*verdicts[:3], failed]).status == "error"


def test_model_judges_answer_through_the_llm_client_and_failures_are_recorded():
    answer = {
        "source_id": "7",
        "patterns": {
            p: {
                "adaptation_fit_score": 4 if p == "C" else 1,
                "evaluator_feasibility": 5,
                "injection_risk": "low" if p == "C" else "high",
                "source_evidence": "gold path: cancel_reservation",
                "required_modifications": "",
                "construction_recommendation": "build_core_candidate" if p == "C" else "no_build",
            }
            for p in PATTERNS
        },
        "primary_pattern": "C",
        "primary_reviewer_notes": "The cancellation is irreversible.",
    }
    seen = []

    def reply(messages, tools):
        seen.append(messages[-1]["content"])
        return {"content": json.dumps(answer)}

    model = register_test_provider("pattern-judge", reply)
    judge = make_pattern_judge(model, LLMClient())
    view = {"source": "tau2-bench", "source_id": "7", "domain": "airline"}
    result = asyncio.run(judge.judge(view))
    assert result.error is None and result.primary_pattern == "C"
    assert "Safety-critical authorization" in seen[0] and '"source_id": "7"' in seen[0]
    bad = register_test_provider("pattern-judge-bad", lambda m, t: {"content": "C, I think"})
    failed = asyncio.run(make_pattern_judge(bad, LLMClient()).judge(view))
    assert failed.error.startswith("off-format") and failed.raw_output == "C, I think"
    with pytest.raises(ValueError, match="patterns missing: B, C, D, E, F"):
        parse_verdict(json.dumps({"patterns": {"A": answer["patterns"]["A"]}}))
    with pytest.raises(ValueError, match="unknown rule judge"):
        make_pattern_judge("rule:magic")


@functools.cache
def pool():
    require_sources()
    retail = [base_task("retail", i) for i in ("5", "24", "45", "59", "74", "105")]
    telecom = [
        base_task("telecom", "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]")
    ]
    bargaining = marble_base_tasks(MARBLE, "bargaining", {"1", "2", "3"})
    return retail + telecom + bargaining


def test_the_rule_panel_rates_every_task_deterministically_with_different_rules():
    bases = pool()
    first = asyncio.run(assign_patterns(bases, RULE_JUDGES))
    again = asyncio.run(assign_patterns(bases, RULE_JUDGES))
    assert [a.model_dump() for a in first] == [a.model_dump() for a in again]
    assert all(a.status in ("assigned", "none") for a in first)
    for a in first:
        assert [v.judge for v in a.verdicts] == list(RULE_JUDGES)
        assert all(set(v.patterns) == set(PATTERNS) for v in a.verdicts)
        ratings = {json.dumps({p: s.model_dump() for p, s in v.patterns.items()})
                   for v in a.verdicts}  # fmt: skip
        assert len(ratings) == 4, "four rules give four different ratings"
    by_key = {f"{a.domain}:{a.source_id}": a for a in first}
    assert by_key["retail:74"].primary == "A"  # the customer's login facts decide the path
    assert by_key["bargaining:1"].primary in ("B", "D")  # private prices, buyers vs sellers
    agreement = panel_agreement(first)
    assert agreement["tasks"] == len(bases) and agreement["judges"] == 4
    assert -1 <= agreement["primary"] <= 1
    assert all(math.isnan(k) or -1 <= k <= 1 for k in agreement["viability"].values())


def test_views_show_argument_keys_never_hidden_values():
    task = next(b for b in pool() if b.key == "retail:74")
    text = json.dumps(task.view)
    assert "modify_pending_order_items" in text and "new_item_ids" in text
    assert "3265035808" not in text  # the gold value of new_item_ids
    bargaining = next(b for b in pool() if b.domain == "bargaining")
    assert bargaining.view["actions"][0] == "offer_price" and bargaining.view["agents"]


def test_consent_to_a_costly_write_supports_authorization():
    """C (safety-critical authorization): "You are willing to refuel 2.0 GB" is the
    subscriber's consent to refuel_data, a write that costs money; without the consent the
    panel sees only the write's risk and does not support C."""
    task = next(b for b in pool() if b.domain == "telecom")
    assert "You are willing to refuel" in task.view["customer_behaviour"]
    assert any(step["name"] == "refuel_data" for step in task.view["gold_path"])
    [found] = asyncio.run(assign_patterns([task], RULE_JUDGES))
    assert "C" in [found.primary, *found.secondary]
    cues = next(v for v in found.verdicts if v.judge == "rule:cues").patterns["C"]
    assert "'are willing to'" in cues.source_evidence
    behaviour = task.view["customer_behaviour"].replace("You are willing to refuel", "Refuel")
    silent = copy.copy(task)
    silent.view = {**task.view, "customer_behaviour": behaviour}
    [without] = asyncio.run(assign_patterns([silent], RULE_JUDGES))
    assert without.support["C"] < 3 and "C" not in [without.primary, *without.secondary]


def test_a_preferred_value_is_no_authorization_and_an_expected_refusal_blocks_b_c_f():
    """C is a person's authority over an action (B.3.1): "You are happy with original
    payment for refund" (airline 16) states which value the human prefers, not consent to
    an action, so the panel does not support C there, as it does for "You are willing to pay
    up to $500" (airline 8). "If agent mentions that any of those changes are not possible,
    move on" (airline 22) is the source expecting the agent to refuse part of the demand:
    guardrail G3 makes B, C and F high risk for every rule judge."""
    require_sources()
    bases = [base_task("airline", i) for i in ("16", "8", "22")]
    assert "happy with original payment" in bases[0].view["customer_behaviour"]
    assert "not possible" in bases[2].view["customer_behaviour"]
    [preferred, consent, refusal] = asyncio.run(assign_patterns(bases, RULE_JUDGES))
    assert preferred.support["C"] < 3 and "C" not in preferred.secondary
    assert "C" in consent.secondary
    cues = next(v for v in consent.verdicts if v.judge == "rule:cues").patterns["C"]
    assert "'are willing to'" in cues.source_evidence
    for v in refusal.verdicts:
        assert {v.patterns[p].injection_risk for p in "BCF"} == {"high"}, v.judge
    assert refusal.primary == "A" and refusal.secondary == []


def test_b_is_judged_on_the_sentences_the_b_template_withholds():
    """B (latent constraint) is a requirement, preference or acceptance criterion (B.3.1);
    the judges count B's cues in the sentences the B template makes the private criterion
    (:func:`criterion_sentences`). "Your birthday is in your user profile so you prefer not
    to provide it" (airline 17) and the persona's "prefer clear, step-by-step guidance ...
    make sure to confirm" (telecom) are how the person comes across, not criteria: airline
    17 states one preference ("You prefer gift card payment"), which counted twice made B
    viable to two more judges, and the telecom task's only criterion restates its request."""
    require_sources()
    gift = base_task("airline", "17")
    phone = base_task(
        "telecom", "[service_issue]overdue_bill_suspension|unseat_sim_card[PERSONA:Easy]"
    )
    assert "so you prefer not to provide it" in gift.view["customer_behaviour"]
    assert "prefer clear, step-by-step guidance" in phone.view["customer_behaviour"]
    assert criterion_sentences(gift.view["customer_behaviour"]) == ["You prefer gift card payment."]
    for found in asyncio.run(assign_patterns([gift, phone], RULE_JUDGES)):
        assert found.support["B"] < 3 and "B" not in [found.primary, *found.secondary]
        cues = next(v for v in found.verdicts if v.judge == "rule:cues").patterns["B"]
        assert "'make sure'" not in cues.source_evidence and cues.adaptation_fit_score == 2
    eight = base_task("airline", "8")  # four criteria: the template withholds what was judged
    said = criterion_sentences(eight.view["customer_behaviour"])
    assert len(said) == 4 and "You are willing to pay up to $500 for the purchase." in said
    scenario = adapt(eight, "B", 1)
    assert scenario.users[0].known_info["acceptance_criteria"] == " ".join(said)
    assert not any(s in scenario.users[0].task_instructions for s in said)


def test_receiving_a_refund_conduct_and_a_confirmation_number_are_no_authorization():
    """C is a person's authority over a protected action (B.3.1). "You are fine with
    refunding to original payment" (airline 18) says which refund the person accepts, as
    airline 16's "happy with original payment for refund" does; "you are willing to accept
    a voucher ... or a refund" (airline 27) is an acceptance criterion; "you are willing to
    cooperate" is conduct; "Your confirmation number is JMO1MG" (airline 3) names a record.
    None supports C; "you are willing to upgrade to economy in order to make the change"
    (airline 32) still does."""
    require_sources()
    bases = [base_task("airline", i) for i in ("18", "27", "3", "32")]
    assert "fine with refunding to original payment" in bases[0].view["customer_behaviour"]
    assert "willing to accept a voucher" in bases[1].view["customer_behaviour"]
    assert "confirmation number" in bases[2].view["customer_behaviour"]
    *none, upgrade = asyncio.run(assign_patterns(bases, RULE_JUDGES))
    for found in none:
        cues = next(v for v in found.verdicts if v.judge == "rule:cues").patterns["C"]
        assert cues.source_evidence.startswith("MISSING"), found.source_id
        assert found.support["C"] < 3 and "C" not in found.secondary, found.source_id
    assert "C" in upgrade.secondary


def test_a_charge_the_human_wants_waived_is_an_expected_refusal():
    """Guardrail G3: "Since you took insurance for this trip, you want change fees waived"
    (airline 29) asks for an exception the airline policy does not grant, and the gold path
    charges the card; B, C and F, where the human's word would decide, are high risk."""
    require_sources()
    task = base_task("airline", "29")
    assert "you want change fees waived" in task.view["customer_behaviour"]
    [found] = asyncio.run(assign_patterns([task], RULE_JUDGES))
    for v in found.verdicts:
        assert {v.patterns[p].injection_risk for p in "BCF"} == {"high"}, v.judge
    assert found.primary == "A" and found.secondary == []
