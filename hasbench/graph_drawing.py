"""Drawing a HAS Graph with matplotlib: a deterministic layout and a labelled figure.

The graph model (participants, relations, routing) is :mod:`hasbench.graph`; this module
only places and draws it, for figures and for the graph widget.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import networkx as nx

from hasbench.graph import CHANNEL_ABBREVIATIONS, CHANNELS, RELATIONS, HASGraph

if TYPE_CHECKING:
    from matplotlib.axes import Axes

_STEP = 1.6  # distance between neighbouring nodes in a drawing
_ARC = 0.12  # curvature of drawn edges, so that opposite edges do not overlap
_NODE_ROOM = (0.35, 0.35)  # half width and height a drawn node occupies
_LABEL_ROOM = (0.6, 0.13)  # half width and height an edge label occupies


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


def draw(graph: HASGraph, ax: Axes | None = None) -> Axes:
    """Draw the graph with matplotlib and return the axes.

    Humans are orange squares, agents blue circles; each edge is labelled with its
    relation and the channels it carries (C = clarification, F = feedback,
    Ctl = control); parallel edges share one arrow with one label line each.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5))
    pos = layout(graph)
    grouped: dict[tuple[str, str], list[str]] = {}
    for source, target, label in graph.edges():
        grouped.setdefault((source, target), []).append(_edge_text(label))
    taken = [(xy, _NODE_ROOM) for xy in pos.values()]
    taken += [((x, y - 0.4), _LABEL_ROOM) for x, y in pos.values()]  # role captions
    for (source, target), texts in grouped.items():
        rad = _curvature(pos, source, target)
        ax.annotate(
            "", xy=pos[target], xytext=pos[source],
            arrowprops={
                "arrowstyle": "-|>", "color": "0.35", "lw": 1.3, "shrinkA": 17,
                "shrinkB": 17, "connectionstyle": f"arc3,rad={rad}",
            },
        )  # fmt: skip
        ax.text(
            *_label_spot(pos[source], pos[target], rad, taken), "\n".join(texts),
            fontsize=7, ha="center", va="center", zorder=4,
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "0.7", "lw": 0.5},
        )  # fmt: skip
    styles = {"agent": ("o", "#4C72B0"), "human": ("s", "#DD8452")}
    for kind, (marker, colour) in styles.items():
        nodes = [p.id for p in graph.participants() if p.kind == kind]
        xs = [pos[n][0] for n in nodes]
        ys = [pos[n][1] for n in nodes]
        ax.scatter(xs, ys, s=900, marker=marker, c=colour, edgecolors="black", zorder=3)
        for node in nodes:
            x, y = pos[node]
            ax.text(x, y, node, fontsize=7, ha="center", va="center", color="white", zorder=5)
            role = graph.participant(node).role
            if role:
                ax.annotate(
                    role, (x, y), xytext=(0, -19), textcoords="offset points", fontsize=7,
                    ha="center", va="top", zorder=5,
                )  # fmt: skip
    handles = [
        Line2D([], [], marker=m, color="w", markerfacecolor=c, markeredgecolor="black",
               markersize=10, label=kind)
        for kind, (m, c) in styles.items()
    ]  # fmt: skip
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    title = f"{graph.task_id} — {graph.mode} mode" if graph.task_id else f"{graph.mode} mode"
    ax.set_title(title)
    xs, ys = [x for x, _ in pos.values()], [y for _, y in pos.values()]
    ax.set_xlim(min(xs) - 0.9, max(xs) + 0.9)
    ax.set_ylim(min(ys) - 1.0, max(ys) + 0.7)  # room for the role under the lowest nodes
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
