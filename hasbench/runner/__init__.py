"""Experiment grids, the results store, the concurrent resumable runner, notebook runs.

An experiment (a YAML file or an :class:`Experiment`) is a grid: tasks (files plus filters)
× backends × settings × seeds. Each cell is one episode. One module per job:

- :mod:`~hasbench.runner.experiment`: the experiment schema, task selection, the grid and
  the key that identifies an episode;
- :mod:`~hasbench.runner.store`: the results store (atomic writes, loading a tidy table,
  the summary);
- :mod:`~hasbench.runner.execution`: running a grid concurrently and resumably;
- :mod:`~hasbench.runner.notebooks`: the registered notebooks and their papermill runs.
"""

from hasbench.runner.execution import (
    DEFAULT_CONCURRENCY,
    RunSummary,
    provider,
    run_experiment,
    run_one,
)
from hasbench.runner.experiment import (
    RECORD_FORMAT,
    EpisodeSpec,
    Experiment,
    ExperimentError,
    TaskSelection,
    episode_key,
    grid,
    load_experiment,
    select_tasks,
)
from hasbench.runner.notebooks import (
    KERNEL,
    NOTEBOOKS_DIR,
    FigureNotebook,
    figure_notebooks,
    find_notebook,
    registered_notebooks,
    run_notebook,
)
from hasbench.runner.store import COLUMNS, load_results, summary

__all__ = [
    "COLUMNS", "DEFAULT_CONCURRENCY", "KERNEL", "NOTEBOOKS_DIR", "RECORD_FORMAT", "EpisodeSpec",
    "Experiment", "ExperimentError", "FigureNotebook", "RunSummary", "TaskSelection",
    "episode_key", "figure_notebooks", "find_notebook", "grid", "load_experiment", "load_results",
    "provider", "registered_notebooks", "run_experiment", "run_notebook", "run_one",
    "select_tasks", "summary",
]  # fmt: skip
