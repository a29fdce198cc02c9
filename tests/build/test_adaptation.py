"""Step 3, adaptation: τ² and MARBLE bargaining templates keep the source task and add the
pattern's interaction; another domain registers templates without touching these (real
files; skips without them; the coding and research templates are in
test_marble_templates.py)."""

import pytest
from tau2_reference import MARBLE, base_task, require_sources

from hasbench.build import adaptation
from hasbench.build.adaptation import Declined, adapt, template, templates_for
from hasbench.build.base_tasks import BaseTask, marble_base_tasks
from hasbench.build.checks import check_task
from hasbench.evaluate import replay_gold
from hasbench.scenario import check_scenario

TELECOM_DATA = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"


def base(domain, source_id):
    return base_task(domain, source_id)


def kept(original, adapted):
    """The source task's goal, state, tools, transitions and criteria, as adapted keeps them."""
    o, a = original.scenario, adapted
    assert a.environment.db_path == o.environment.db_path
    assert a.environment.compat == o.environment.compat == "tau2"
    assert a.environment.initialization_actions == o.environment.initialization_actions
    assert a.evaluation_criteria.reward_basis == o.evaluation_criteria.reward_basis
    assert a.evaluation_criteria.env_assertions == o.evaluation_criteria.env_assertions
    gold = [(g.name, g.arguments) for g in o.evaluation_criteria.actions]
    assert [(g.name, g.arguments) for g in a.evaluation_criteria.actions][: len(gold)] == gold
    assert a.agents[0].tools == o.agents[0].tools and a.coordination_mode == "star"
    assert check_scenario(a) == []


@pytest.mark.parametrize(
    ("domain", "source_id", "pattern"),
    [
        ("retail", "74", "A"),
        ("airline", "8", "B"),  # behaviour: "You are willing to pay up to $500 ..."
        ("retail", "74", "C"),
        ("retail", "74", "F"),  # cancel first; the item change arrives as a revision
        ("retail", "74", "D"),  # the account holder pays by one card; the other wants another
        ("airline", "15", "C"),
        ("telecom", TELECOM_DATA, "E"),
    ],
)
def test_templates_keep_the_source_task_and_pass_the_checks(domain, source_id, pattern):
    original = base(domain, source_id)
    scenario = adapt(original, pattern, 7, secondary=("A",), seed=0)
    assert scenario.task_id == f"{domain}_{pattern}_007" and scenario.source_task_id == source_id
    assert scenario.metadata["adaptation"]["secondary_patterns"] == ["A"]
    kept(original, scenario)
    check = check_task(scenario)
    assert check.passed, check.results


def test_what_each_pattern_adds():
    retail = base("retail", "74")
    b = adapt(base("airline", "8"), "B", 1)  # the conditions of the behaviour instructions
    criterion = b.users[0].known_info["acceptance_criteria"]
    assert "willing to pay up to $500" in criterion
    assert "up to $500" not in b.users[0].task_instructions + b.users[0].goal
    assert "birthday" not in criterion  # what they tell the agent is behaviour, not a criterion
    assert "prefer not to provide it" in b.users[0].task_instructions
    assert [a.depends_on for a in b.evaluation_criteria.actions if a.depends_on] == [
        ["user_0.acceptance_criteria"]
    ]
    with pytest.raises(Declined, match="behaviour states no condition"):
        adapt(retail, "B", 1)  # "you prefer silver" is in the opening request: public setup
    c = adapt(retail, "C", 1)
    assert [a.name for a in c.evaluation_criteria.actions if a.protected] == [
        "cancel_pending_order"
    ]
    assert ["user_0", "agent_0", "authorizes"] in [
        [r.source, r.target, r.label] for r in c.relationships
    ]
    f = adapt(retail, "F", 1)
    revision = f.users[0].goal_revisions[0]
    assert (
        2 <= revision.at_turn <= 4
        and "modify pending order items" in (revision.known_info["added_request"])
    )
    source_request = retail.scenario.users[0].goal
    assert revision.goal == source_request  # the whole request comes with the revision
    assert source_request[:40] not in f.users[0].goal  # and never before it
    assert f.users[0].goal.startswith("You want this done: cancel pending order")
    d = adapt(retail, "D", 1)
    holder, other = d.users
    assert holder.known_info["decision"].startswith("pay with the ")
    assert (
        other.known_info["wish"] != holder.known_info["decision"] and "zip" not in other.known_info
    )
    e = adapt(base("telecom", TELECOM_DATA), "E", 1)
    assert e.evaluation_criteria.actions[-1].name == "run_speed_test"
    assert e.evaluation_criteria.actions[-1].requestor == "user_0"


def test_personas_are_seeded_per_task_and_pattern():
    retail = base("retail", "74")
    first = [adapt(retail, p, 1, seed=0).users[0].persona for p in "ACF"]
    assert first == [adapt(retail, p, 1, seed=0).users[0].persona for p in "ACF"]
    assert all(p and p.startswith("retail_") for p in first)


def test_templates_decline_what_the_source_cannot_support():
    refusal = base("retail", "57")  # τ²: change nothing
    with pytest.raises(Declined, match="no consequential write"):
        adapt(refusal, "C", 1)
    with pytest.raises(Declined, match="no E template registered for retail"):
        adapt(refusal, "E", 1)
    with pytest.raises(Declined, match="a single write"):
        adapt(base("retail", "45"), "F", 1)


@pytest.mark.parametrize(
    ("source_id", "outcome", "budget", "floor"),
    [("2", "walk_away", 127.0, 127.49), ("4", "deal_express", 42.0, 37.59)],
)
def test_bargaining_stakeholders_keep_the_marble_table_and_pass_the_checks(
    source_id, outcome, budget, floor
):
    require_sources()
    (record,) = marble_base_tasks(MARBLE, "bargaining", {source_id})
    scenario = adapt(record, "D", 1)
    table = scenario.environment.initialization_data.agent_data
    assert scenario.metadata["outcome"] == outcome and scenario.source_task_id == source_id
    assert table["counterparty"]["reservation"] == floor  # the lowest MARBLE seller floor
    assert scenario.users[0].known_info == {
        "price_limit": f"no more than {budget:g} dollars in total"
    }
    assert {a.agent_id for a in scenario.agents} <= {"agent3", "agent4"}  # MARBLE's buyers
    assert str(budget).removesuffix(".0") not in scenario.task + scenario.agents[0].profile
    end = replay_gold(scenario)[0].db["status"]  # the gold path, on the real table
    assert end == ("walked_away" if outcome == "walk_away" else "deal")
    check = check_task(scenario)
    assert check.passed, check.results


def test_bargaining_latent_warranty_is_private_and_decides_the_terms():
    require_sources()
    (record,) = marble_base_tasks(MARBLE, "bargaining", {"4"})
    scenario = adapt(record, "B", 1)
    criterion = scenario.users[0].known_info["acceptance_criteria"]
    assert "12 months of warranty" in criterion and "warranty" not in scenario.task
    terms = [a for a in scenario.evaluation_criteria.env_assertions
             if a.func_name == "assert_deal_terms"]  # fmt: skip
    assert [a.arguments for a in terms] == [{"min_warranty_months": 12}]
    check = check_task(scenario)
    assert check.passed, check.results


def test_bargaining_declines_what_the_record_cannot_support():
    require_sources()
    (narrow,) = marble_base_tasks(MARBLE, "bargaining", {"25"})  # budget 11, floor 10.74
    with pytest.raises(Declined, match="too narrow a zone"):
        adapt(narrow, "D", 1)
    (below,) = marble_base_tasks(MARBLE, "bargaining", {"2"})  # budget below every floor
    with pytest.raises(Declined, match="no fair-share deal with 12 months of warranty"):
        adapt(below, "B", 1)


def test_another_domain_registers_its_templates_without_editing_these(monkeypatch):
    monkeypatch.setattr(
        adaptation, "_TEMPLATES", {k: dict(v) for k, v in adaptation._TEMPLATES.items()}
    )
    assert templates_for("mock") == {}

    @template("mock", "E")
    def review_rounds(base_task, ctx):
        raise Declined(f"mock template saw {base_task.key} for {ctx.pattern}")

    assert set(templates_for("mock")) == {"E"}
    with pytest.raises(Declined, match="mock template saw mock:3 for E"):
        adapt(BaseTask("mock", "3", record={}), "E", 1)
    with pytest.raises(ValueError, match="already registered"):
        template("mock", "E")(lambda b, c: {})
    assert set(templates_for("retail")) == set("ABCDF")
    assert set(templates_for("coding")) == set(templates_for("research")) == set("ABCDEF")
