"""GraphViewer: drawing content, highlighting, and following a TraceViewer."""

import re

import pytest

from hasbench.graph import HASGraph
from hasbench.widgets import GraphViewer, TraceViewer


def visible_ids(viewer: GraphViewer) -> set[str]:
    """SVG ids the style block makes visible."""
    rule = re.search(r"\}\s*([^{}]*)\{visibility: visible;\}", viewer.figure_html.value)
    return {part.strip().lstrip("#") for part in rule.group(1).split(",")} if rule else set()


def test_drawing_shows_mode_kinds_and_typed_edges(scenario):
    viewer = GraphViewer(scenario)
    svg = viewer.figure_html.value
    assert svg.count("<svg") == 1
    for pid in ("agent_0", "agent_1", "agent_2", "user_0", "user_1"):
        assert f">{pid}<" in svg  # node labels are text
    assert "supervises (C/F/Ctl)" in svg and "authorizes (Ctl)" in svg
    assert "mock_C_001 — tree mode" in svg
    assert "Coordination mode: <b>tree</b>" in viewer.caption_html.value
    edges = viewer.edges_html.value
    assert edges.count("<tr>") == 1 + len(viewer.graph.edges())
    assert "<td>user_1 → agent_2</td><td>authorizes</td><td>Ctl</td>" in edges
    assert "<td>agent_0 → agent_1</td><td>parent</td><td>—</td>" in edges
    assert visible_ids(viewer) == set()  # nothing highlighted yet


def test_humans_are_squares_and_agents_circles(scenario):
    viewer = GraphViewer(scenario)
    svg = viewer.figure_html.value
    for node, gid in viewer._node_ids.items():
        ring = re.search(rf'<g id="{gid}">\s*<path d="([^"]+)"', svg).group(1)
        curved = " C " in ring.replace("\n", " ")
        assert curved == (viewer.graph.participant(node).kind == "agent"), node


def test_highlight_shows_one_node_and_one_edge(scenario):
    viewer = GraphViewer(scenario)
    viewer.highlight("user_1", ("user_1", "agent_2", "authorizes"))
    assert visible_ids(viewer) == {
        viewer._node_ids["user_1"],
        viewer._edge_ids[("user_1", "agent_2")],
    }
    assert "acting: <b class='hb-acting'>user_1 (human)</b>" in viewer.caption_html.value
    assert "user_1 → agent_2 authorizes (Ctl)" in viewer.caption_html.value
    assert "<tr class='hb-current'><td>user_1 → agent_2</td>" in viewer.edges_html.value
    with pytest.raises(KeyError, match="nobody"):
        viewer.highlight("nobody")
    with pytest.raises(KeyError, match="no edge"):
        viewer.highlight("agent_1", ("agent_1", "user_0", "supervises"))


def test_linked_viewer_highlights_actor_and_carrying_edge(trace, scenario):
    viewer = TraceViewer(trace)
    graph = GraphViewer(scenario)
    graph.link(viewer)
    assert (graph.actor, graph.edge) == ("agent_0", ("user_0", "agent_0", "supervises"))
    viewer.slider.value = 3  # agent_0 messages agent_2
    assert (graph.actor, graph.edge) == ("agent_0", ("agent_0", "agent_2", "parent"))
    viewer.slider.value = 4  # agent_2 calls a tool: no edge
    assert (graph.actor, graph.edge) == ("agent_2", None)
    viewer.slider.value = 6  # control request without target, routed to user_1
    assert (graph.actor, graph.edge) == ("agent_2", ("user_1", "agent_2", "authorizes"))
    viewer.slider.value = 8  # user_1 answers
    assert graph.actor == "user_1"
    assert visible_ids(graph) == {graph._node_ids["user_1"], graph._edge_ids[("user_1", "agent_2")]}
    viewer.channel.value = "feedback"
    viewer.participant.value = "agent_1"  # nothing left: nothing highlighted
    assert (graph.actor, graph.edge) == (None, None)
    assert visible_ids(graph) == set()


def test_accepts_a_graph_and_edge_choice_prefers_the_channel(scenario):
    graph = HASGraph.from_scenario(scenario)
    viewer = GraphViewer(graph)
    assert viewer.graph is graph
    assert viewer.edge_for("agent_0", "user_0", "feedback") == ("user_0", "agent_0", "supervises")
    assert viewer.edge_for("agent_1", "user_0", "feedback") is None
    assert viewer.edge_for("agent_0", None) is None


def test_two_viewers_on_one_page_do_not_share_highlight_ids(scenario):
    first, second = GraphViewer(scenario), GraphViewer(scenario)
    assert first.prefix != second.prefix
    first.highlight("user_0")
    assert f'id="{first._node_ids["user_0"]}"' in first.figure_html.value
    assert first.prefix not in second.figure_html.value
    assert visible_ids(second) == set()


def test_the_drawing_scales_to_its_container(scenario):
    viewer = GraphViewer(scenario)
    root = re.search(r"<svg[^>]*>", viewer.figure_html.value).group(0)
    assert "viewBox=" in root and " width=" not in root and " height=" not in root
    assert ".hb-graph-figure svg {width: 100%; height: auto;" in viewer.figure_html.value
    for index in range(len(viewer.graph.participants())):  # node labels carry ids
        assert f'id="{viewer.prefix}-label{index}"' in viewer.figure_html.value


def test_under_a1_the_humans_are_drawn_as_not_reachable(scenario):
    a1 = GraphViewer(scenario, setting={"agency": "A1", "channels": "full"})
    a3 = GraphViewer(scenario, setting={"agency": "A3", "channels": "full"})
    assert a1.unreachable == ["user_0", "user_1"] and a3.unreachable == []
    assert "human not reachable" in a1.figure_html.value
    assert "human not reachable" not in a3.figure_html.value
    assert "not reachable: user_0, user_1" in a1.caption_html.value
    assert "setting <b>A3/full</b>" in a3.caption_html.value
    cont = GraphViewer(scenario, setting={"agency": "A3", "channels": "clar-only"})
    assert cont.unreachable == ["user_1"]  # user_1 is reached over control only
