from dataclasses import dataclass
from typing import Any

import matplotlib
import pytest

from hasbench.envs import make_environment
from hasbench.graph import RELATIONS, GraphError, HASGraph, Participant, RoutingError
from hasbench.graph_drawing import draw, layout
from hasbench.paths import TASKS_DIR
from hasbench.scenario import MODE_LABELS, Scenario, load_tasks

matplotlib.use("Agg")

EXAMPLES = load_tasks(TASKS_DIR / "examples.yaml")
MOCK_TOOLS = {spec.name: spec.side for spec in make_environment(EXAMPLES[0]).tools()}


@dataclass
class Req:
    sender: str
    channel: str
    target: str | None = None


def scenario(
    mode: str,
    relationships: list[list[str]],
    agents: int = 2,
    users: list[dict[str, Any]] | None = None,
    agent_tools: dict[int, list[str]] | None = None,
) -> Scenario:
    agent_tools = agent_tools or {}
    return Scenario.model_validate(
        {
            "task_id": "mock_A_900",
            "adaptation_pattern": "A",
            "coordination_mode": mode,
            "task": "Do the thing.",
            "relationships": relationships,
            "environment": {"max_iterations": 5},
            "agents": [
                {"agent_id": f"agent_{i}", "profile": "An agent.", "tools": agent_tools.get(i)}
                for i in range(agents)
            ],
            "users": users if users is not None else [{"user_id": "user_0", "goal": "A goal."}],
            "evaluation_criteria": {"reward_basis": ["ENV_ASSERTION"]},
        }
    )


def expert_graph() -> HASGraph:
    """agent_0 has the owner; agent_1 has an expert (informs) and a reviewer (control, feedback)."""
    users = [
        {"user_id": "owner", "goal": "g", "role": "customer", "persona": "terse"},
        {"user_id": "expert", "goal": "g", "tools": ["restart_device"]},
        {"user_id": "reviewer", "goal": "g"},
    ]
    rels = [
        ["owner", "agent_0", "supervises"],
        ["expert", "agent_1", "informs"],
        ["reviewer", "agent_1", "authorizes"],
        ["reviewer", "agent_1", "reviews"],
        ["agent_0", "agent_1", "delegates"],
    ]
    return HASGraph.from_scenario(scenario("star", rels, users=users))


# -- relation types ----------------------------------------------------------------


def test_relations_carry_the_channels_of_their_role():
    assert RELATIONS["supervises"].channels == {"clarification", "feedback", "control"}
    assert RELATIONS["informs"].channels == {"clarification"}
    assert RELATIONS["reviews"].channels == {"feedback"}
    assert RELATIONS["authorizes"].channels == {"control"}
    assert RELATIONS["operates"].channels == {"control", "clarification"}
    for label in ("delegates", "handoff", "parent", "collaborates"):
        rel = RELATIONS[label]
        assert rel.channels == frozenset()
        assert (rel.source_kind, rel.target_kind) == ("agent", "agent")
    assert RELATIONS["delegates"].delegation and not RELATIONS["collaborates"].delegation


def test_every_label_a_mode_allows_is_a_known_relation():
    for labels in MODE_LABELS.values():
        assert labels <= set(RELATIONS)


# -- nodes and edges -----------------------------------------------------------------


def test_from_scenario_builds_one_participant_model_for_agents_and_humans():
    g = expert_graph()
    assert g.agents() == ["agent_0", "agent_1"]
    assert g.humans() == ["owner", "expert", "reviewer"]
    owner = g.participant("owner")
    assert isinstance(owner, Participant) and isinstance(g.participant("agent_0"), Participant)
    assert (owner.kind, owner.role, owner.persona) == ("human", "customer", "terse")
    assert g.participant("agent_0").kind == "agent"
    with pytest.raises(KeyError, match="nobody"):
        g.participant("nobody")


def test_neighbors_count_edges_in_both_directions():
    g = expert_graph()
    assert g.neighbors("agent_1") == ["agent_0", "expert", "reviewer"]
    assert g.neighbors("owner") == ["agent_0"]


def test_channels_between_unions_parallel_edges_and_ignores_direction():
    g = expert_graph()
    assert g.channels_between("agent_1", "reviewer") == {"control", "feedback"}
    assert g.channels_between("reviewer", "agent_1") == {"control", "feedback"}
    assert g.channels_between("agent_0", "agent_1") == set()
    assert g.channels_between("agent_0", "expert") == set()


def test_messages_flow_only_along_relations_that_allow_them():
    g = expert_graph()
    assert g.may_message("agent_0", "owner")
    assert g.may_message("agent_0", "agent_1")
    assert not g.may_message("agent_1", "expert")  # reachable only by clarification
    assert not g.may_message("agent_0", "expert")  # no edge at all


def test_visibility_defaults_to_neighbours_unless_listed():
    rels = [["user_0", "agent_0", "supervises"], ["agent_0", "agent_1", "delegates"]]
    s = scenario("star", rels)
    s.agents[1].visibility = ["agent_0", "user_0"]
    g = HASGraph.from_scenario(s)
    assert g.visible("agent_0") == ["agent_1", "user_0"]
    assert g.visible("agent_1") == ["agent_0", "user_0"]
    assert g.visible("user_0") == ["agent_0"]


def test_unknown_label_or_participant_is_an_error_naming_the_edge():
    with pytest.raises(GraphError, match=r"relationships\[0\]: unknown relation 'befriends'"):
        HASGraph.from_scenario(scenario("graph", [["agent_0", "agent_1", "befriends"]]))
    with pytest.raises(GraphError, match=r"relationships\[1\]: participant 'ghost'"):
        HASGraph.from_scenario(
            scenario(
                "graph", [["user_0", "agent_0", "supervises"], ["ghost", "agent_0", "informs"]]
            )
        )


# -- routing -------------------------------------------------------------------------


def test_route_follows_the_edge_that_carries_the_channel():
    g = expert_graph()
    assert g.route(Req("agent_0", "clarification")) == ["owner"]
    assert g.route(Req("agent_1", "clarification")) == ["expert"]
    assert g.route(Req("agent_1", "control")) == ["reviewer"]
    assert g.route(Req("agent_1", "feedback")) == ["reviewer"]


def test_route_returns_every_reachable_human_in_declaration_order():
    users = [{"user_id": "user_0", "goal": "g"}, {"user_id": "user_1", "goal": "g"}]
    rels = [["user_1", "agent_0", "informs"], ["user_0", "agent_0", "supervises"]]
    g = HASGraph.from_scenario(scenario("star", rels, agents=1, users=users))
    assert g.route(Req("agent_0", "clarification")) == ["user_0", "user_1"]
    assert g.route(Req("agent_0", "clarification", target="user_1")) == ["user_1"]
    assert g.route(Req("agent_0", "control")) == ["user_0"]


def test_route_with_no_reachable_human_names_sender_and_channel():
    g = expert_graph()
    with pytest.raises(RoutingError, match="no human reachable from agent_1 over feedback") as err:
        HASGraph.from_scenario(
            scenario(
                "star", [["user_0", "agent_0", "supervises"], ["agent_0", "agent_1", "delegates"]]
            )
        ).route(Req("agent_1", "feedback"))
    assert (err.value.sender, err.value.channel) == ("agent_1", "feedback")
    with pytest.raises(RoutingError, match="agent_0 over control"):
        HASGraph.from_scenario(
            scenario("star", [["user_0", "agent_0", "informs"]], agents=1)
        ).route(Req("agent_0", "control"))
    with pytest.raises(RoutingError, match="expert cannot be reached from agent_1 over control"):
        g.route(Req("agent_1", "control", target="expert"))
    with pytest.raises(RoutingError, match="owner cannot be reached from agent_1"):
        g.route(Req("agent_1", "clarification", target="owner"))
    with pytest.raises(RoutingError, match="unknown channel 'gossip'"):
        g.route(Req("agent_0", "gossip"))


def test_a_human_initiated_request_is_routed_to_the_agents_it_may_address():
    g = expert_graph()
    assert g.route(Req("reviewer", "feedback")) == ["agent_1"]
    assert g.route(Req("owner", "control", target="agent_0")) == ["agent_0"]
    with pytest.raises(RoutingError, match="no agent reachable from expert over control"):
        g.route(Req("expert", "control"))
    with pytest.raises(RoutingError, match="agent_1 cannot be reached from owner over feedback"):
        g.route(Req("owner", "feedback", target="agent_1"))


# -- permissions -----------------------------------------------------------------------


def test_may_call_uses_the_listed_tools():
    g = HASGraph.from_scenario(
        scenario(
            "star", [["user_0", "agent_0", "supervises"]], agents=1, agent_tools={0: ["get_record"]}
        ),
        MOCK_TOOLS,
    )
    assert g.may_call("agent_0", "get_record")
    assert not g.may_call("agent_0", "refund")


def test_unlisted_agent_tools_mean_every_agent_side_tool_of_the_domain():
    users = [{"user_id": "user_0", "goal": "g", "tools": ["restart_device"]}]
    s = scenario("star", [["user_0", "agent_0", "operates"]], agents=1, users=users)
    g = HASGraph.from_scenario(s, MOCK_TOOLS)
    assert g.may_call("agent_0", "refund")
    assert not g.may_call("agent_0", "restart_device")  # user-side
    assert not g.may_call("agent_0", "launch_rocket")
    assert g.may_call("user_0", "restart_device")
    assert not g.may_call("user_0", "refund")
    # without the domain's tool list the agent is unrestricted (the environment still checks sides)
    assert HASGraph.from_scenario(s).may_call("agent_0", "launch_rocket")


def test_a_human_without_tools_may_call_nothing():
    g = expert_graph()
    assert not g.may_call("owner", "get_record")
    assert g.may_call("expert", "restart_device")


# -- structure rules per coordination mode ---------------------------------------------


@pytest.mark.parametrize(
    ("mode", "rels", "agents"),
    [
        ("star", [["agent_0", "agent_1", "delegates"], ["agent_0", "agent_2", "delegates"]], 3),
        ("chain", [["agent_0", "agent_1", "handoff"], ["agent_1", "agent_2", "handoff"]], 3),
        ("tree", [["agent_0", "agent_1", "parent"], ["agent_0", "agent_2", "parent"],
                  ["agent_1", "agent_3", "parent"]], 4),
        ("graph", [["agent_0", "agent_1", "collaborates"], ["agent_1", "agent_0", "collaborates"],
                   ["agent_1", "agent_2", "collaborates"]], 3),
        ("star", [], 1),
    ],
)  # fmt: skip
def test_well_formed_structures_have_no_problems(mode, rels, agents):
    g = HASGraph.from_scenario(scenario(mode, [["user_0", "agent_0", "supervises"], *rels], agents))
    assert g.structure_problems() == []


@pytest.mark.parametrize(
    ("mode", "rels", "agents", "problem"),
    [
        ("star", [["agent_0", "agent_1", "delegates"], ["agent_2", "agent_3", "delegates"]], 4,
         "star mode needs exactly one hub agent, found agent_0, agent_2"),
        ("star", [["agent_0", "agent_1", "delegates"]], 3,
         "star hub 'agent_0' has no 'delegates' edge to agent_2"),
        ("chain", [["agent_0", "agent_1", "handoff"], ["agent_0", "agent_2", "handoff"]], 3,
         "chain mode needs the 'handoff' edges to form one path through all agents: "
         "agent_0 hands off to several agents"),
        ("chain", [["agent_0", "agent_1", "handoff"]], 3,
         "chain mode needs the 'handoff' edges to form one path through all agents: "
         "the agents are not all on it"),
        ("chain", [["agent_0", "agent_1", "handoff"], ["agent_1", "agent_0", "handoff"]], 2,
         "'handoff' edges form a cycle (agent_0 -> agent_1 -> agent_0)"),
        ("tree", [["agent_0", "agent_1", "parent"], ["agent_2", "agent_3", "parent"]], 4,
         "tree has several roots: agent_0, agent_2"),
        ("tree", [["agent_0", "agent_1", "parent"], ["agent_1", "agent_2", "parent"],
                  ["agent_2", "agent_1", "parent"]], 3, "'parent' edges form a cycle"),
        ("tree", [["agent_0", "agent_1", "parent"], ["agent_0", "agent_2", "parent"],
                  ["agent_1", "agent_3", "parent"], ["agent_2", "agent_3", "parent"]], 4,
         "'agent_3' has several parents"),
        ("graph", [["agent_0", "agent_1", "collaborates"]], 3,
         "the 'collaborates' edges leave the agents in separate groups: "
         "agent_0, agent_1 | agent_2"),
        ("star", [["agent_0", "agent_1", "handoff"]], 2,
         "agent_0 -> agent_1 'handoff': not allowed in star mode"),
        ("tree", [["agent_0", "agent_1", "collaborates"]], 2,
         "agent_0 -> agent_1 'collaborates': not allowed in tree mode"),
        ("graph", [["agent_0", "agent_1", "collaborates"], ["agent_1", "user_0", "reviews"]], 2,
         "agent_1 -> user_0 'reviews': joins agent -> human, expected human -> agent"),
        ("graph", [["agent_0", "agent_1", "collaborates"], ["agent_0", "agent_1", "informs"]], 2,
         "agent_0 -> agent_1 'informs': joins agent -> agent, expected human -> agent"),
    ],
)  # fmt: skip
def test_structure_problems_catch_each_mode_rule(mode, rels, agents, problem):
    g = HASGraph.from_scenario(scenario(mode, [["user_0", "agent_0", "supervises"], *rels], agents))
    problems = g.structure_problems()
    assert any(p.startswith(problem) for p in problems), problems


def test_a_human_related_to_no_agent_is_a_problem():
    users = [{"user_id": "user_0", "goal": "g"}, {"user_id": "user_1", "goal": "g"}]
    g = HASGraph.from_scenario(scenario("star", [["user_0", "agent_0", "supervises"]], 1, users))
    assert g.structure_problems() == ["user_1: not related to any agent"]


def test_tool_problems_name_participant_and_tool():
    users = [{"user_id": "user_0", "goal": "g", "tools": ["refund"]}]
    s = scenario(
        "star", [["user_0", "agent_0", "supervises"]], 1, users, {0: ["fly", "get_record"]}
    )
    assert HASGraph.from_scenario(s).structure_problems(MOCK_TOOLS) == [
        "agent_0: tool 'fly' does not exist in this domain",
        "user_0: tool 'refund' is for the agent side",
    ]


def test_lead_is_the_root_of_the_agent_structure():
    rels = [["user_0", "agent_2", "supervises"], ["agent_2", "agent_0", "handoff"],
            ["agent_0", "agent_1", "handoff"]]  # fmt: skip
    assert HASGraph.from_scenario(scenario("chain", rels, 3)).lead() == "agent_2"
    rels = [["user_0", "agent_1", "supervises"], ["agent_0", "agent_1", "collaborates"]]
    assert HASGraph.from_scenario(scenario("graph", rels, 2)).lead() == "agent_1"


# -- serialization and drawing -------------------------------------------------------


@pytest.mark.parametrize("task", EXAMPLES, ids=lambda t: t.task_id)
def test_json_round_trip_is_exact(task):
    g = HASGraph.from_scenario(task, MOCK_TOOLS)
    text = g.to_json()
    again = HASGraph.from_json(text)
    assert again == g
    assert again.to_json() == text
    assert again.participant(g.agents()[0]).tools == g.participant(g.agents()[0]).tools
    assert again.edges() == g.edges()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not a HAS Graph JSON document"),
        ('{"mode": "star", "participants": []}', "'edges'"),
        (
            '{"version": 1, "mode": "star", "participants": [], "edges": [["a", "b"]]}',
            "edges must be triples",
        ),
        (
            '{"version": 1, "mode": "star", "participants": [{"id": "a", "kind": "robot"}], '
            '"edges": []}',
            "kind",
        ),
        ('{"version": 9, "mode": "star", "participants": [], "edges": []}', "version 9 is not 1"),
    ],
)
def test_from_json_rejects_bad_documents(text, message):
    with pytest.raises(GraphError, match=message):
        HASGraph.from_json(text)


def test_draw_writes_a_png_with_distinct_humans_and_labelled_edges(tmp_path):
    g = HASGraph.from_scenario(next(t for t in EXAMPLES if t.task_id == "mock_D_001"))
    ax = draw(g)
    texts = [t.get_text() for t in ax.texts]
    assert "supervises (C/F/Ctl)" in texts
    assert "informs (C)\nauthorizes (Ctl)" in texts  # parallel edges share one arrow
    assert "collaborates" in texts
    assert "graph mode" in ax.get_title()
    agents, humans = ax.collections[:2]
    assert agents.get_offsets().shape[0] == 2 and humans.get_offsets().shape[0] == 2
    assert tuple(agents.get_facecolor()[0]) != tuple(humans.get_facecolor()[0])
    assert agents.get_paths()[0] != humans.get_paths()[0]
    path = tmp_path / "graph.png"
    ax.figure.savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    matplotlib.pyplot.close(ax.figure)


def test_draw_on_a_given_axes_and_layout_is_deterministic():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    g = HASGraph.from_scenario(EXAMPLES[1])
    assert draw(g, ax) is ax
    assert layout(g) == layout(HASGraph.from_scenario(EXAMPLES[1]))
    ys = {n: y for n, (_, y) in layout(g).items()}
    assert min(ys[h] for h in g.humans()) > max(ys[a] for a in g.agents())
    plt.close(fig)


# -- the example tasks -------------------------------------------------------------------


@pytest.mark.parametrize("task", EXAMPLES, ids=lambda t: t.task_id)
def test_example_graphs_are_well_formed_and_gold_actions_are_permitted_and_routable(task):
    g = HASGraph.from_scenario(task, MOCK_TOOLS)
    assert g.structure_problems(MOCK_TOOLS) == []
    for action in task.evaluation_criteria.actions:
        assert g.may_call(action.requestor, action.name), action
        if action.protected:
            assert g.route(Req(action.requestor, "control"))
        if g.participant(action.requestor).kind == "human":
            # some agent can hand the execution to that human over control
            assert any(
                action.requestor in g.route(Req(a, "control"))
                for a in g.agents()
                if "control" in g.channels_between(a, action.requestor)
            )


def test_humans_no_agent_can_reach_in_a_setting_are_drawn_as_such():
    import matplotlib.pyplot as plt

    from hasbench.agency import Setting
    from hasbench.graph_drawing import reachable_humans

    g = HASGraph.from_scenario(next(t for t in EXAMPLES if t.task_id == "mock_C_001"))
    assert reachable_humans(g) == reachable_humans(g, Setting().enabled_channels()) == {
        "user_0", "user_1",
    }  # fmt: skip
    assert reachable_humans(g, Setting(agency="A1").enabled_channels()) == set()
    assert reachable_humans(g, {"clarification"}) == {"user_0"}  # user_1 only authorizes
    a3, a1 = draw(g), draw(g, channels=Setting(agency="A1").enabled_channels())
    legend = [t.get_text() for t in a1.get_legend().get_texts()]
    assert legend == ["agent", "human", "human not reachable"]
    assert [t.get_text() for t in a3.get_legend().get_texts()] == ["agent", "human"]
    styles = {a.arrow_patch.get_linestyle() for a in a1.texts if getattr(a, "arrow_patch", None)}
    assert len(styles) == 2  # dashed edges to the humans, solid ones between agents
    plt.close("all")
