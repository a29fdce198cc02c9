"""The results store: one directory per experiment, written atomically, loaded as a table.

Layout::

    <dir>/experiment.yaml          the experiment as run
    <dir>/episodes/<key>.json      one record per episode (outcome, metrics, cost, error)
    <dir>/traces/<key>.jsonl       its trace

Files are written atomically (temporary file + ``os.replace``), the trace before the
record, so a record exists only for a finished episode.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from hasbench.agency import Setting
from hasbench.runner.experiment import Experiment, ExperimentError

COLUMNS = [
    "task_id", "domain", "pattern", "judge_scored", "agent_model", "user_model", "judge_model",
    "agency", "channels", "persona", "spontaneous", "setting", "seed", "success", "task_score",
    "delivered", "safe", "action_safe", "hir", "h_init", "h_init_judged", "cqs",
    "cqs_events", "fur", "fur_events", "crj", "crj_events", "turns", "steps", "tool_calls",
    "human_steps", "model_calls", "prompt_tokens", "completion_tokens", "tokens", "cost_usd",
    "termination", "error", "key", "trace",
]  # fmt: skip
"""The fixed columns of :func:`load_results`, one row per episode (``judge_scored`` marks
tasks whose outcome the LLM judge alone decides, e.g. imported MultiAgentBench tasks, which
ship no tests); every other scalar
per-episode metric a record holds (a metric registered with
:func:`hasbench.metrics.episode_metric`) follows them, by name."""

# ---------------------------------------------------------------------------------------
# Loading


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
    extra = sorted({name for row in rows for name in row} - set(COLUMNS))
    frame = pd.DataFrame(rows, columns=[*COLUMNS, *extra])
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
    for name, value in metrics.items():
        if name not in row and isinstance(value, bool | int | float | str):
            row[name] = value
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
# Writing


def open_store(directory: Path, experiment: Experiment) -> None:
    """Create the store's folders, drop half-written files, write ``experiment.yaml``."""
    (directory / "episodes").mkdir(parents=True, exist_ok=True)
    (directory / "traces").mkdir(parents=True, exist_ok=True)
    for stale in [*directory.glob("episodes/*.tmp"), *directory.glob("traces/*.tmp")]:
        stale.unlink()  # left by a run that was killed while writing
    experiment_yaml = yaml.safe_dump(experiment.model_dump(mode="json"))
    _write_atomic(directory / "experiment.yaml", experiment_yaml)


def has_record(directory: Path, key: str) -> bool:
    """Whether the episode ``key`` has finished (its record exists)."""
    return (directory / "episodes" / f"{key}.json").exists()


def write_trace(directory: Path, key: str, jsonl: str) -> str:
    """Write an episode's trace; returns its path relative to the store."""
    relative = f"traces/{key}.jsonl"
    _write_atomic(directory / relative, jsonl)
    return relative


def write_record(directory: Path, key: str, record: dict[str, Any]) -> None:
    """Write an episode's record (after its trace: a record means a finished episode)."""
    text = json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False)
    _write_atomic(directory / "episodes" / f"{key}.json", text)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
