"""Jupyter widgets to explore traces, HAS Graphs and results stores, and to play a human."""

from hasbench.widgets.demo import small_run
from hasbench.widgets.episode_view import EpisodeView
from hasbench.widgets.graph_viewer import GraphViewer
from hasbench.widgets.human_console import HumanConsole, play
from hasbench.widgets.run_browser import RunBrowser
from hasbench.widgets.trace_viewer import EventRow, TraceViewer

__all__ = [
    "EpisodeView", "EventRow", "GraphViewer", "HumanConsole", "RunBrowser", "TraceViewer", "play",
    "small_run",
]  # fmt: skip
