"""Drawing a HAS Graph with matplotlib: a deterministic layout and a labelled figure.

The graph model (participants, relations, routing) is :mod:`hasbench.graph`; this module
only places and draws it, for figures and for the graph widget.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING

import networkx as nx

from hasbench.graph import CHANNEL_ABBREVIATIONS, CHANNELS, RELATIONS, HASGraph

if TYPE_CHECKING:
    from matplotlib.axes import Axes

AGENT_COLOUR = "#4C72B0"
HUMAN_COLOUR = "#DD8452"
INCHES_PER_UNIT = 0.85
"""Inches of figure per layout unit (see :func:`figure_size`)."""
NODE_RADIUS = 13.0
"""Half the width of a drawn node, in points (its marker area is ``(2 r)²``); its id
is written from ``r + 7`` points below its centre, so a ring up to ``r + 6`` stays clear."""
_NODE_SIZE = (2 * NODE_RADIUS) ** 2
_STEP = 1.6  # distance between neighbouring nodes in a drawing
_ARC = 0.12  # curvature of drawn edges, so that opposite edges do not overlap
_MARGIN = (1.0, 1.0, 0.5)  # layout units left/right, below and above the outer nodes
_NODE_ROOM = (0.3, 0.3)  # half width and height a drawn node occupies
_LABEL_ROOM = (0.6, 0.13)  # half width and height an edge label occupies
_ID_DROP, _ROLE_DROP = NODE_RADIUS + 7, NODE_RADIUS + 19  # points below a node's centre
_CAPTION_DROP = 0.5  # layout units from a node's centre to the middle of its captions
_CAPTION_ROOM = (0.65, 0.2)
_NODE_FONT, _ROLE_FONT, _EDGE_FONT, _TITLE_FONT = 9, 8, 8, 10
_FADED, _FADED_TEXT = "0.7", "0.45"


def layout(graph: HASGraph) -> dict[str, tuple[float, float]]:
    """Deterministic node positions: humans on the top row, agents below.

    A chain is one row in path order; star and tree agents are layered by depth; in
    graph mode agents sit on a circle (a row for two).
    """
    agents, sub = graph.agents(), graph.agent_subgraph()
    order = agents.index
    if graph.mode == "graph" or not nx.is_directed_acyclic_graph(sub):
        layers = [agents]
    elif graph.mode == "chain":
        layers = [list(nx.lexicographical_topological_sort(sub, key=order))]
    else:
        layers = [sorted(g, key=order) for g in nx.topological_generations(sub)]
    positions = {
        node: (_STEP * (i - (len(layer) - 1) / 2), -_STEP * depth)
        for depth, layer in enumerate(layers)
        for i, node in enumerate(layer)
    }
    if graph.mode == "graph" and len(agents) > 2:
        ring = nx.circular_layout(agents, scale=_STEP)
        positions = {n: (float(x), float(y) - _STEP) for n, (x, y) in ring.items()}
    top = max((y for _, y in positions.values()), default=0.0) + _STEP
    wanted = {}
    for human in graph.humans():
        xs = [positions[n][0] for n in graph.neighbors(human) if n in positions]
        wanted[human] = sum(xs) / len(xs) if xs else 0.0
    x = -float("inf")
    for human in sorted(wanted, key=wanted.get):
        x = max(wanted[human], x + 1.5 * _STEP)
        positions[human] = (x, top)
    return positions


def reachable_humans(graph: HASGraph, channels: Collection[str] | None = None) -> set[str]:
    """Humans an agent can reach over one of ``channels`` (every human when None).

    Under A1 no channel is enabled, so no human can be reached; an ablation that keeps
    only control leaves out humans joined to the agents by clarification edges alone.
    """
    if channels is None:
        return set(graph.humans())
    enabled = set(channels)
    return {
        human
        for human in graph.humans()
        if any(graph.channels_between(agent, human) & enabled for agent in graph.agents())
    }


def figure_size(graph: HASGraph) -> tuple[float, float]:
    """A figure size (inches) at which text keeps one size relative to the drawing.

    One layout unit gets :data:`INCHES_PER_UNIT`, so fonts set in points stay readable when
    the drawing is scaled to its container.
    """
    pos = layout(graph)
    xs, ys = [x for x, _ in pos.values()], [y for _, y in pos.values()]
    width = (max(xs) - min(xs) + 2 * _MARGIN[0]) * INCHES_PER_UNIT
    height = (max(ys) - min(ys) + _MARGIN[1] + _MARGIN[2]) * INCHES_PER_UNIT + 0.8
    return max(width, 3.2), height


def draw(graph: HASGraph, ax: Axes | None = None, channels: Collection[str] | None = None) -> Axes:
    """Draw the graph with matplotlib and return the axes.

    Humans are orange squares, agents blue circles; each node's id is written under it,
    its role below that. Each edge is labelled with its relation and the channels it
    carries (C = clarification, F = feedback, Ctl = control); parallel edges share one
    arrow with one label line each. With ``channels`` (those the setting enables), humans
    no agent can reach over them are drawn as grey crossed-out squares with dashed edges
    (legend: "human not reachable").

    The id label of node ``pid`` has the SVG id ``node-label-<pid>``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if ax is None:
        _, ax = plt.subplots(figsize=figure_size(graph))
    pos = layout(graph)
    reachable = reachable_humans(graph, channels)
    cut_off = set(graph.humans()) - reachable
    grouped: dict[tuple[str, str], list[str]] = {}
    for source, target, label in graph.edges():
        grouped.setdefault((source, target), []).append(_edge_text(label))
    taken = [(xy, _NODE_ROOM) for xy in pos.values()]
    taken += [((x, y - _CAPTION_DROP), _CAPTION_ROOM) for x, y in pos.values()]  # captions
    for (source, target), texts in grouped.items():
        rad = _curvature(pos, source, target)
        faded = bool({source, target} & cut_off)
        ax.annotate(
            "", xy=pos[target], xytext=pos[source],
            arrowprops={
                "arrowstyle": "-|>", "color": _FADED if faded else "0.35", "lw": 1.3,
                "shrinkA": 17, "shrinkB": 17, "connectionstyle": f"arc3,rad={rad}",
                "linestyle": "--" if faded else "-",
            },
        )  # fmt: skip
        ax.text(
            *_label_spot(pos[source], pos[target], rad, taken), "\n".join(texts),
            fontsize=_EDGE_FONT, ha="center", va="center", zorder=4,
            color=_FADED if faded else "black",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "0.7", "lw": 0.5},
        )  # fmt: skip
    styles = {"agent": ("o", AGENT_COLOUR), "human": ("s", HUMAN_COLOUR)}
    groups = [
        ("agent", graph.agents(), False),
        ("human", [h for h in graph.humans() if h in reachable], False),
        ("human", [h for h in graph.humans() if h in cut_off], True),
    ]
    for kind, nodes, faded in groups:
        if faded and not nodes:
            continue
        marker, colour = styles[kind]
        ax.scatter(
            [pos[n][0] for n in nodes], [pos[n][1] for n in nodes], s=_NODE_SIZE, marker=marker,
            c="white" if faded else colour, edgecolors=_FADED if faded else "black",
            linestyles="--" if faded else "-", linewidths=1.2, zorder=3,
        )  # fmt: skip
        if faded:  # crossed out: no agent can reach them in this setting
            ax.scatter(
                [pos[n][0] for n in nodes], [pos[n][1] for n in nodes], s=_NODE_SIZE / 2,
                marker="x", c=_FADED, linewidths=1.2, zorder=3,
            )  # fmt: skip
        for node in nodes:
            x, y = pos[node]
            ax.annotate(
                node, (x, y), xytext=(0, -_ID_DROP), textcoords="offset points",
                fontsize=_NODE_FONT, ha="center", va="top", zorder=5, fontweight="bold",
                color=_FADED_TEXT if faded else "black", gid=f"node-label-{node}",
            )  # fmt: skip
            role = graph.participant(node).role
            if role:
                ax.annotate(
                    role, (x, y), xytext=(0, -_ROLE_DROP), textcoords="offset points",
                    fontsize=_ROLE_FONT, ha="center", va="top", zorder=5,
                    color=_FADED_TEXT if faded else "0.25",
                )  # fmt: skip
    handles = [
        Line2D([], [], marker=m, color="w", markerfacecolor=c, markeredgecolor="black",
               markersize=10, label=kind)
        for kind, (m, c) in styles.items()
    ]  # fmt: skip
    if cut_off:
        handles.append(
            Line2D([], [], marker="$\\boxtimes$", color=_FADED, linestyle="none",
                   markersize=11, label="human not reachable")
        )  # fmt: skip
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=len(handles),
        fontsize=_ROLE_FONT,
        frameon=False,
    )
    title = f"{graph.task_id} — {graph.mode} mode" if graph.task_id else f"{graph.mode} mode"
    ax.set_title(title, fontsize=_TITLE_FONT)
    xs, ys = [x for x, _ in pos.values()], [y for _, y in pos.values()]
    ax.set_xlim(min(xs) - _MARGIN[0], max(xs) + _MARGIN[0])
    ax.set_ylim(min(ys) - _MARGIN[1], max(ys) + _MARGIN[2])  # room for the lowest captions
    ax.set_aspect("equal", adjustable="box")
    ax.axis("off")
    return ax


def _arc_point(
    start: tuple[float, float], end: tuple[float, float], rad: float, t: float
) -> tuple[float, float]:
    """The point at parameter ``t`` of matplotlib's ``arc3`` curve from start to end."""
    (x0, y0), (x1, y1) = start, end
    cx, cy = (x0 + x1) / 2 + rad * (y1 - y0), (y0 + y1) / 2 - rad * (x1 - x0)
    return (
        (1 - t) ** 2 * x0 + 2 * t * (1 - t) * cx + t**2 * x1,
        (1 - t) ** 2 * y0 + 2 * t * (1 - t) * cy + t**2 * y1,
    )


def _curvature(pos: dict[str, tuple[float, float]], source: str, target: str) -> float:
    """A gentle bend, or a stronger one when the straight line would run through a node."""
    start, end = pos[source], pos[target]
    for node, point in pos.items():
        if node not in (source, target) and _distance_to_segment(point, start, end) < 0.4:
            return 3 * _ARC
    return _ARC


def _distance_to_segment(
    point: tuple[float, float], start: tuple[float, float], end: tuple[float, float]
) -> float:
    (px, py), (x0, y0), (x1, y1) = point, start, end
    length2 = (x1 - x0) ** 2 + (y1 - y0) ** 2
    t = ((px - x0) * (x1 - x0) + (py - y0) * (y1 - y0)) / length2 if length2 else 0.0
    t = min(1.0, max(0.0, t))
    return math.dist(point, (x0 + t * (x1 - x0), y0 + t * (y1 - y0)))


def _label_spot(
    start: tuple[float, float],
    end: tuple[float, float],
    rad: float,
    taken: list[tuple[tuple[float, float], tuple[float, float]]],
) -> tuple[float, float]:
    """Where an edge label goes: on its arc, clear of nodes and of earlier labels.

    The first choice is the middle, or one layer below the start for edges spanning
    several layers; ``taken`` holds (point, half-size) of what is already drawn and gets
    the chosen spot.
    """
    height = abs(end[1] - start[1])
    first = min(0.5, 0.55 * _STEP / height) if height else 0.5
    spots = [_arc_point(start, end, rad, t) for t in (first, 0.5, 0.35, 0.65, 0.2, 0.8)]

    def clearance(spot: tuple[float, float]) -> float:
        """Above 1 when the label's box overlaps nothing taken."""
        return min(
            max(abs(spot[0] - x) / (w + _LABEL_ROOM[0]), abs(spot[1] - y) / (h + _LABEL_ROOM[1]))
            for (x, y), (w, h) in taken
        )

    chosen = next((spot for spot in spots if clearance(spot) > 1), max(spots, key=clearance))
    taken.append((chosen, _LABEL_ROOM))
    return chosen


def _edge_text(label: str) -> str:
    channels = [CHANNEL_ABBREVIATIONS[c] for c in CHANNELS if c in RELATIONS[label].channels]
    return f"{label} ({'/'.join(channels)})" if channels else label
