"""The Research and Bargaining task sets: shape, reproducibility, checks, evaluation."""

import asyncio
from collections import Counter

import pytest

from hasbench.agency import Setting
from hasbench.build import bargaining_tasks, research_corpus, research_tasks
from hasbench.build.checks import check_file
from hasbench.evaluate import evaluate
from hasbench.llm import LLMClient, register_test_provider
from hasbench.metrics import audit_actions
from hasbench.participants.backends import make_judge
from hasbench.personas import domain_personas
from hasbench.scenario import load_tasks, validate_file
from hasbench.simulator import Backends, Episode, run_episode

GENERATORS = {"research": research_tasks, "bargaining": bargaining_tasks}
PATTERNS = {"research": {"B": 8, "D": 10, "E": 12}, "bargaining": {"D": 15, "E": 12}}


@pytest.fixture(scope="module", params=["research", "bargaining"])
def domain(request):
    return request.param


@pytest.fixture(scope="module")
def tasks(domain):
    return load_tasks(GENERATORS[domain].OUTPUT)


def test_files_validate_with_the_issue_pattern_mix(domain, tasks):
    assert validate_file(GENERATORS[domain].OUTPUT) == []
    assert Counter(t.adaptation_pattern for t in tasks) == PATTERNS[domain]
    used = {u.persona for t in tasks for u in t.users}
    assert used == {p.persona_id for p in domain_personas(domain)}
    assert {t.metadata["difficulty"] for t in tasks} == {"easy", "medium", "hard"}


def test_research_teams_and_humans_fit_their_pattern():
    tasks = load_tasks(research_tasks.OUTPUT)
    assert {t.coordination_mode for t in tasks} == {"graph"}
    assert {len(t.agents) for t in tasks} == {2, 3, 4, 5, 6}
    for task in tasks:
        roles = Counter(u.role for u in task.users)
        pattern = task.adaptation_pattern
        if pattern == "B":
            assert roles == {"principal investigator": 1} and task.users[0].known_info
        elif pattern == "D":
            assert roles["co-author"] == 2, task.task_id
            decided = [set(a.depends_on) for a in task.evaluation_criteria.actions]
            both = [
                d for d in decided if {f.split(".")[0] for f in d} == {"coauthor_a", "coauthor_b"}
            ]
            assert both, f"{task.task_id}: no action reconciles the two co-authors"
            forbidden = [c for c in task.evaluation_criteria.env_assertions
                         if c.arguments.get("forbidden")]  # fmt: skip
            assert forbidden, f"{task.task_id}: the losing side of the conflict is not checked"
        else:
            reviewers = [u for u in task.users if "reviewer" in (u.role or "")]
            assert 1 <= len(reviewers) <= 2
            assert all(r.user_id in {e.source for e in task.relationships if e.label == "reviews"}
                       for r in reviewers)  # fmt: skip


def test_bargaining_counterparties_and_teams():
    tasks = load_tasks(bargaining_tasks.OUTPUT)
    kinds = Counter((t.metadata["counterparty"], t.coordination_mode) for t in tasks)
    assert kinds == {("simulated", "star"): 24, ("agent", "graph"): 3}
    # the seller agent acts for the other company: outside the team, related to no human
    outside = {t.task_id: t.counterparties for t in tasks if t.counterparties}
    agent_tasks = {t.task_id for t in tasks if t.metadata["counterparty"] == "agent"}
    assert set(outside) == agent_tasks and set(outside.values()) == {frozenset({"seller_agent"})}
    sides = Counter(t.agents[0].role.split()[0] for t in tasks)
    assert sides["buyer"] > 0 and sides["seller"] > 0
    walkaways = [t for t in tasks if t.metadata["template"].endswith("walk_away")]
    assert len(walkaways) == 4
    revised = [t for t in tasks if t.adaptation_pattern == "E"]
    assert all(t.users[0].goal_revisions for t in revised)


@pytest.mark.slow
def test_generators_reproduce_the_committed_files_byte_for_byte(domain, tmp_path):
    module = GENERATORS[domain]
    if domain == "research":
        corpus = research_corpus.write(tmp_path / "corpus.json")
        assert corpus.read_bytes() == research_corpus.OUTPUT.read_bytes()
        text = module.build(corpus_path=corpus).to_yaml()
    else:
        text = module.build().to_yaml()
    assert text == module.OUTPUT.read_text(encoding="utf-8")


def test_build_tasks_command_rewrites_the_research_files(tmp_path, monkeypatch, capsys):
    from hasbench.cli import main

    monkeypatch.setattr(research_tasks, "OUTPUT", tmp_path / "research.yaml")
    monkeypatch.setattr(research_corpus, "OUTPUT", tmp_path / "corpus.json")
    assert main(["build", "tasks", "--domain", "research"]) == 0
    assert f"wrote {tmp_path / 'research.yaml'}" in capsys.readouterr().out
    assert (tmp_path / "corpus.json").read_bytes() == (
        research_corpus.DATA_DIR / "research" / "corpus.json"
    ).read_bytes()


@pytest.mark.slow
def test_every_task_passes_every_check(domain):
    rows = check_file(GENERATORS[domain].OUTPUT)
    assert {row.task_id: row.results for row in rows if not row.passed} == {}
    assert len(rows) == sum(PATTERNS[domain].values())


def test_the_oracle_delivers_safely_and_without_disclosure(domain, tasks):
    for task in tasks[::4]:
        setting = Setting(agency="A3", persona="default")  # as the checks run
        trace = run_episode(task, setting, Backends(agent="scripted:oracle"))
        outcome = asyncio.run(evaluate(task, trace, make_judge("rule")))
        assert outcome.success and outcome.delivered and outcome.safe, task.task_id
        assert audit_actions(trace, task) == [], task.task_id
        if domain == "bargaining":
            measures = outcome.details["measures"]
            assert measures["status"] in ("deal", "walked_away")
            shares = [v for k, v in measures.items() if k.startswith("surplus_share")]
            assert all(share >= bargaining_tasks.MIN_SHARE for share in shares)


def test_the_llm_judge_scores_the_research_rubric_with_evidence():
    task = load_tasks(research_tasks.OUTPUT)[0]
    seen = []

    def judge(messages, tools):
        prompt = messages[-1]["content"]
        seen.append(prompt)
        holds = "write_section" in prompt and "why the problem is important" not in prompt
        return {"content": f'{{"holds": {str(holds).lower()}, "rationale": "read it"}}'}

    model = register_test_provider("research-rubric", judge)
    setting = Setting(agency="A3", persona="default")
    trace = run_episode(task, setting, Backends(agent="scripted:oracle"))
    outcome = asyncio.run(evaluate(task, trace, make_judge(model, LLMClient())))
    assert outcome.dimensions == {"ENV_ASSERTION": 1.0, "NL_ASSERTIONS": 0.8}
    assert not outcome.success and outcome.task_score == pytest.approx(0.9)
    verdicts = outcome.details["nl_assertions"]
    assert len(verdicts) == 5 and all(v["evidence"]["raw_output"] for v in verdicts)
    assert all(task.evaluation_criteria.nl_assertions[0] in p for p in seen[:1])


def test_delivery_is_the_domain_state_not_a_closing_message():
    """Finishing with a text is not delivery when no proposal was submitted or no deal closed."""
    model = register_test_provider(
        "claims-done",
        lambda messages, tools: {
            "content": None,
            "tool_calls": [
                {"name": "finish", "arguments": {"deliverable": "All done, deal closed."}}
            ],
        },
    )
    for module in (research_tasks, bargaining_tasks):
        task = load_tasks(module.OUTPUT)[0]

        async def run(task=task):
            trace = await Episode(
                task, Setting(agency="A1"), Backends(agent=model), client=LLMClient()
            ).run()
            return trace, await evaluate(task, trace, make_judge("rule"))

        trace, outcome = asyncio.run(run())
        assert trace.termination.reason == "agent_done"
        assert outcome.delivered is False, task.task_id
