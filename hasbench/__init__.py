"""hasbench: a research workbench for LLM-based Human-Agent Systems (HAS-Bench, DocuTeam).

What a notebook needs is importable from here::

    import hasbench as hb

    task = hb.load_task("data/tasks/examples.yaml", "mock_C_001")
    trace = hb.run_episode(task, hb.Setting(agency="A3"), seed=0)
    hb.TraceViewer(trace, scenario=task)

Names are imported on first use, so ``import hasbench`` stays light and opens no socket.
"""

import importlib
import os
from typing import Any

# litellm fetches its model cost map from the network at import time unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # tasks
    "Scenario": "hasbench.scenario",
    "load_tasks": "hasbench.scenario",
    "load_task": "hasbench.scenario",
    # settings and backends
    "Setting": "hasbench.agency",
    "Backends": "hasbench.simulator",
    # episodes and their evaluation
    "Episode": "hasbench.simulator",
    "run_episode": "hasbench.simulator",
    "Trace": "hasbench.trace",
    "evaluate": "hasbench.evaluate",
    "trace_metrics": "hasbench.metrics",
    "make_judge": "hasbench.participants.backends",
    "run_sync": "hasbench.sync",
    # experiments and results
    "Experiment": "hasbench.runner",
    "load_experiment": "hasbench.runner",
    "run_experiment": "hasbench.runner",
    "load_results": "hasbench.runner",
    "summary": "hasbench.runner",
    "run_notebook": "hasbench.runner",
    # widgets
    "TraceViewer": "hasbench.widgets",
    "GraphViewer": "hasbench.widgets",
    "EpisodeView": "hasbench.widgets",
    "RunBrowser": "hasbench.widgets",
    # a real person in the loop
    "play": "hasbench.widgets",
    "HumanConsole": "hasbench.widgets",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import an exported name from its module on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'hasbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
