"""RunBrowser: pick an episode from a results store and look at its trace and graph.

The store is read with :func:`hasbench.runner.load_store`, which skips damaged records and
traces and says which; the full record of the chosen episode (outcome, metrics, judged
process scores) and its trace file come from the store itself, and the task (for the HAS
Graph) from the experiment's task files.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd

from hasbench.runner import ExperimentError, load_experiment, load_store, select_tasks
from hasbench.scenario import Scenario, ScenarioError
from hasbench.widgets.graph_viewer import GraphViewer
from hasbench.widgets.trace_viewer import STYLE, TraceViewer

SELECTORS = ("agent_model", "setting", "task_id", "seed")
"""The results-table columns the dropdowns choose from, in display order."""


class RunBrowser(widgets.VBox):
    """A widget to browse a results store episode by episode.

    Dropdowns choose the experiment (when ``results_dir`` holds several), the agent model,
    the setting (the experiment cell, e.g. ``A3/full``), the task and the seed; the
    episode's :class:`TraceViewer` and linked :class:`GraphViewer` open side by side. In
    compare mode a second setting of the same task, model and seed is shown next to the
    first, both moved by one slider over the trace's logical steps.

    Attributes:
        frame: the results table of the chosen experiment.
        viewer, graph_viewer: the open episode's widgets (None when nothing is open).
        compare_viewers: the two viewers of compare mode (empty otherwise).
        message: HTML that explains why nothing is shown, when so.
        skipped: what the store could not show (damaged records and traces, with paths).

    Args:
        results_dir: a results store (``<dir>/episodes``), or a folder of stores.
    """

    def __init__(self, results_dir: str | Path) -> None:
        root = Path(results_dir)
        if (root / "episodes").is_dir():
            stores = {root.name: root}
        else:
            stores = {p.name: p for p in sorted(root.glob("*")) if (p / "episodes").is_dir()}
        if not stores:
            raise ExperimentError(f"{root}: no results store here (no episodes/ folder)")
        self.stores = stores
        self._scenarios: dict[str, dict[str, Scenario] | str] = {}
        self.frame = pd.DataFrame()
        self.skipped: list[str] = []
        self.viewer: TraceViewer | None = None
        self.graph_viewer: GraphViewer | None = None
        self.compare_viewers: list[TraceViewer] = []

        self.experiment = widgets.Dropdown(options=list(stores), description="experiment")
        self.selectors = {
            name: widgets.Dropdown(description=name.replace("_", " ")) for name in SELECTORS
        }
        self.compare = widgets.Checkbox(value=False, description="compare with")
        self.other_setting = widgets.Dropdown(description="setting B")
        self.compare_slider = widgets.IntSlider(
            value=0, min=0, max=0, description="step", layout=widgets.Layout(width="420px")
        )
        self.message = widgets.HTML()
        self.skipped_note = widgets.HTML()
        self.body = widgets.Box()
        controls = [
            widgets.HBox([self.experiment, self.selectors["agent_model"]]),
            widgets.HBox([self.selectors["setting"], self.selectors["task_id"]]),
            widgets.HBox([self.selectors["seed"], self.compare, self.other_setting]),
        ]
        children = [widgets.HTML(STYLE), *controls, self.skipped_note, self.message, self.body]
        super().__init__(children=children)
        self.add_class("hb-run-browser")
        self._loading = False
        self.experiment.observe(lambda _: self._load_experiment(), names="value")
        for control in (*self.selectors.values(), self.compare, self.other_setting):
            control.observe(lambda _: self._open(), names="value")
        self.compare_slider.observe(lambda _: self._compare_step(), names="value")
        self._load_experiment()

    @property
    def store(self) -> Path:
        """The chosen results store."""
        return self.stores[self.experiment.value]

    def select(self, **values: Any) -> None:
        """Set dropdowns by selector name (see ``SELECTORS``) and open the episode they name."""
        unknown = set(values) - set(SELECTORS)
        if unknown:
            raise KeyError(f"unknown selector(s) {sorted(unknown)}; known: {list(SELECTORS)}")
        self._loading = True
        try:
            for name, value in values.items():
                self.selectors[name].value = value
        finally:
            self._loading = False
        self._open()

    # -- loading ---------------------------------------------------------------------

    def _load_experiment(self) -> None:
        self.frame, damaged = load_store(self.store)
        self.skipped = [str(item) for item in damaged]
        self.skipped_note.value = (
            f"<div class='hb-panel hb-error'>Skipped {len(damaged)} damaged file(s); the next "
            "run quarantines them and runs their episodes again:<br>"
            + "<br>".join(html.escape(item) for item in self.skipped)
            + "</div>"
            if damaged
            else ""
        )
        self._loading = True
        try:
            for name, control in self.selectors.items():
                options = sorted(self.frame[name].dropna().unique().tolist())
                control.options = options
                control.value = options[0] if options else None
            settings = list(self.selectors["setting"].options)
            self.other_setting.options = settings
            self.other_setting.value = settings[-1] if settings else None
        finally:
            self._loading = False
        self._open()

    def _scenario(self, task_id: str) -> Scenario | str:
        """The task of this store's experiment, or the reason it cannot be had."""
        key = self.experiment.value
        if key not in self._scenarios:
            try:
                experiment = load_experiment(self.store / "experiment.yaml")
                tasks = select_tasks(experiment.tasks)
                self._scenarios[key] = {s.task_id: s for s in tasks}
            except (ExperimentError, ScenarioError, OSError) as exc:
                self._scenarios[key] = f"cannot load the experiment's tasks: {exc}"
        found = self._scenarios[key]
        if isinstance(found, str):
            return found
        return found.get(task_id, f"task {task_id} is not in the experiment's task files")

    def _row(self, setting: str) -> pd.Series | None:
        chosen = {name: control.value for name, control in self.selectors.items()}
        chosen["setting"] = setting
        match = self.frame
        for name, value in chosen.items():
            match = match[match[name] == value]
        return match.iloc[0] if len(match) else None

    def _episode(self, row: pd.Series) -> tuple[TraceViewer | None, Scenario | str]:
        """The viewer for one results row, and its scenario (or why there is none)."""
        scenario = self._scenario(row["task_id"])
        if row["trace"] is None or pd.isna(row["trace"]):
            return None, scenario
        record = json.loads((self.store / "episodes" / f"{row['key']}.json").read_text())
        metrics = {**(record.get("metrics") or {}), **(record.get("process") or {})}
        trace_path = self.store / row["trace"]
        title = f"{row['task_id']} · {row['setting']} · {row['agent_model']} · seed {row['seed']}"
        viewer = TraceViewer(
            trace_path, outcome=record.get("outcome"), metrics=metrics, title=title
        )
        if (
            isinstance(scenario, Scenario)
            and scenario.content_hash() != viewer.trace.header.scenario_hash
        ):
            scenario = (
                f"task {row['task_id']} changed since this episode ran (content hash differs)"
            )
        return viewer, scenario

    # -- showing ---------------------------------------------------------------------

    def _open(self) -> None:
        if self._loading:
            return
        self.viewer, self.graph_viewer, self.compare_viewers = None, None, []
        self.other_setting.disabled = not self.compare.value
        first = self._row(self.selectors["setting"].value)
        if first is None:
            self._show(self._missing(self.selectors["setting"].value), [])
            return
        if self.compare.value:
            self._open_compare(first)
            return
        try:
            viewer, scenario = self._episode(first)
        except (OSError, ValueError) as exc:  # changed on disk since the store was read
            self._show(f"This episode cannot be shown: {exc}", [])
            return
        if viewer is None:
            self._show(f"This episode failed and has no trace: {first['error']}", [])
            return
        self.viewer = viewer
        self.graph_viewer, side = self._graph(viewer, scenario)
        viewer.layout.width = "60%"
        side.layout.width = "40%"
        self._show("", [viewer, side])

    def _open_compare(self, first: pd.Series) -> None:
        second = self._row(self.other_setting.value)
        if second is None:
            self._show(self._missing(self.other_setting.value), [])
            return
        columns = []
        for row in (first, second):
            try:
                viewer, scenario = self._episode(row)
            except (OSError, ValueError) as exc:  # changed on disk since the store was read
                self._show(f"{row['setting']}: this episode cannot be shown: {exc}", [])
                return
            if viewer is None:
                self.compare_viewers = []
                self._show(f"{row['setting']}: this episode failed: {row['error']}", [])
                return
            self.compare_viewers.append(viewer)
            _, graph = self._graph(viewer, scenario)
            columns.append(widgets.VBox([viewer, graph], layout=widgets.Layout(width="50%")))
        last = max(v.rows[-1].step if v.rows else 0 for v in self.compare_viewers)
        self.compare_slider.max = last
        self.compare_slider.value = 0
        self._compare_step()
        self._show("", [widgets.VBox([self.compare_slider, widgets.HBox(columns)])])

    @staticmethod
    def _graph(
        viewer: TraceViewer, scenario: Scenario | str
    ) -> tuple[GraphViewer | None, widgets.Widget]:
        """The episode's graph linked to its viewer, or a note saying why there is none."""
        if isinstance(scenario, str):
            note = widgets.HTML(f"<div class='hb-muted'>No graph: {html.escape(scenario)}</div>")
            return None, note
        graph = GraphViewer(scenario)
        graph.link(viewer)
        return graph, graph

    def _compare_step(self) -> None:
        for viewer in self.compare_viewers:
            viewer.show_step(self.compare_slider.value)

    def _missing(self, setting: str) -> str:
        chosen = ", ".join(
            f"{name}={setting if name == 'setting' else control.value}"
            for name, control in self.selectors.items()
        )
        return f"No episode in {self.store} for {chosen}."

    def _show(self, message: str, children: list[widgets.Widget]) -> None:
        self.message.value = (
            f"<div class='hb-panel hb-muted'>{html.escape(message)}</div>" if message else ""
        )
        self.body.children = children
