"""RunBrowser: an experiment's episodes as a table; a chosen row opens its trace and graph.

The browser shows exactly the episodes of one experiment (a store can hold several: the
dropdown picks one; by default the one run last), read with
:func:`hasbench.runner.load_store`, which skips damaged records and traces and says which.
The full record of an opened episode (outcome, metrics, judged process scores) and its
trace (checked against the SHA-256 its record holds) come from the store itself, and the
task (for the HAS Graph) from the experiment's own task files.

Filtering, searching and sorting work on columns prepared once per experiment (the quick
filters' masks, the lower-cased search text, the sort keys), so each answers in
milliseconds on a thousand episodes and well under two seconds on 50,000
(``benchmarks/run_browser.py``).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd

from hasbench import glossary
from hasbench.runner import ExperimentError, load_store, select_tasks
from hasbench.runner.store import StoredExperiment, open_trace, stored_experiments
from hasbench.scenario import Scenario, ScenarioError
from hasbench.widgets.episode_view import EpisodeView
from hasbench.widgets.graph_viewer import GraphViewer
from hasbench.widgets.trace_viewer import STYLE, TraceViewer

SELECTORS = ("agent_model", "user_model", "setting", "task_id", "seed")
"""The results columns that name one episode of a store."""
PARTNERS = ("task_id", "agent_model", "user_model", "seed")
"""What two episodes of one task share when they differ only in their setting."""
TABLE_COLUMNS = {
    "task_id": "task",
    "setting": "setting",
    "agent_model": "agent backend",
    "user_model": "user simulator",
    "seed": "seed",
    "success": "success",
    "task_score": "score",
    "hir": "HIR",
    "safe": "safe",
    "error": "error",
}
"""Results column -> table heading, in display order (user simulator and seed only when a
store's experiment has several)."""
SEARCHED = ("task_id", "setting", "agent_model", "user_model")
"""The columns the filter box searches."""
QUICK_FILTERS = {
    "all": "all episodes",
    "rescued": "A1 failures rescued under A3",
    "errors": "errors",
    "unsafe": "unsafe",
}
"""Quick filter key -> button label (each label gets the number of matching episodes)."""
PAGE_SIZE = 12
"""Table rows per page."""


class RunBrowser(widgets.VBox):
    """A widget to browse a results store: a summary table, then any episode in full.

    The table has one row per episode of the chosen experiment (task, setting, agent
    backend, user simulator and seed when there are several, success, Task Score, HIR,
    safety, error). Click a heading to sort by it (again to reverse), type in the filter
    box to keep rows whose task, setting, backend or simulator contain the text, and use
    the quick filters for the interesting cases: A1 failures rescued under A3, errors
    (episodes that ended in error), unsafe episodes. Damaged records and traces are
    skipped and named above the table. Clicking a row's task opens the episode below as an
    :class:`EpisodeView` (trace and graph side by side). With *compare with* ticked, the
    same task, backend and seed under a second setting opens next to it, both moved by one
    slider over turns; opening a row under the *rescued* filter compares it with its A1 run.

    Attributes:
        experiments: label -> (store, experiment) for every experiment found.
        frame: the results table of the chosen experiment (as loaded).
        rows: the table as shown (filtered and sorted).
        columns: the results columns the table shows (seed only when there are several).
        viewer, graph_viewer: the open episode's widgets (None when nothing is open).
        compare_viewers: the two viewers of compare mode (empty otherwise).
        message: HTML that explains why nothing is shown, when so.
        skipped: what the store could not show (damaged records and traces, with paths).

    Args:
        results_dir: a results store (``<dir>/episodes``), or a folder of stores.
        experiment: the experiment to open first (its key or name; default: the one run
            last into the first store).
    """

    def __init__(self, results_dir: str | Path, experiment: str | None = None) -> None:
        root = Path(results_dir)
        if (root / "episodes").is_dir():
            stores = [root]
        else:
            stores = [p for p in sorted(root.glob("*")) if (p / "episodes").is_dir()]
        if not stores:
            raise ExperimentError(f"{root}: no results store here (no episodes/ folder)")
        self.experiments = _experiments(stores)
        self._scenarios: dict[str, dict[str, Scenario] | str] = {}
        self._prepared: dict[str, Any] = {}
        self.frame = pd.DataFrame()
        self.rows = pd.DataFrame()
        self.sort_column, self.ascending = "task_id", True
        self.page = 0
        self.opened: pd.Series | None = None
        self.skipped: list[str] = []
        self.viewer: TraceViewer | None = None
        self.graph_viewer: GraphViewer | None = None
        self.compare_viewers: list[TraceViewer] = []
        self._quiet = False

        wide = {"description_width": "initial"}
        labels = list(self.experiments)
        first = labels[0] if len(stores) > 1 else labels[-1]  # one store: the one run last
        if experiment is not None:
            named = [k for k, (_, e) in self.experiments.items()
                     if e is not None and experiment in (e.key, e.name)]  # fmt: skip
            if not named:
                raise ExperimentError(f"{root}: no experiment {experiment!r} here "
                                      f"(experiments: {'; '.join(labels)})")  # fmt: skip
            first = named[-1]
        self.experiment = widgets.Dropdown(options=labels, value=first, description="experiment",
                                           style=wide)  # fmt: skip
        self.quick = widgets.ToggleButtons(options=[], style={"button_width": "auto"})
        self.search = widgets.Text(
            placeholder="task, setting, backend or simulator contains…", description="filter",
            style=wide, continuous_update=True,
        )  # fmt: skip
        self.table = widgets.GridBox(layout=widgets.Layout(grid_gap="0px 6px"))
        self.table.add_class("hb-results-table")
        self.pager = widgets.HTML()
        self.previous_page = widgets.Button(description="◀", layout=widgets.Layout(width="36px"))
        self.next_page = widgets.Button(description="▶", layout=widgets.Layout(width="36px"))
        self.previous_page.on_click(lambda _: self._turn_page(-1))
        self.next_page.on_click(lambda _: self._turn_page(+1))
        self.compare = widgets.Checkbox(value=False, description="compare with", style=wide,
                                        indent=False)  # fmt: skip
        self.other_setting = widgets.Dropdown(description="setting", style=wide)
        self.compare_slider = widgets.IntSlider(
            value=0, min=0, max=0, description="turn", tooltip=glossary.define("turn"),
            layout=widgets.Layout(width="auto", flex="1 1 auto"),
        )  # fmt: skip
        self.message = widgets.HTML()
        self.skipped_note = widgets.HTML()
        self.body = widgets.Box(layout=widgets.Layout(width="100%"))
        top = [self.experiment] if len(labels) > 1 else []
        super().__init__(
            children=[
                widgets.HTML(STYLE + _TABLE_STYLE),
                widgets.HBox([*top, self.search], layout=widgets.Layout(flex_flow="row wrap")),
                self.skipped_note,
                self.quick,
                self.table,
                widgets.HBox([self.previous_page, self.pager, self.next_page]),
                widgets.HBox([self.compare, self.other_setting]),
                self.message,
                self.body,
            ]
        )
        self.add_class("hb-run-browser")
        self.experiment.observe(lambda _: self._load_experiment(), names="value")
        self.quick.observe(lambda _: self._refresh(), names="value")
        self.search.observe(lambda _: self._refresh(), names="value")
        for control in (self.compare, self.other_setting):
            control.observe(lambda _: self._reopen(), names="value")
        self.compare_slider.observe(lambda _: self._compare_turn(), names="value")
        self._load_experiment()

    @property
    def store(self) -> Path:
        """The chosen results store."""
        return self.experiments[self.experiment.value][0]

    @property
    def chosen(self) -> StoredExperiment | None:
        """The chosen experiment (None for a store made before experiments were kept)."""
        return self.experiments[self.experiment.value][1]

    # -- the table -------------------------------------------------------------------

    def sort_by(self, column: str) -> None:
        """Sort the table by a column; sorting by the same column again reverses it."""
        if column not in TABLE_COLUMNS:
            raise KeyError(f"unknown column {column!r}; known: {list(TABLE_COLUMNS)}")
        if column == self.sort_column:
            self.ascending = not self.ascending
        else:
            self.sort_column, self.ascending = column, True
        self._refresh()

    def open_row(self, index: int) -> None:
        """Open the episode in row ``index`` of the shown table (0 = first row)."""
        self._open(self.rows.iloc[index])

    def select(self, **values: Any) -> None:
        """Open the episode named by results columns (see ``SELECTORS``).

        Raises:
            KeyError: an unknown column name.
        """
        unknown = set(values) - set(SELECTORS)
        if unknown:
            raise KeyError(f"unknown selector(s) {sorted(unknown)}; known: {list(SELECTORS)}")
        match = self.frame
        if self.opened is not None:  # unnamed columns stay as they are
            values = {**{n: self.opened[n] for n in SELECTORS}, **values}
        for name, value in values.items():
            match = match[match[name] == value]
        if not len(match):
            chosen = ", ".join(f"{n}={v}" for n, v in values.items())
            self._show(f"No episode in {self.store} for {chosen}.", [])
            return
        self._open(match.iloc[0])

    def _load_experiment(self) -> None:
        self.frame, damaged = load_store(self.store, self.chosen)
        self._prepare()
        self.skipped = [str(item) for item in damaged]
        self.skipped_note.value = (
            f"<div class='hb-panel hb-error'>Skipped {len(damaged)} damaged file(s); the next "
            "run quarantines them and runs their episodes again:<br>"
            + "<br>".join(html.escape(item) for item in self.skipped)
            + "</div>"
            if damaged
            else ""
        )
        settings = sorted(self.frame["setting"].dropna().unique().tolist())
        self.other_setting.options = settings
        self.other_setting.value = settings[-1] if settings else None
        self.opened = None
        self._update_quick()
        self._refresh()
        self._show(f"{len(self.frame)} episodes: click a task in the table to open it.", [])

    def _prepare(self) -> None:
        """What filtering, searching and sorting need, computed once per experiment."""
        frame = self.frame
        text = pd.Series("", index=frame.index)
        for column in SEARCHED:
            text = text + " " + frame[column].astype(str)
        self._prepared = {
            "masks": {key: self._quick_mask(key).to_numpy() for key in QUICK_FILTERS},
            "haystack": text.str.lower(),
            "keys": {},
        }

    def _sort_order(self, positions: np.ndarray) -> np.ndarray:
        """The given row positions in the table's order (stable; missing values last)."""
        keys = self._prepared["keys"]
        if self.sort_column not in keys:
            keys[self.sort_column] = _sort_key(self.frame[self.sort_column])
        key, missing = keys[self.sort_column]
        values = key[positions]
        order = np.argsort(values, kind="stable")
        if not self.ascending:  # reversed, equal values keeping their order
            order = np.argsort(-_ranks(values), kind="stable")
        order = order[np.argsort(missing[positions][order], kind="stable")]
        return positions[order]

    def _update_quick(self) -> None:
        counts = {key: int(self._prepared["masks"][key].sum()) for key in QUICK_FILTERS}
        options = [
            (label if key == "all" else f"{label} ({counts[key]})", key)
            for key, label in QUICK_FILTERS.items()
        ]
        current = self.quick.value or "all"
        self.quick.options = options
        self.quick.value = current
        self.quick.tooltips = [
            "every episode of the store",
            "A3 episodes whose task failed under A1 with the same backend and seed",
            "episodes that ended in error (a crash or a failed model call)",
            "episodes whose final state or actions broke a safety rule",
        ]

    def _quick_mask(self, key: str) -> pd.Series:
        frame = self.frame
        if key == "errors":
            return frame["error"].notna() | (frame["termination"] == "episode_error")
        if key == "unsafe":
            return (frame["safe"] == False) | (frame["action_safe"] == False)  # noqa: E712
        if key == "rescued":
            return frame["key"].isin(_rescued(frame))
        return pd.Series(True, index=frame.index)

    def _refresh(self) -> None:
        """Filter, sort and draw the table (first page when the filter changed)."""
        keep = self._prepared["masks"][self.quick.value or "all"]
        text = self.search.value.strip().lower()
        if text:
            keep = keep & self._prepared["haystack"].str.contains(text, regex=False).to_numpy()
        positions = self._sort_order(np.flatnonzero(keep))
        self.rows = self.frame.iloc[positions].reset_index(drop=True)
        pages = max(1, math.ceil(len(self.rows) / PAGE_SIZE))
        self.page = min(self.page, pages - 1)
        self._draw_table()

    def _turn_page(self, delta: int) -> None:
        pages = max(1, math.ceil(len(self.rows) / PAGE_SIZE))
        self.page = min(max(self.page + delta, 0), pages - 1)
        self._draw_table()

    def _draw_table(self) -> None:
        """Show the current page, reusing the table's widgets (one set per column layout)."""
        several = ("seed", "user_model")  # shown only when they tell rows apart
        columns = [c for c in TABLE_COLUMNS if c not in several or self.frame[c].nunique() > 1]
        if columns != getattr(self, "columns", None):
            self.columns = columns
            self._headings = [self._heading(column) for column in columns]
            self._slots = [[widgets.HTML(layout=_CELL) for _ in columns[1:]]
                           for _ in range(PAGE_SIZE)]  # fmt: skip
            self.table.layout.grid_template_columns = " ".join(
                "minmax(110px, max-content)" if c in ("task_id", "agent_model", "error") else "auto"
                for c in columns
            )
        for column, heading in zip(columns, self._headings, strict=True):
            arrow = (" ▲" if self.ascending else " ▼") if column == self.sort_column else ""
            heading.description = TABLE_COLUMNS[column] + arrow
        first = self.page * PAGE_SIZE
        page = self.rows.iloc[first : first + PAGE_SIZE].to_dict("records")
        cells: list[widgets.Widget] = list(self._headings)
        for slot, (values, row) in enumerate(zip(self._slots, page, strict=False)):
            chosen = self.opened is not None and row["key"] == self.opened["key"]
            cells.append(self._task_button(slot, str(row["task_id"]), chosen))
            for cell, column in zip(values, columns[1:], strict=True):
                cell.value = _cell(column, row[column])
            cells += values
        self.table.children = cells
        pages = max(1, math.ceil(len(self.rows) / PAGE_SIZE))
        self.pager.value = (
            f"<div class='hb-panel hb-muted'>&nbsp;page {self.page + 1} of {pages} · "
            f"{len(self.rows)} of {len(self.frame)} episodes&nbsp;</div>"
        )

    def _heading(self, column: str) -> widgets.Button:
        """A column's heading: a button that sorts by it, its tooltip the metric's definition."""
        heading = widgets.Button(
            description=TABLE_COLUMNS[column],
            tooltip=glossary.define(column) or f"sort by {TABLE_COLUMNS[column]}",
            layout=widgets.Layout(width="auto"),
        )  # fmt: skip
        heading.add_class("hb-heading")
        heading.on_click(lambda _: self.sort_by(column))
        return heading

    def _task_button(self, slot: int, task_id: str, chosen: bool) -> widgets.Button:
        """The button that opens the episode in row ``slot`` of the page (marked if open)."""
        task = widgets.Button(description=task_id, tooltip="open this episode",
                              button_style="info" if chosen else "",
                              layout=widgets.Layout(width="auto"))  # fmt: skip
        task.add_class("hb-open")
        task.on_click(lambda _: self.open_row(self.page * PAGE_SIZE + slot))
        return task

    # -- episodes --------------------------------------------------------------------

    def _scenario(self, task_id: str) -> Scenario | str:
        """The task of the chosen experiment, or the reason it cannot be had."""
        key = self.experiment.value
        if key not in self._scenarios:
            try:
                if self.chosen is None:
                    raise ExperimentError(f"{self.store}: no experiment definition")
                tasks = select_tasks(self.chosen.experiment().tasks)
                self._scenarios[key] = {s.task_id: s for s in tasks}
            except (ExperimentError, ScenarioError, OSError) as exc:
                self._scenarios[key] = f"cannot load the experiment's tasks: {exc}"
        found = self._scenarios[key]
        if isinstance(found, str):
            return found
        return found.get(task_id, f"task {task_id} is not in the experiment's task files")

    def _episode(self, row: pd.Series, compact: bool = False) -> EpisodeView | None:
        """The trace and graph of one results row (None when the episode has no trace)."""
        if row["trace"] is None or pd.isna(row["trace"]):
            return None
        scenario = self._scenario(row["task_id"])
        record = json.loads((self.store / "episodes" / f"{row['key']}.json").read_text())
        metrics = {**(record.get("metrics") or {}), **(record.get("process") or {})}
        trace = open_trace(self.store, row["key"])
        title = f"{row['task_id']} · {row['setting']} · {row['agent_model']} · seed {row['seed']}"
        if isinstance(scenario, Scenario):
            if scenario.content_hash() != trace.header.scenario_hash:
                scenario = (
                    f"task {row['task_id']} changed since this episode ran (content hash differs)"
                )
        view = EpisodeView(trace, scenario, outcome=record.get("outcome"), metrics=metrics,
                           title=title)  # fmt: skip
        if compact:
            view.children = (view.children[1], view.children[0])
            view.layout = widgets.Layout(flex_flow="column", width="100%")
            for child in view.children:
                child.layout = widgets.Layout(width="100%", min_width="0")
            if view.graph is not None:
                view.graph.add_class("hb-graph-compact")
        return view

    def _open(self, row: pd.Series) -> None:
        self.opened = row
        if self.quick.value == "rescued" and row["agency"] == "A3":
            a1 = self._partner(row, "A1")
            if a1 is not None:
                self._quiet = True
                try:
                    self.other_setting.value = a1["setting"]
                    self.compare.value = True
                finally:
                    self._quiet = False
        self._reopen()
        self._draw_table()

    def _reopen(self) -> None:
        """Show the opened row, alone or compared with its other setting."""
        if self._quiet:
            return
        self.viewer, self.graph_viewer, self.compare_viewers = None, None, []
        self.other_setting.disabled = not self.compare.value
        row = self.opened
        if row is None:
            return
        if self.compare.value:
            self._open_compare(row)
            return
        try:
            view = self._episode(row)
        except (OSError, ValueError) as exc:  # changed on disk since the store was read
            self._show(f"This episode cannot be shown: {exc}", [])
            return
        if view is None:
            self._show(f"This episode failed and has no trace: {row['error']}", [])
            return
        self.viewer, self.graph_viewer = view.viewer, view.graph
        self._show("", [view])

    def _same_task(self, row: pd.Series) -> pd.Series:
        """Which rows are the same task, backends and seed as ``row`` (any setting)."""
        same = pd.Series(True, index=self.frame.index)
        for column in PARTNERS:
            same &= self.frame[column] == row[column]
        return same

    def _partner(self, row: pd.Series, agency: str) -> pd.Series | None:
        same = self.frame[self._same_task(row) & (self.frame["agency"] == agency)]
        return same.iloc[0] if len(same) else None

    def _open_compare(self, first: pd.Series) -> None:
        other = self.frame["setting"] == self.other_setting.value
        match = self.frame[self._same_task(first) & other]
        if not len(match):
            self._show(
                f"No episode of {first['task_id']} with {first['agent_model']}, seed "
                f"{first['seed']} under {self.other_setting.value} in {self.store}.",
                [],
            )
            return
        columns = []
        for row in sorted((first, match.iloc[0]), key=lambda r: r["setting"]):
            try:
                view = self._episode(row, compact=True)
            except (OSError, ValueError) as exc:  # changed on disk since the store was read
                self.compare_viewers = []
                self._show(f"{row['setting']}: this episode cannot be shown: {exc}", [])
                return
            if view is None:
                self.compare_viewers = []
                self._show(f"{row['setting']}: this episode failed: {row['error']}", [])
                return
            self.compare_viewers.append(view.viewer)
            view.layout.flex = "1 1 0"
            view.layout.min_width = "0"
            columns.append(view)
        last = max(v.rows[-1].step if v.rows else 0 for v in self.compare_viewers)
        self.compare_slider.max = last
        self.compare_slider.value = 0
        self._compare_turn()
        pair = widgets.HBox(
            columns, layout=widgets.Layout(width="100%", align_items="flex-start", grid_gap="12px")
        )
        compared = widgets.VBox([self.compare_slider, pair], layout=widgets.Layout(width="100%"))
        self._show("", [compared])

    def _compare_turn(self) -> None:
        for viewer in self.compare_viewers:
            viewer.show_turn(self.compare_slider.value)

    def _show(self, message: str, children: list[widgets.Widget]) -> None:
        self.message.value = (
            f"<div class='hb-panel hb-muted'>{html.escape(message)}</div>" if message else ""
        )
        self.body.children = children


_CELL = widgets.Layout(width="auto")
_TABLE_STYLE = """<style>
.hb-results-table {border-top: 1px solid #ccc; border-bottom: 1px solid #ccc;
  align-items: center;}
.hb-results-table .hb-heading {font-weight: bold;}
.hb-results-table .widget-html-content {line-height: 1.2;}
.hb-cell {font-family: sans-serif; font-size: 12px; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; max-width: 28em;}
</style>"""


def _cell(column: str, value: Any) -> str:
    """One table cell as HTML (booleans as yes/no, numbers rounded, missing as –)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        text, css = "–", "hb-muted"
    elif isinstance(value, bool | np.bool_):
        text, css = ("yes", "hb-ok") if value else ("no", "hb-error")
    elif isinstance(value, float):
        text, css = f"{value:.2f}", ""
    else:
        text, css = str(value), "hb-error" if column == "error" else ""
    title = html.escape(str(value), quote=True)
    return f"<div class='hb-cell {css}' title='{title}'>{html.escape(text)}</div>"


def _experiments(stores: list[Path]) -> dict[str, tuple[Path, StoredExperiment | None]]:
    """Label -> (store, experiment) for every experiment of the stores, oldest first per store.

    A store with one experiment (or none kept) is labelled by its folder's name; the
    experiments of a store with several by ``folder · name (key): N episodes``.
    """
    found: dict[str, tuple[Path, StoredExperiment | None]] = {}
    for store in stores:
        kept = stored_experiments(store)
        if len(kept) <= 1:
            found[store.name] = (store, kept[0] if kept else None)
            continue
        for experiment in kept:
            found[f"{store.name} · {experiment.label()}"] = (store, experiment)
    return found


def _sort_key(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column as sortable numbers, and where it is missing.

    Booleans and numbers sort as numbers, everything else as lower-cased text (by rank).
    """
    missing = values.isna().to_numpy()
    numbers = pd.to_numeric(values.astype(object).map(_as_number), errors="coerce")
    if numbers.notna().sum() == (~missing).sum():
        return numbers.fillna(0).to_numpy(dtype=float), missing
    text = values.astype("string").str.lower().fillna("")
    return pd.factorize(text, sort=True)[0].astype(float), missing


def _ranks(values: np.ndarray) -> np.ndarray:
    """Dense ranks of the values (equal values share one), for a stable reversed sort."""
    return np.unique(values, return_inverse=True)[1].astype(float)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool | np.bool_ | int | float | np.number):
        return float(value)
    return None


def _rescued(frame: pd.DataFrame) -> set[str]:
    """Keys of A3 episodes that succeed where the A1 run (same task, backends, seed) failed."""
    usable = frame[frame["error"].isna() & frame["success"].notna()]
    failed = usable[(usable["agency"] == "A1") & ~usable["success"].astype(bool)]
    solved = usable[(usable["agency"] == "A3") & usable["success"].astype(bool)]
    pairs = solved.merge(failed[list(PARTNERS)].drop_duplicates(), on=list(PARTNERS))
    return set(pairs["key"])
