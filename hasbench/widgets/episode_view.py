"""EpisodeView: one episode's trace and its HAS Graph side by side, linked.

The graph sits to the right of the trace viewer and stays in view while the event log
scrolls, so stepping through the trace shows who acts on which edge without scrolling.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from hasbench.scenario import Scenario
from hasbench.trace import Trace
from hasbench.widgets.graph_viewer import GraphViewer
from hasbench.widgets.trace_viewer import TraceViewer


class EpisodeView(widgets.HBox):
    """A :class:`TraceViewer` (left) and its linked :class:`GraphViewer` (right).

    The graph is drawn for the episode's setting (humans no agent can reach in it are
    drawn as such). Without a scenario, or when it cannot be had, a note says why in the
    graph's place.

    Attributes:
        viewer: the trace viewer.
        graph: the graph viewer, or None.

    Args:
        trace: a trace or the path of a JSONL trace file.
        scenario: the task; or a text saying why there is none (shown in the graph's place).
        outcome, metrics, title: passed to :class:`TraceViewer`.
    """

    def __init__(
        self,
        trace: Trace | str | Path,
        scenario: Scenario | str | None = None,
        outcome: Any = None,
        metrics: Mapping[str, Any] | None = None,
        title: str | None = None,
    ) -> None:
        task = scenario if isinstance(scenario, Scenario) else None
        self.viewer = TraceViewer(trace, scenario=task, outcome=outcome, metrics=metrics,
                                  title=title)  # fmt: skip
        self.graph: GraphViewer | None = None
        if task is not None:
            self.graph = GraphViewer(task, setting=self.viewer.trace.header.setting)
            self.graph.link(self.viewer)
            side: widgets.Widget = self.graph
        else:
            why = scenario if isinstance(scenario, str) else "give the task to see its graph"
            side = widgets.HTML(
                f"<div class='hb-panel hb-muted'>No graph: {html.escape(why)}</div>"
            )
        self.viewer.layout = widgets.Layout(flex="3 1 0", min_width="0")
        side.layout = widgets.Layout(flex="2 1 0", min_width="0")
        side.add_class("hb-sticky")
        super().__init__(
            children=[self.viewer, side],
            layout=widgets.Layout(width="100%", align_items="flex-start", grid_gap="12px"),
        )
        self.add_class("hb-episode-view")
