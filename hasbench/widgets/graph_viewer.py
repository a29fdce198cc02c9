"""GraphViewer: a HAS Graph drawing whose highlighted node and edge follow a TraceViewer.

The graph is drawn once with :func:`hasbench.graph_drawing.draw` and rendered to inline
SVG that scales to the width of its container (a ``viewBox`` without a fixed size), so no
node is cut off on a small screen. Each node gets a highlight ring (clear of its labels) and
each drawn arrow a highlight copy; both carry SVG ids and are hidden by a style rule.
Highlighting a participant or an edge only rewrites that small style block, so following a
trace costs no redrawing. Given the episode's setting, humans that no agent can reach in it
(every human under A1) are drawn hollow and grey.
"""

from __future__ import annotations

import functools
import html
import io
import itertools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from hasbench import graph_drawing
from hasbench.agency import Setting
from hasbench.graph import CHANNEL_ABBREVIATIONS, CHANNELS, RELATIONS, HASGraph
from hasbench.scenario import Scenario
from hasbench.widgets.trace_viewer import STYLE

if TYPE_CHECKING:
    from hasbench.widgets.trace_viewer import EventRow, TraceViewer

HIGHLIGHT = "#d62728"
RING_RADIUS = graph_drawing.NODE_RADIUS + 4
"""Radius of a highlight ring in points: with its line it stays inside the node's label gap."""
_COUNTER = itertools.count()
_PLACEHOLDER = "hbg-placeholder"
"""Stands for a viewer's id prefix in the cached SVG."""
GRAPH_STYLE = """<style>
.hb-graph-figure svg {width: 100%; height: auto; max-height: 62vh; display: block;}
.hb-graph-viewer {min-width: 0;}
</style>"""


class GraphViewer(widgets.VBox):
    """A widget showing a task's HAS Graph, with who acts now and which edge is used.

    Humans are orange squares and agents blue circles; every edge is labelled with its
    relation and the channels it carries; the title and caption give the coordination
    mode. ``figure_html``, ``caption_html`` and ``edges_html`` are the shown HTML.

    Args:
        source: a scenario or an already built :class:`~hasbench.graph.HASGraph`.
        setting: the episode's setting (a :class:`~hasbench.agency.Setting` or a trace
            header's ``setting``); humans no agent can reach in it are drawn as such.
            None draws every human as reachable.
    """

    def __init__(
        self, source: Scenario | HASGraph, setting: Setting | Mapping[str, Any] | None = None
    ) -> None:
        self.graph = source if isinstance(source, HASGraph) else HASGraph.from_scenario(source)
        self.setting = Setting.model_validate(setting) if isinstance(setting, Mapping) else setting
        channels = self.setting.enabled_channels() if self.setting is not None else None
        self.unreachable = sorted(
            set(self.graph.humans()) - graph_drawing.reachable_humans(self.graph, channels)
        )
        self.prefix = f"hbg{next(_COUNTER)}"
        self._node_ids, self._edge_ids = _svg_ids(self.graph, self.prefix)
        key = None if channels is None else tuple(sorted(channels))
        self._svg = _render_svg(self.graph.to_json(), key).replace(_PLACEHOLDER, self.prefix)
        self.actor: str | None = None
        self.edge: tuple[str, str, str] | None = None
        self.figure_html = widgets.HTML()
        self.caption_html = widgets.HTML()
        self.edges_html = widgets.HTML()
        super().__init__(children=[self.figure_html, self.caption_html, self.edges_html])
        self.add_class("hb-graph-viewer")
        self.highlight(None, None)

    def highlight(self, actor: str | None, edge: tuple[str, str, str] | None = None) -> None:
        """Highlight a participant and an edge ``(source, target, label)``; None clears."""
        if actor is not None:
            self.graph.participant(actor)  # raises KeyError naming an unknown participant
        if edge is not None and edge not in self.graph.edges():
            raise KeyError(f"{self.graph.task_id}: no edge {edge!r}")
        self.actor, self.edge = actor, edge
        shown = []
        if actor is not None:
            shown.append(f"#{self._node_ids[actor]}")
        if edge is not None:
            shown.append(f"#{self._edge_ids[edge[:2]]}")
        hidden = ", ".join(f"#{i}" for i in [*self._node_ids.values(), *self._edge_ids.values()])
        rules = f"{hidden} {{visibility: hidden;}}"
        if shown:
            rules += f" {', '.join(shown)} {{visibility: visible;}}"
        self.figure_html.value = (
            f"{STYLE}{GRAPH_STYLE}<style>{rules}</style>"
            f"<div id='{self.prefix}' class='hb-graph-figure'>{self._svg}</div>"
        )
        self.caption_html.value = self._caption()
        self.edges_html.value = self._edges_table()

    def link(self, viewer: TraceViewer) -> None:
        """Follow ``viewer``: highlight the current event's actor and the edge it used."""
        viewer.on_step(self.follow)

    def follow(self, row: EventRow | None) -> None:
        """Highlight what one trace event involves (its actor and the edge it travelled)."""
        if row is None or row.actor not in self._node_ids:
            self.highlight(None, None)
            return
        self.highlight(row.actor, self.edge_for(row.actor, row.target, row.channel))

    def edge_for(
        self, actor: str, target: str | None, channel: str | None = None
    ) -> tuple[str, str, str] | None:
        """The edge between ``actor`` and ``target`` that carries ``channel``.

        Either direction counts (a request from an agent to its supervisor travels the
        ``supervises`` edge). Without a channel, an edge that allows messages is preferred.
        """
        if target is None or target not in self._node_ids:
            return None
        candidates = [
            (s, t, label) for s, t, label in self.graph.edges() if {s, t} == {actor, target}
        ]
        if channel is not None:
            preferred = [e for e in candidates if channel in RELATIONS[e[2]].channels]
        else:
            preferred = [e for e in candidates if RELATIONS[e[2]].messages]
        chosen = preferred or candidates
        return chosen[0] if chosen else None

    # -- captions ------------------------------------------------------------------

    def _caption(self) -> str:
        acting = "nobody"
        if self.actor is not None:
            acting = f"{self.actor} ({self.graph.participant(self.actor).kind})"
        edge = "none"
        if self.edge is not None:
            s, t, label = self.edge
            edge = f"{s} → {t} {label}{_channels_text(label)}"
        setting = ""
        if self.setting is not None:
            setting = f" · setting <b>{html.escape(self.setting.label())}</b>"
            if self.unreachable:
                setting += (
                    f" <span class='hb-muted hb-unreachable'>(not reachable: "
                    f"{html.escape(', '.join(self.unreachable))})</span>"
                )
        return (
            f"<div class='hb-panel hb-graph-caption'>Coordination mode: "
            f"<b>{html.escape(self.graph.mode)}</b>{setting} · acting: "
            f"<b class='hb-acting'>{html.escape(acting)}</b> · edge: "
            f"<b class='hb-edge'>{html.escape(edge)}</b></div>"
        )

    def _edges_table(self) -> str:
        lines = []
        for s, t, label in self.graph.edges():
            relation = RELATIONS[label]
            css = " class='hb-current'" if self.edge == (s, t, label) else ""
            lines.append(
                f"<tr{css}><td>{html.escape(s)} → {html.escape(t)}</td>"
                f"<td>{html.escape(label)}</td>"
                f"<td>{html.escape(_channels_text(label).strip(' ()') or '—')}</td>"
                f"<td>{html.escape(relation.description)}</td></tr>"
            )
        return (
            f"<div class='hb-panel hb-edges'><details><summary>Edges: who may reach whom "
            f"({len(lines)})</summary><table><tr><th>edge</th><th>relation</th>"
            f"<th>channels</th><th>meaning</th></tr>{''.join(lines)}</table></details></div>"
        )


def _channels_text(label: str) -> str:
    channels = [CHANNEL_ABBREVIATIONS[c] for c in CHANNELS if c in RELATIONS[label].channels]
    return f" ({'/'.join(channels)})" if channels else ""


def _svg_ids(graph: HASGraph, prefix: str) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """SVG ids of the highlight ring of each node and the highlight arrow of each edge pair.

    A node's id label is ``<prefix>-label<i>`` for the ring ``<prefix>-n<i>``.
    """
    nodes = {p.id: f"{prefix}-n{i}" for i, p in enumerate(graph.participants())}
    pairs = dict.fromkeys((s, t) for s, t, _ in graph.edges())
    return nodes, {pair: f"{prefix}-e{i}" for i, pair in enumerate(pairs)}


@functools.lru_cache(maxsize=32)
def _render_svg(graph_json: str, channels: tuple[str, ...] | None) -> str:
    """The drawing with hidden highlight rings and arrows, as inline SVG (cached per graph).

    The root element keeps its ``viewBox`` and loses its fixed width and height, so it
    scales to its container; node labels get ids derived from the placeholder prefix.
    """
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation

    graph = HASGraph.from_json(graph_json)
    node_ids, edge_ids = _svg_ids(graph, _PLACEHOLDER)
    pos = graph_drawing.layout(graph)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": graph_json}):
        figure = Figure(figsize=graph_drawing.figure_size(graph))
        ax = figure.add_subplot()
        graph_drawing.draw(graph, ax, channels)
        arrows = {
            (a.xyann, a.xy): a
            for a in list(ax.texts)
            if isinstance(a, Annotation) and a.arrow_patch is not None and not a.get_text()
        }
        for (source, target), gid in edge_ids.items():
            drawn = arrows.get((pos[source], pos[target]))
            props = dict(drawn.arrowprops) if drawn is not None else {"arrowstyle": "-|>"}
            props.update(color=HIGHLIGHT, lw=3.5, linestyle="-")
            copy = ax.annotate("", xy=pos[target], xytext=pos[source], arrowprops=props)
            copy.arrow_patch.set_gid(gid)
            copy.set_zorder(2)
        for node, gid in node_ids.items():
            kind = graph.participant(node).kind
            ring = ax.scatter(
                [pos[node][0]], [pos[node][1]], s=(2 * RING_RADIUS) ** 2,
                marker="s" if kind == "human" else "o", facecolors="none",
                edgecolors=HIGHLIGHT, linewidths=2.5, zorder=6,
            )  # fmt: skip
            ring.set_gid(gid)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    root = text[: text.index(">") + 1]
    sized = re.sub(r'\s(width|height)="[^"]*"', "", root)
    text = sized.replace("<svg", '<svg class="hb-graph-svg"', 1) + text[len(root) :]
    for index, participant in enumerate(graph.participants()):
        text = text.replace(
            f'id="node-label-{participant.id}"', f'id="{_PLACEHOLDER}-label{index}"'
        )
    return text
