"""Step 3 for MultiAgentBench coding and research records: each pattern template keeps the
base task and moves a part of it to a person who holds it, offers it unprompted, and whom
the criteria name; declines say why; the judge-scored checks see the hidden parts reach the
team only with its humans (real files; skips without them)."""

import pytest
from tau2_reference import MARBLE, require_sources

from hasbench.build.adaptation import Declined, adapt
from hasbench.build.base_tasks import marble_base_tasks
from hasbench.build.checks import check_task, format_table
from hasbench.build.marble import MarbleRecord
from hasbench.build.marble_coding import convert as convert_coding
from hasbench.build.marble_coding import requirements
from hasbench.build.marble_research import convert as convert_research
from hasbench.scenario import Scenario, check_scenario, held_facts

CONVERT = {"coding": convert_coding, "research": convert_research}


def record(domain, source_id):
    require_sources()
    (found,) = marble_base_tasks(MARBLE, domain, {source_id})
    return found


def imported(base):
    data, _ = CONVERT[base.domain](MarbleRecord(base.key, 0, base.record), "A")
    return Scenario.model_validate(data)


def public_text(scenario):
    return "\n".join([scenario.task, *(a.profile for a in scenario.agents)]).lower()


CASES = [
    ("coding", "1", p) for p in "ABDEF"
] + [("coding", "29", "C")] + [("research", "1", p) for p in "ABDEF"]  # fmt: skip


@pytest.mark.parametrize(("domain", "source_id", "pattern"), CASES)
def test_each_template_hides_a_part_of_the_real_record_with_a_person(domain, source_id, pattern):
    base = record(domain, source_id)
    original, scenario = imported(base), adapt(base, pattern, 1, seed=0)
    assert check_scenario(scenario) == []
    # the base task is kept: goal, empty initial state, tools (the agents), criteria
    assert [a.model_dump() for a in scenario.agents] == [a.model_dump() for a in original.agents]
    assert scenario.environment == original.environment
    assert scenario.metadata["judge_scored"] is True
    judged = " ".join(scenario.evaluation_criteria.nl_assertions)
    if domain == "coding":
        assert all(b in judged for b in requirements(base.record["task"]["content"]))
    else:
        assert len(scenario.evaluation_criteria.nl_assertions) >= 8
        assert "assert_submitted" in [
            a.func_name for a in scenario.evaluation_criteria.env_assertions
        ]
    # the hidden part is held by a person, offered unprompted, and not in the task text
    holders = [u for u in scenario.users if held_facts(u)]
    hidden = {k: v for u in holders for k, v in held_facts(u).items()}
    assert hidden or pattern == "C"
    for key, value in hidden.items():
        assert str(value).lower() not in public_text(scenario), key
    for user in holders:
        assert user.spontaneous_config is not None and user.spontaneous_config.trigger_rules
    # the criteria name what is hidden (judged text, or an assertion on the proposal)
    named = [v for v in hidden.values() if any(
        part in judged for part in str(v).split(": ")[-1:]
    )]  # fmt: skip
    proposal_checks = [a for a in scenario.evaluation_criteria.env_assertions
                       if a.func_name == "assert_section_covers"]  # fmt: skip
    assert named or proposal_checks or pattern in "AC", hidden
    check = check_task(scenario)
    assert check.passed, check.results


def test_the_hidden_requirements_of_a_are_the_records_own_bullets():
    base = record("coding", "1")
    bullets = requirements(base.record["task"]["content"])
    scenario = adapt(base, "A", 1)
    held = scenario.users[0].known_info
    assert held and set(held.values()) <= set(bullets) and bullets[0] not in held.values()
    for bullet in held.values():
        assert bullet not in scenario.task
        assert f"which only the requester knew at the start: {bullet}" in " ".join(
            scenario.evaluation_criteria.nl_assertions
        )
    research = adapt(record("research", "1"), "A", 1)
    introduction = research.users[0].known_info["paper_introduction"]
    assert introduction[:200] in imported(record("research", "1")).task
    assert introduction[:200] not in research.task


def test_c_goes_through_the_coding_environments_protected_tool():
    scenario = adapt(record("coding", "29"), "C", 1)
    (gold,) = scenario.evaluation_criteria.actions
    assert gold.name == "apply_protected_patch" and gold.protected
    assert ["maintainer", gold.requestor, "authorizes"] in [
        [r.source, r.target, r.label] for r in scenario.relationships
    ]
    assert check_task(scenario).results["protected_path"] == "ok"


def test_declines_say_why():
    with pytest.raises(Declined, match="names no third-party Python package"):
        adapt(record("coding", "1"), "C", 1)
    with pytest.raises(Declined, match="no requirement has detail sentences"):
        adapt(record("coding", "2"), "B", 1)
    with pytest.raises(Declined, match="submit_proposal is a low-risk write"):
        adapt(record("research", "1"), "C", 1)
    with pytest.raises(Declined, match="a single researcher"):
        adapt(record("research", "17"), "D", 1)


def test_judge_scored_checks_need_the_humans_and_catch_a_leak():
    imported_task = imported(record("coding", "1"))  # no human holds anything
    check = check_task(imported_task)
    assert "1 judge-scored tasks" in format_table([check])
    results = check.results
    assert results["oracle_A3"].startswith("pending a judge: the work product")
    assert results["idle"] == "ok"
    assert results["oracle_fails_A1"].startswith("nothing held by a person")
    scenario = adapt(record("coding", "1"), "A", 1)
    bullet = next(iter(scenario.users[0].known_info.values()))
    leaked = scenario.model_copy(update={"task": scenario.task + "\n   - " + bullet})
    results = check_task(leaked).results
    assert results["oracle_fails_A1"].startswith("reached without a human")
    assert results["facts_hidden_A1"].startswith("visible under A1")


def test_adaptation_is_a_function_of_record_pattern_and_seed():
    base = record("coding", "1")
    dumps = {
        seed: [adapt(base, p, 1, seed=seed).model_dump(mode="json") for p in "ABDEF"]
        for seed in (0, 1)
    }
    again = [adapt(base, p, 1, seed=0).model_dump(mode="json") for p in "ABDEF"]
    assert dumps[0] == again
    assert dumps[1] != dumps[0]  # the seed picks the bullets, personas and revision turn
