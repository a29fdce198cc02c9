"""A small offline run to explore with the widgets (used by the exploration notebook)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hasbench.agency import Setting
from hasbench.runner import Experiment, TaskSelection, run_experiment, select_tasks
from hasbench.scenario import Scenario
from hasbench.simulator import Backends
from hasbench.sync import run_sync

EXAMPLES = "data/tasks/examples.yaml"


def small_run(
    task_ids: Sequence[str],
    agents: Sequence[str] = ("scripted:standin?strong", "scripted:standin?weak"),
    agency_levels: Sequence[str] = ("A1", "A3"),
    seed: int = 0,
    results_dir: str | Path | None = None,
    tasks_file: str = EXAMPLES,
) -> tuple[Path, dict[str, Scenario]]:
    """Run tasks × agents × agency levels offline into a results store.

    Args:
        task_ids: tasks of ``tasks_file`` to run.
        agents: agent backends (default: the honest offline stand-ins).
        agency_levels: settings to run, each with all channels.
        seed: the episode seed.
        results_dir: the results store (default ``RUNS_DIR/explore_traces``).
        tasks_file: the task file, relative to the repository root unless absolute.

    Returns:
        The store's directory and the run's tasks by id.
    """
    experiment = Experiment(
        name="explore_traces",
        tasks=TaskSelection(files=[tasks_file], ids=list(task_ids)),
        backends=[Backends(agent=agent) for agent in agents],
        settings=[Setting(agency=level) for level in agency_levels],
        seeds=[seed],
    )
    summary = run_sync(run_experiment(experiment, results_dir, progress=False))
    return summary.directory, {s.task_id: s for s in select_tasks(experiment.tasks)}
