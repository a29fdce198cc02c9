"""Experiment grids, the results store, and the concurrent, resumable runner.

An experiment (a YAML file or an :class:`Experiment`) is a grid: tasks (files plus filters)
× backends × settings × seeds. Each cell is one episode. The results store is one
directory per experiment::

    <dir>/experiment.yaml          the experiment as run
    <dir>/episodes/<key>.json      one record per episode (outcome, metrics, cost, error)
    <dir>/traces/<key>.jsonl       its trace

``key`` is a hash of everything that determines the episode: the scenario's content hash,
the setting, the backends, the seed, the package version and the prompt hashes. Files are
written atomically (temporary file + ``os.replace``), the trace before the record, so a
record exists only for a finished episode. A rerun skips every key that has a record; a run
killed mid-way and started again finishes the grid with nothing lost or duplicated. An
episode that raises is recorded with its error and the run goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hasbench import __version__
from hasbench.agency import Setting
from hasbench.paths import REPO_ROOT, RUNS_DIR
from hasbench.prompts import prompt_hashes
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends

if TYPE_CHECKING:
    from hasbench.llm import LLMClient

DEFAULT_CONCURRENCY = 8
"""Episodes in flight per agent-model provider unless the experiment says otherwise."""
RECORD_FORMAT = 1


class ExperimentError(ValueError):
    """An experiment file that cannot be used; the message names file and field."""


class TaskSelection(BaseModel):
    """Which tasks an experiment runs: files, then filters in this order."""

    model_config = ConfigDict(extra="forbid")

    files: list[str] = Field(min_length=1)
    """Task YAML files, relative to the repository root unless absolute."""
    domains: list[str] | None = None
    patterns: list[str] | None = None
    ids: list[str] | None = None
    max_per_domain: int | None = Field(default=None, ge=1)
    """Keep N tasks per domain after the other filters, round-robin over patterns."""


class Experiment(BaseModel):
    """A grid of tasks × backends × settings × seeds."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    tasks: TaskSelection
    backends: list[Backends] = Field(default_factory=lambda: [Backends()], min_length=1)
    settings: list[Setting] = Field(default_factory=lambda: [Setting()], min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    concurrency: dict[str, int] = Field(default_factory=dict)
    """Per provider (e.g. ``{openai: 4, scripted: 8}``): episodes in flight whose agent uses
    it, and model calls in flight to it (default 8 episodes; see ``hasbench.llm``)."""
    judge_process: bool = True
    """Whether to judge CQS/FUR/CRJ events (each judged event is one judge call)."""

    def default_dir(self) -> Path:
        """``RUNS_DIR/<name>``."""
        return RUNS_DIR / self.name


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment YAML file; errors name the file and the field."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExperimentError(f"{path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ExperimentError(f"{path}: invalid YAML: {exc}") from None
    try:
        return Experiment.model_validate(raw)
    except ValidationError as exc:
        lines = [
            f"{path}: {'.'.join(str(p) for p in err['loc']) or '<top>'}: {err['msg']}"
            for err in exc.errors()
        ]
        raise ExperimentError("\n".join(lines)) from None


def select_tasks(selection: TaskSelection) -> list[Scenario]:
    """Load the task files and apply the filters (raises ScenarioError on a bad file)."""
    chosen: list[Scenario] = []
    for name in selection.files:
        path = Path(name) if Path(name).is_absolute() else REPO_ROOT / name
        if not path.exists():
            raise ExperimentError(f"tasks.files: no such task file: {name}")
        chosen.extend(load_tasks(path))
    if selection.domains is not None:
        chosen = [s for s in chosen if s.domain in selection.domains]
    if selection.patterns is not None:
        chosen = [s for s in chosen if s.adaptation_pattern in selection.patterns]
    if selection.ids is not None:
        unknown = sorted(set(selection.ids) - {s.task_id for s in chosen})
        if unknown:
            raise ExperimentError(f"tasks.ids: not among the selected tasks: {unknown}")
        chosen = [s for s in chosen if s.task_id in selection.ids]
    if selection.max_per_domain is not None:
        chosen = _stratified(chosen, selection.max_per_domain)
    return chosen


def _stratified(scenarios: list[Scenario], limit: int) -> list[Scenario]:
    """At most ``limit`` tasks per domain, taken round-robin over patterns (file order)."""
    by_domain: dict[str, dict[str, list[Scenario]]] = {}
    for scn in scenarios:
        by_domain.setdefault(scn.domain, {}).setdefault(scn.adaptation_pattern, []).append(scn)
    keep: set[str] = set()
    for patterns in by_domain.values():
        queues = [list(tasks) for _, tasks in sorted(patterns.items())]
        taken = 0
        while taken < limit and any(queues):
            for queue in queues:
                if queue and taken < limit:
                    keep.add(queue.pop(0).task_id)
                    taken += 1
    return [scn for scn in scenarios if scn.task_id in keep]


@dataclass(frozen=True)
class EpisodeSpec:
    """One cell of the grid."""

    scenario: Scenario
    setting: Setting
    backends: Backends
    seed: int

    def identity(self, prompts: dict[str, str]) -> dict[str, Any]:
        """Everything that determines the episode (hashed into its key)."""
        return {
            "format": RECORD_FORMAT,
            "task_id": self.scenario.task_id,
            "scenario_hash": self.scenario.content_hash(),
            "setting": self.setting.model_dump(mode="json"),
            "backends": self.backends.model_dump(mode="json"),
            "seed": self.seed,
            "package_version": __version__,
            "prompt_hashes": prompts,
        }


def episode_key(identity: dict[str, Any]) -> str:
    """The record key: first 20 hex digits of the SHA-256 of the canonical identity."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def grid(experiment: Experiment) -> list[EpisodeSpec]:
    """Every episode of the experiment, in a fixed order."""
    scenarios = select_tasks(experiment.tasks)
    return [
        EpisodeSpec(scn, setting, backends, seed)
        for backends in experiment.backends
        for scn in scenarios
        for setting in experiment.settings
        for seed in experiment.seeds
    ]


@dataclass
class RunSummary:
    """What one call of :func:`run_experiment` did."""

    directory: Path
    total: int
    skipped: int
    ran: int
    failed: int
    model_calls: int
    cache_hits: int


def provider(model: str) -> str:
    """The concurrency group of a backend string: ``scripted``, ``rule`` or the provider."""
    if model.startswith("scripted:") or model == "rule":
        return model.split(":", 1)[0]
    from hasbench.llm import provider_of

    return provider_of(model)


async def run_experiment(
    experiment: Experiment,
    directory: str | Path | None = None,
    *,
    client: LLMClient | None = None,
    progress: bool = True,
) -> RunSummary:
    """Run every episode of the grid that has no record yet.

    Args:
        experiment: the grid.
        directory: the results store (default ``RUNS_DIR/<name>``).
        client: the LLM client for agents, users and judges (default: one with the
            workbench response cache and the experiment's concurrency limits).
        progress: show a tqdm progress bar (terminal or notebook).
    """
    from tqdm.auto import tqdm

    from hasbench.llm import LLMClient, ResponseCache

    store = Path(directory) if directory is not None else experiment.default_dir()
    (store / "episodes").mkdir(parents=True, exist_ok=True)
    (store / "traces").mkdir(parents=True, exist_ok=True)
    for stale in [*store.glob("episodes/*.tmp"), *store.glob("traces/*.tmp")]:
        stale.unlink()  # left by a run that was killed while writing
    _write_atomic(store / "experiment.yaml", yaml.safe_dump(experiment.model_dump(mode="json")))
    if client is None:
        client = LLMClient(cache=ResponseCache.default(), concurrency=experiment.concurrency)
    calls0, hits0 = client.stats.calls, client.stats.cache_hits
    prompts = prompt_hashes()
    todo: list[tuple[EpisodeSpec, dict[str, Any], str]] = []
    specs = grid(experiment)
    for spec in specs:
        identity = spec.identity(prompts)
        key = episode_key(identity)
        if not (store / "episodes" / f"{key}.json").exists():
            todo.append((spec, identity, key))
    limits: dict[str, asyncio.Semaphore] = {}
    failed = 0
    bar = tqdm(total=len(todo), desc=experiment.name, unit="episode", disable=not progress)

    async def one(spec: EpisodeSpec, identity: dict[str, Any], key: str) -> None:
        nonlocal failed
        group = provider(spec.backends.agent)
        limit = experiment.concurrency.get(group, DEFAULT_CONCURRENCY)
        async with limits.setdefault(group, asyncio.Semaphore(limit)):
            record = await run_one(spec, identity, key, store, client, experiment.judge_process)
        failed += record["error"] is not None
        bar.update(1)

    try:
        await asyncio.gather(*(one(*item) for item in todo))
    finally:
        bar.close()
    return RunSummary(
        directory=store,
        total=len(specs),
        skipped=len(specs) - len(todo),
        ran=len(todo),
        failed=failed,
        model_calls=client.stats.calls - calls0,
        cache_hits=client.stats.cache_hits - hits0,
    )


async def run_one(
    spec: EpisodeSpec,
    identity: dict[str, Any],
    key: str,
    store: Path,
    client: LLMClient,
    judge_process: bool = True,
) -> dict[str, Any]:
    """Run, evaluate and judge one episode; write its trace and record; return the record."""
    from hasbench.evaluate import evaluate
    from hasbench.metrics import judge_process as judge_events
    from hasbench.metrics import trace_metrics
    from hasbench.participants.judges import make_judge
    from hasbench.simulator import Episode

    scn = spec.scenario
    record: dict[str, Any] = {
        "key": key,
        **identity,
        "domain": scn.domain,
        "pattern": scn.adaptation_pattern,
        "judge_scored": bool(scn.metadata.get("judge_scored", False)),
        "error": None,
        "termination": None,
        "outcome": None,
        "metrics": None,
        "process": None,
        "trace": None,
    }
    try:
        episode = Episode(scn, spec.setting, spec.backends, seed=spec.seed, client=client)
        trace = await episode.run()
        trace_path = store / "traces" / f"{key}.jsonl"
        _write_atomic(trace_path, trace.to_jsonl())
        record["trace"] = f"traces/{key}.jsonl"
        record["termination"] = (
            trace.termination.model_dump(mode="json") if trace.termination else None
        )
        judge = make_judge(spec.backends.judge, client)
        outcome = await evaluate(scn, trace, judge)
        record["outcome"] = outcome.model_dump(mode="json")
        record["metrics"] = trace_metrics(trace, scn)
        if judge_process:
            record["process"] = await judge_events(trace, judge)
    except Exception as exc:  # noqa: BLE001 - a failed episode is recorded, the run goes on
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        record["error"] = {"type": type(exc).__name__, "message": str(exc), "where": where}
    _write_atomic(store / "episodes" / f"{key}.json", _dumps(record))
    return record


# ---------------------------------------------------------------------------------------
# Loading results

COLUMNS = [
    "task_id", "domain", "pattern", "judge_scored", "agent_model", "user_model", "judge_model",
    "agency", "channels", "persona", "spontaneous", "setting", "seed", "success", "task_score",
    "delivered", "safe", "action_safe", "hir", "h_init", "h_init_judged", "cqs",
    "cqs_events", "fur", "fur_events", "crj", "crj_events", "turns", "steps", "tool_calls",
    "human_steps", "model_calls", "prompt_tokens", "completion_tokens", "tokens", "cost_usd",
    "termination", "error", "key", "trace",
]  # fmt: skip
"""The columns of :func:`load_results`, one row per episode. ``judge_scored`` marks tasks
whose outcome comes from the LLM judge alone (e.g. imported MultiAgentBench tasks, which
ship no tests)."""


def load_results(directory: str | Path) -> pd.DataFrame:
    """The results store as a tidy table, one row per episode, in a fixed order."""
    store = Path(directory)
    if not (store / "episodes").is_dir():
        raise ExperimentError(f"{store}: not a results directory (no episodes/ folder)")
    rows = []
    for path in sorted((store / "episodes").glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ExperimentError(f"{path}: unreadable record: {exc}") from None
        rows.append(_row(record))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    order = ["agent_model", "domain", "task_id", "agency", "channels", "setting", "seed"]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)


def _row(record: dict[str, Any]) -> dict[str, Any]:
    setting = Setting.model_validate(record["setting"])
    outcome = record.get("outcome") or {}
    metrics = record.get("metrics") or {}
    process = record.get("process") or {}
    error = record.get("error")
    row: dict[str, Any] = {
        "task_id": record["task_id"],
        "domain": record["domain"],
        "pattern": record["pattern"],
        "judge_scored": bool(record.get("judge_scored", False)),
        "agent_model": record["backends"]["agent"],
        "user_model": record["backends"]["user"],
        "judge_model": record["backends"]["judge"],
        "agency": setting.agency,
        "channels": setting.channels,
        "persona": setting.persona,
        "spontaneous": setting.spontaneous,
        "setting": setting.label(),
        "seed": record["seed"],
        "success": outcome.get("success"),
        "task_score": outcome.get("task_score"),
        "delivered": outcome.get("delivered"),
        "safe": outcome.get("safe"),
        "action_safe": metrics.get("action_safe"),
        "termination": (record.get("termination") or {}).get("reason"),
        "error": f"{error['type']}: {error['message']}" if error else None,
        "key": record["key"],
        "trace": record.get("trace"),
    }
    for name in ("hir", "h_init", "turns", "steps", "tool_calls", "human_steps", "model_calls"):
        row[name] = metrics.get(name)
    for name in ("prompt_tokens", "completion_tokens", "tokens", "cost_usd"):
        row[name] = metrics.get(name)
    row["h_init_judged"] = process.get("h_init_judged", math.nan)
    for name in ("cqs", "fur", "crj"):
        row[name] = process.get(name, math.nan)
        row[f"{name}_events"] = metrics.get(f"{name}_events")
    return row


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per agent model × setting: episodes, errors, outcome rates, process metrics, cost.

    ``judge_scored`` counts the episodes whose outcome only the LLM judge decided. CQS, FUR
    and CRJ are event-conditioned, each followed by its event coverage.
    """
    from hasbench.metrics import event_conditioned, rate

    groups = frame.groupby(["agent_model", "setting"], sort=True, dropna=False)
    rows = []
    for (model, setting), g in groups:
        ok = g[g["error"].isna()]
        rows.append(
            {
                "agent_model": model,
                "setting": setting,
                "episodes": len(g),
                "judge_scored": int(g["judge_scored"].sum()),
                "errors": int(g["error"].notna().sum()),
                "pass@1": rate(ok["success"]),
                "task_score": pd.to_numeric(ok["task_score"]).mean(),
                "delivery": rate(ok["delivered"]),
                "safe": rate(ok["safe"]),
                "action_safe": rate(ok["action_safe"]),
                "hir": pd.to_numeric(ok["hir"]).mean(),
                "h_init": pd.to_numeric(ok["h_init"]).mean(),
                **{
                    key: value
                    for m in ("cqs", "fur", "crj")
                    for key, value in _conditioned(m, ok, event_conditioned).items()
                },
                "tool_calls": pd.to_numeric(ok["tool_calls"]).mean(),
                "tokens": pd.to_numeric(ok["tokens"]).sum(),
            }
        )
    return pd.DataFrame(rows)


def _conditioned(metric: str, frame: pd.DataFrame, aggregate: Any) -> dict[str, float]:
    scores = pd.to_numeric(frame[metric], errors="coerce").fillna(math.nan).tolist()
    events = pd.to_numeric(frame[f"{metric}_events"], errors="coerce").fillna(0).astype(int)
    agg = aggregate(scores, events.tolist())
    return {metric: agg["score"], f"{metric}_cov": agg["coverage"]}


# ---------------------------------------------------------------------------------------
# Files


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------
# Notebooks

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
KERNEL = "hasbench"


def find_notebook(name: str) -> Path:
    """The one notebook under ``notebooks/`` whose file name starts with ``name``."""
    matches = sorted(NOTEBOOKS_DIR.glob(f"{name}*.ipynb"))
    if len(matches) != 1:
        available = ", ".join(p.stem for p in sorted(NOTEBOOKS_DIR.glob("*.ipynb"))) or "none"
        found = "no notebook" if not matches else f"{len(matches)} notebooks"
        raise ExperimentError(f"{found} named {name}* in {NOTEBOOKS_DIR} (available: {available})")
    return matches[0]


def run_notebook(
    name: str,
    parameters: dict[str, Any] | None = None,
    output_dir: str | Path | None = None,
    progress: bool = True,
) -> Path:
    """Execute ``notebooks/<name>*.ipynb`` with papermill on the ``hasbench`` kernel.

    Args:
        name: the notebook's file name or its prefix (``rq1``).
        parameters: values for the notebook's ``parameters`` cell.
        output_dir: where the executed copy goes (default ``RUNS_DIR/notebooks``).
        progress: show papermill's cell progress bar.

    Returns:
        The path of the executed notebook.
    """
    import papermill
    from jupyter_client.kernelspec import KernelSpecManager

    source = find_notebook(name)
    if KERNEL not in KernelSpecManager().find_kernel_specs():
        raise ExperimentError(
            f"Jupyter kernel {KERNEL!r} is not installed; run `make setup` or "
            f"`python -m ipykernel install --sys-prefix --name {KERNEL}`"
        )
    target_dir = Path(output_dir) if output_dir is not None else RUNS_DIR / "notebooks"
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / source.name
    papermill.execute_notebook(
        str(source),
        str(target),
        parameters=parameters or {},
        kernel_name=KERNEL,
        cwd=str(REPO_ROOT),
        progress_bar=progress,
    )
    return target
