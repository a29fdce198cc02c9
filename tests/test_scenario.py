from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from hasbench.registry import domain_names
from hasbench.scenario import (
    AGENT_RELATION,
    HUMAN_RELATIONS,
    MODE_LABELS,
    Problem,
    Scenario,
    ScenarioError,
    check_scenario,
    load_tasks,
    read_tasks,
    validate_file,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path("tests/scenario_corpus")
MALFORMED = sorted((ROOT / CORPUS / "malformed").glob("*.yaml"))
VALID = sorted((ROOT / CORPUS / "valid").glob("*.yaml"))


def expected_lines(path: Path) -> list[str]:
    """The `# expect: ` header lines of a corpus file (read as bytes: some are not UTF-8)."""
    prefix = b"# expect: "
    lines = path.read_bytes().splitlines()
    return [line[len(prefix) :].decode() for line in lines if line.startswith(prefix)]


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_corpus_is_large_enough():
    assert len(MALFORMED) >= 30
    assert all(expected_lines(path) for path in MALFORMED)


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.stem)
def test_malformed_file_reports_exact_problems(path):
    relative = CORPUS / "malformed" / path.name
    assert [str(p) for p in validate_file(relative)] == expected_lines(path)


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.stem)
def test_load_tasks_raises_with_the_same_problems(path):
    relative = CORPUS / "malformed" / path.name
    with pytest.raises(ScenarioError) as info:
        load_tasks(relative)
    assert [str(p) for p in info.value.problems] == expected_lines(path)
    assert str(info.value).splitlines() == expected_lines(path)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_files_have_no_problems(path):
    assert validate_file(path) == []
    scenarios = load_tasks(path)
    assert scenarios and all(isinstance(s, Scenario) for s in scenarios)
    assert all(check_scenario(s) == [] for s in scenarios)


def test_valid_file_round_trips_fields():
    star, chain, tree, graph = load_tasks(CORPUS / "valid" / "modes.yaml")
    assert [s.coordination_mode for s in (star, chain, tree, graph)] == [
        "star",
        "chain",
        "tree",
        "graph",
    ]
    assert star.domain == "mock"
    assert star.relationships[2].source == "agent_0"
    assert star.relationships[2].label == "delegates"
    assert star.evaluation_criteria.actions[0].protected is True
    assert star.participant_ids == ["agent_0", "agent_1", "agent_2", "user_0", "user_1"]
    assert chain.users[0].spontaneous_config.trigger_rules[1].condition.tool_name == "update_note"
    assert tree.users[0].spontaneous_config.trigger_rules[0].decision == "stop"
    assert graph.users[0].goal_revisions[0].at_turn == 3
    assert graph.memory.type == "shared"


def test_dates_stay_strings():
    (scn,) = load_tasks(CORPUS / "valid" / "near_misses.yaml")
    assert scn.users[0].known_info["since"] == "2024-05-02"


def test_missing_file_is_one_problem(tmp_path):
    path = tmp_path / "absent.yaml"
    assert [str(p) for p in validate_file(path)] == [
        f"{path}: cannot read file: No such file or directory"
    ]


def test_empty_list_is_a_valid_file_with_no_tasks(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("[]\n")
    assert validate_file(path) == []
    assert load_tasks(path) == []


def test_problems_of_several_tasks_are_all_reported(tmp_path):
    base = (CORPUS / "malformed" / "task_id_form.yaml").read_text()
    second = base.replace("mock_A_1", "mock_A_002").replace(
        "max_iterations: 10", "max_iterations: x"
    )
    path = tmp_path / "two.yaml"
    path.write_text(base + second)
    assert [str(p) for p in validate_file(path)] == [
        f"{path}: mock_A_1: task_id: 'mock_A_1' does not have the form "
        "{domain}_{pattern}_{nnn} (three digits or more), e.g. retail_A_007",
        f"{path}: mock_A_002: environment.max_iterations: expected an integer, got 'x'",
    ]


def test_read_tasks_keeps_the_tasks_that_parse(tmp_path):
    valid = (CORPUS / "valid" / "near_misses.yaml").read_text()
    broken = (CORPUS / "malformed" / "missing_task.yaml").read_text()
    path = tmp_path / "mixed.yaml"
    path.write_text(broken + valid)
    scenarios, problems = read_tasks(path)
    assert [s.task_id for s in scenarios] == ["mock_B_010"]
    assert [str(p) for p in problems] == [f"{path}: mock_A_001: task: missing required field"]


def test_check_scenario_on_a_model_built_in_code():
    (scn,) = load_tasks(CORPUS / "valid" / "near_misses.yaml")
    leaky = scn.model_copy(update={"task": "Customer ORD-77 wants points."})
    assert check_scenario(leaky) == [
        Problem(None, None, "users[0].known_info.ticket", "value 'ORD-77' leaks into task")
    ]


def test_problem_prints_only_the_parts_it_has():
    assert str(Problem("f.yaml", "t", "a.b", "bad")) == "f.yaml: t: a.b: bad"
    assert str(Problem("f.yaml", None, None, "bad")) == "f.yaml: bad"


def test_mode_labels_table():
    assert set(MODE_LABELS) == {"star", "chain", "tree", "graph"}
    assert AGENT_RELATION == {
        "star": "delegates",
        "chain": "handoff",
        "tree": "parent",
        "graph": "collaborates",
    }
    for mode, labels in MODE_LABELS.items():
        assert labels == HUMAN_RELATIONS | {AGENT_RELATION[mode]}
    assert "mock" in domain_names()


def test_mode_labels_agree_with_graph_relations():
    graph = pytest.importorskip("hasbench.graph")
    for mode, labels in MODE_LABELS.items():
        for label in labels:
            relation = graph.RELATIONS[label]
            expected = "agent" if label == AGENT_RELATION[mode] else "human"
            assert relation.source_kind == expected
            assert relation.target_kind == "agent"


FUZZ_TOKENS = ["", "- ", ": ", "[", "]", "{", "}", "null", "3", "-1", "true", "x", "'", '"']
FUZZ_TOKENS += ["&a", "*a", "<<: *a", "? ", "|", "\t", "1e9", "~", "[]", "{}", "!!binary"]


def test_mutated_files_never_raise(tmp_path):
    """Random edits of valid and malformed files give problems, never an exception."""
    import numpy as np

    rng = np.random.default_rng(0)
    sources = [p.read_bytes().decode("utf-8", "replace").splitlines() for p in VALID + MALFORMED]
    for n in range(300):
        lines = list(sources[rng.integers(len(sources))])
        for _ in range(int(rng.integers(1, 4))):
            if not lines:
                break
            i = int(rng.integers(len(lines)))
            op = rng.random()
            if op < 0.3:
                del lines[i]
            elif op < 0.5:
                lines.insert(i, lines[int(rng.integers(len(lines)))])
            else:
                j = int(rng.integers(len(lines[i]) + 1))
                token = FUZZ_TOKENS[int(rng.integers(len(FUZZ_TOKENS)))]
                lines[i] = lines[i][:j] + token + lines[i][j + int(rng.integers(3)) :]
        path = tmp_path / f"mutant{n}.yaml"
        path.write_text("\n".join(lines))
        problems = validate_file(path)
        assert all(isinstance(p, Problem) and str(p).startswith(str(path)) for p in problems)


def test_graph_agrees_with_relationship_checks():
    """Tasks that pass validation form a HAS Graph without structure problems, and every
    corpus task flagged for its relationships is also refused by the graph (except a
    repeated edge or a self-loop, which the graph stores without complaint)."""
    graph = pytest.importorskip("hasbench.graph")
    for path in VALID:
        for scn in load_tasks(path):
            assert graph.HASGraph.from_scenario(scn).structure_problems() == []
    flagged = 0
    for path in MALFORMED:
        merged_by_graph = ("duplicate of", "related to itself")
        relationship_lines = [
            e
            for e in expected_lines(path)
            if ": relationships" in e and not any(m in e for m in merged_by_graph)
        ]
        if not relationship_lines:
            continue
        try:
            scn = Scenario.model_validate(yaml.safe_load(path.read_text())[0])
        except ValidationError:  # a schema error, not a structural one
            continue
        try:
            problems = graph.HASGraph.from_scenario(scn).structure_problems()
        except graph.GraphError as exc:
            problems = [str(exc)]
        assert problems, path.name
        flagged += 1
    assert flagged >= 10


def test_counterparty_defaults_to_false_and_keeps_content_hashes():
    (scn,) = load_tasks(CORPUS / "valid" / "near_misses.yaml")
    assert not scn.agents[0].counterparty and scn.counterparties == frozenset()
    agents = [a.model_copy(update={"counterparty": False}) for a in scn.agents]
    assert scn.model_copy(update={"agents": agents}).content_hash() == scn.content_hash()
    agents[0] = agents[0].model_copy(update={"counterparty": True})
    outside = scn.model_copy(update={"agents": agents})
    assert outside.content_hash() != scn.content_hash()
    assert outside.counterparties == {scn.agents[0].agent_id}


def test_a_counterpartys_writes_need_no_authorization_of_the_team():
    (d008,) = [s for s in load_tasks("data/tasks/bargaining.yaml") if s.task_id.endswith("D_008")]
    assert d008.counterparties == {"seller_agent"}
    assert d008.protects("seller_accept", "medium")  # whoever makes it, by risk alone
    assert not d008.protects("seller_accept", "medium", "seller_agent")
    assert d008.protects("buyer_accept", "medium", "closer")


def test_a_gold_action_runs_on_its_performers_side():
    tasks = {s.task_id: s for s in load_tasks("data/tasks/telecom.yaml")}
    sides = {
        (task.side_of(action), action.requestor in {u.user_id for u in task.users})
        for task in tasks.values()
        for action in task.evaluation_criteria.actions
    }
    assert sides == {("user", True), ("agent", False)}


def test_a_scenario_built_from_fields_is_validated_and_checked_and_names_its_first_problem():
    from hasbench.paths import TASKS_DIR
    from hasbench.scenario import checked_scenario, load_task

    task = load_task(TASKS_DIR / "examples.yaml", "mock_D_001")
    fields = task.model_dump(mode="json", exclude_none=True)
    assert checked_scenario(fields) == task
    with pytest.raises(ScenarioError) as schema:
        checked_scenario({**fields, "coordination_mode": "ring"})
    assert str(schema.value).startswith("coordination_mode: Input should be 'star'")
    edges = [*fields["relationships"], ["user_0", "agent_9", "supervises"]]
    with pytest.raises(ScenarioError) as checked:
        checked_scenario({**fields, "relationships": edges})
    assert str(checked.value) == "relationships[5].target: undefined participant 'agent_9'"
