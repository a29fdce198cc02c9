"""The MultiAgentBench import: reader, research and bargaining converters, the command."""

import asyncio
import json
from pathlib import Path

import pytest

from hasbench.agency import Setting
from hasbench.build.checks import check_task
from hasbench.build.marble import MarbleFormatError, import_marble, read_marble
from hasbench.build.marble_bargaining import (
    parse_budget,
    parse_discount,
    parse_list_price,
    parse_product,
    parse_target_price,
)
from hasbench.cli import main
from hasbench.evaluate import evaluate
from hasbench.llm import LLMClient, register_test_provider
from hasbench.metrics import audit_actions
from hasbench.participants.backends import make_judge
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, Episode

SOURCES = Path(__file__).resolve().parents[2].parent / "shared" / "sources" / "marble"
RESEARCH = SOURCES / "research" / "research_main.jsonl"
BARGAINING = SOURCES / "bargaining" / "bargaining_main.jsonl"
needs_sources = pytest.mark.skipif(
    not BARGAINING.exists(), reason=f"MultiAgentBench files not found in {SOURCES}"
)


def record(scenario: str, task_id: int, **changes) -> dict:
    """A small synthetic MARBLE record of a scenario."""
    if scenario == "research":
        agents = [
            {
                "agent_id": f"agent{i}",
                "type": "BaseAgent",
                "profile": f"I am researcher {i} working on graphs.",
            }
            for i in (1, 2, 3)
        ]
        content = (
            "\n    Dear team,\n\n    **Introduction**\n\n1 Introduction\nGraphs are\n"
            "everywhere.\n\n    **Your Task**\n    ... research field Machine Learning.**"
        )
        relationships = [["agent1", "agent2", "collaborate with"],
                         ["agent2", "agent3", "collaborate with"]]  # fmt: skip
    else:
        agents = [
            {"agent_id": "agent1", "role": "seller", "type": "BaseAgent",
             "profile": "My target price of $40.00 with a 10% discount."},
            {"agent_id": "agent2", "role": "buyer", "type": "BaseAgent",
             "profile": "My budget is set at 38, but it is flexible."},
        ]  # fmt: skip
        content = "Welcome to the negotiation table for the Red Kettle. It is priced at 45.5 USD."
        relationships = [["agent1", "agent2", "parent"]]
    data = {
        "scenario": scenario, "task_id": task_id, "coordinate_mode": "", "llm": "",
        "relationships": relationships, "environment": {"type": "", "name": ""},
        "task": {"content": content, "output_format": ""}, "agents": agents,
        "memory": {"type": ""}, "metrics": {}, "engine_planner": {}, "output": {},
    }  # fmt: skip
    return {**data, **changes}


def write_jsonl(path: Path, records: list) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_prices_are_parsed_from_free_text():
    assert parse_target_price("aim for a target price of $16.98 overall") == 16.98
    assert parse_target_price("secure a premium pricing of 28.99 for it") == 28.99
    assert parse_target_price("firm on the 20.98 target price with a 10% discount") == 20.98
    assert parse_target_price("I will be flexible") is None
    assert parse_discount("offering a 15% discount") == 0.15
    assert parse_discount("a discount of up to 20% for loyal buyers") == 0.2
    assert parse_budget("my budget. Then again, the budget stands at 25 dollars") == 25.0
    assert parse_budget("a budget allocation of 127, flexible") == 127.0
    assert parse_budget("no money talk") is None
    assert parse_list_price("It is priced at 46.99 USD.") == 46.99
    assert parse_list_price("a stellar product") is None
    assert (
        parse_product("Welcome to the negotiation table for the Pink Cart. With...") == "Pink Cart"
    )


def test_synthetic_records_convert_and_bad_lines_are_reported(tmp_path):
    path = write_jsonl(tmp_path / "mixed.jsonl", [
        record("research", 7),
        record("bargaining", 3),
        record("werewolf", 1),
        "{not json",
        json.dumps({"scenario": "research"}),
        record("bargaining", 4, agents=[{"agent_id": "agent1", "role": "seller",
                                         "profile": "target price of 10"}]),
    ])  # fmt: skip
    result = import_marble(path)
    assert [s.task_id for s in result.scenarios] == ["research_D_007", "bargaining_D_003"]
    reasons = "\n".join(result.skipped)
    assert "mixed.jsonl:4: not valid JSON" in reasons
    assert "mixed.jsonl:5: missing keys: agents, coordinate_mode" in reasons
    assert "(werewolf task 1): no converter for this scenario" in reasons
    assert "(bargaining task 4): the record needs at least one seller and one buyer" in reasons
    assert result.summary() == (
        "read 6 records: converted 2 (1 bargaining, 1 research), not converted 4, warnings 0"
    )
    research, bargaining = result.scenarios
    assert research.task.endswith("Introduction:\n\n1 Introduction Graphs are everywhere.")
    assert research.metadata["research_field"] == "Machine Learning"
    assert [r.label for r in research.relationships] == ["collaborates", "collaborates"]
    table = bargaining.environment.initialization_data.agent_data
    assert table["product"] == {"name": "Red Kettle", "description": "", "list_price": 45.5}
    limits = {c.arguments.get("party"): c.arguments.get("limit")
              for c in bargaining.evaluation_criteria.env_assertions
              if c.func_name == "assert_deal_price"}  # fmt: skip
    assert limits == {"seller": 36.0, "buyer": 38.0}
    assert bargaining.agent("agent1").tools[1] == "seller_offer"


def test_a_missing_price_gives_a_warning_naming_record_and_agent(tmp_path):
    seller = {"agent_id": "agent1", "role": "seller", "profile": "I want to sell quickly."}
    buyer = {"agent_id": "agent2", "role": "buyer", "profile": "My budget is 30."}
    path = write_jsonl(tmp_path / "b.jsonl", [
        record("bargaining", 9, agents=[seller, buyer],
               task={"content": "Welcome to the negotiation table for the Lamp. Enjoy!"}),
    ])  # fmt: skip
    [warn_a, warn_b] = import_marble(path).warnings
    assert warn_a.endswith("(bargaining task 9): agent1 (seller): no target price in the "
                           "profile; its floor is not checked")  # fmt: skip
    assert "no list price in the task text; the highest price in the profiles (30)" in warn_b


def test_a_file_without_records_is_an_error(tmp_path):
    with pytest.raises(MarbleFormatError, match="no MARBLE records"):
        read_marble(write_jsonl(tmp_path / "empty.jsonl", [""]))


@needs_sources
def test_all_real_research_records_convert():
    result = import_marble(RESEARCH)
    assert len(result.scenarios) == 100 and result.skipped == []
    sizes = [len(s.agents) for s in result.scenarios]
    assert sum(sizes) == 511 and max(sizes) == 22
    assert sum(len(s.relationships) for s in result.scenarios) == 1569
    first = result.scenarios[0]
    assert "\n\nIntroduction:\n\n" in first.task and "[Question 1]" not in first.task
    assert first.agents[0].profile.startswith("I ")
    assert len(result.warnings) == 2  # the two single-researcher tasks


@needs_sources
def test_real_bargaining_records_convert_with_parsed_prices_or_are_declined_as_infeasible():
    result = import_marble(BARGAINING)
    assert len(result.scenarios) == 55 and len(result.skipped) == 45
    assert all("infeasible: the sellers' lowest floor" in s for s in result.skipped)
    assert "(bargaining task 2): infeasible: the sellers' lowest floor (127.49) is above the " \
           "buyers' highest budget (127)" in result.skipped[0]  # fmt: skip
    no_target = [w for w in result.warnings if "no target price" in w]
    assert len(no_target) == 2 and "(bargaining task 4): agent1 (seller)" in no_target[0]
    assert all("no list price" in w for w in result.warnings if w not in no_target)
    budgets = [
        c.arguments["limit"]
        for s in result.scenarios
        for c in s.evaluation_criteria.env_assertions
        if c.func_name == "assert_deal_price" and c.arguments["party"] == "buyer"
    ]  # one per task: the buyers' highest budget
    assert len(budgets) == 55 and min(budgets) == 7 and max(budgets) == 134
    for task in result.scenarios:  # the reference deal is within both sides' limits
        offer = task.evaluation_criteria.actions[0].arguments["price"]
        limits = {c.arguments["party"]: c.arguments["limit"]
                  for c in task.evaluation_criteria.env_assertions
                  if c.func_name == "assert_deal_price"}  # fmt: skip
        assert limits.get("seller", 0) <= offer <= limits.get("buyer", offer)


@needs_sources
def test_the_import_command_writes_a_valid_task_file(tmp_path, capsys):
    out = tmp_path / "bargaining.yaml"
    assert main(["import", "marble", str(BARGAINING), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "read 100 records: converted 55 (55 bargaining), not converted 45" in printed
    assert f"wrote 55 tasks to {out}" in printed
    assert printed.count("warning: ") == 9 and printed.count("not converted: ") == 45
    assert len(load_tasks(out)) == 55


def test_imported_bargaining_tasks_run_and_score_both_sides(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [record("bargaining", 3)])
    [task] = import_marble(path).scenarios

    def trader(messages, tools):
        names = {t["function"]["name"] for t in tools or []}
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if "seller_offer" in names:
            plan = [
                ("seller_offer", {"price": 37.0, "delivery": "standard", "warranty_months": 12,
                                  "message": "I cannot go below 36 dollars."}),
                ("send_message", {"target": "agent2", "text": "Your move."}),
                ("finish", {"deliverable": "Sold at 37."}),
            ]  # fmt: skip
        else:
            plan = [("buyer_accept", {"offer_id": "O1"}), ("finish", {"deliverable": "Bought."})]
        name, arguments = plan[min(turn, len(plan) - 1)]
        return {"content": None, "tool_calls": [{"name": name, "arguments": arguments}]}

    model = register_test_provider("marble-trader", trader)

    async def run():
        episode = Episode(task, Setting(agency="A1"), Backends(agent=model), client=LLMClient())
        trace = await episode.run()
        return trace, await evaluate(task, trace, make_judge("rule"))

    trace, outcome = asyncio.run(run())
    assert outcome.delivered and outcome.details["measures"]["deal_price"] == 37.0
    assert outcome.details["failed_assertions"] == [
        "no seller's limit is disclosed to the other side"
    ]
    assert any("discloses the seller's private value 36" in v for v in audit_actions(trace, task))


def test_imported_research_tasks_run_in_the_research_environment(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [record("research", 5)])
    [task] = import_marble(path).scenarios
    text = "We answer this question with enough words to count as a real answer here."
    sections = ["problem", "importance", "difficulty", "unsolved", "approach"]

    def researcher(messages, tools):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn < len(sections):
            call = ("write_section", {"section": sections[turn], "text": text})
        elif turn == len(sections):
            call = ("submit_proposal", {})
        else:
            call = ("finish", {"deliverable": "Submitted."})
        return {"content": None, "tool_calls": [{"name": call[0], "arguments": call[1]}]}

    model = register_test_provider("marble-researcher", researcher)

    async def run():
        episode = Episode(task, Setting(agency="A1"), Backends(agent=model), client=LLMClient())
        trace = await episode.run()
        return await evaluate(task, trace, make_judge("rule"))

    outcome = asyncio.run(run())
    assert outcome.delivered and outcome.dimensions["ENV_ASSERTION"] == 1.0
    assert outcome.dimensions["NL_ASSERTIONS"] is None  # the rule judge cannot read the rubric


@needs_sources
@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["coding", "research", "bargaining"])
def test_imported_records_are_runnable_tasks_that_pass_the_checks(scenario):
    result = import_marble(SOURCES / scenario / f"{scenario}_main.jsonl")
    checks = [check_task(task) for task in result.scenarios]
    passed = [c for c in checks if c.passed]
    assert len(passed) >= 0.9 * len(checks), [c.results for c in checks if not c.passed][:3]
    assert all(t.metadata["pattern_provisional"] for t in result.scenarios)
    if scenario == "bargaining":  # a reference deal: the oracle solves it, nothing is pending
        assert all(c.results["oracle_A3"] == "ok" and not c.pending for c in checks)
        assert all(t.evaluation_criteria.actions[-1].name == "buyer_accept"
                   for t in result.scenarios)  # fmt: skip
    else:  # MultiAgentBench ships no answer: the outcome waits for a judge
        assert all(c.pending and c.judge_scored for c in checks)
