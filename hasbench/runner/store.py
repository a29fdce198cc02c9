"""The results store: one directory, any number of experiments, written atomically.

Layout::

    <dir>/experiments/<key>.json   each experiment run here: its definition, its benchmark
                                   and its episode keys (see ResolvedExperiment.definition)
    <dir>/episodes/<key>.json      one record per episode (outcome, metrics, cost, error)
    <dir>/traces/<key>.jsonl       its trace (the record holds its size and SHA-256)
    <dir>/index.jsonl              what a table reads of each record, with the signature of
                                   the record's file (:mod:`hasbench.runner.store_index`)
    <dir>/quarantine/              damaged records and traces, moved aside by a run

Experiments share the episodes they have in common (an episode's key is everything that
determines it) and never each other's others: a table, a manifest or a browser view is
computed from the episodes of one experiment (:func:`load_store` with ``experiment``), never
from whatever else the folder holds. Without ``experiment``, the experiment run last is
meant.

Files are written atomically (temporary file + ``os.replace``), the trace before the
record, so a record exists only for a finished episode. A record whose ``error`` is set is
an episode that ended in error (an infrastructure failure such as a missing key or an
outage, or a crash): it is left out of every metric and run again by the next run.

A record that cannot be read, lacks a field, or whose trace is missing or is not the one
it recorded is *damaged*: :func:`load_store` skips and reports it (with its path), and a
run moves it to ``quarantine/`` and runs the episode again. Loading compares each trace's
size with its record's; the SHA-256 is checked by a run (``verify``) and whenever a trace is
opened (:func:`open_trace`). A record is decoded only when its file is not the one its index
line was written for (a record changed since, or never indexed); the others are read from
the index, so a store of 50,000 episodes loads in seconds.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ValidationError

from hasbench.agency import Setting
from hasbench.runner import store_index
from hasbench.runner.experiment import Experiment, ExperimentError, ResolvedExperiment, resolve
from hasbench.trace import Trace, TraceError
from hasbench.vocab import text_hash

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

COLUMNS = [
    "task_id", "domain", "pattern", "judge_scored", "agent_model", "user_model", "judge_model",
    "agency", "channels", "persona", "spontaneous", "setting", "seed", "success", "task_score",
    "delivered", "safe", "action_safe", "hir", "h_init", "h_init_judged", "cqs",
    "cqs_events", "fur", "fur_events", "crj", "crj_events", "turns", "steps", "tool_calls",
    "human_steps", "model_calls", "prompt_tokens", "completion_tokens", "tokens", "cost_usd",
    "termination", "error", "error_kind", "key", "trace",
]  # fmt: skip
"""The fixed columns of :func:`load_results`, one row per episode (``judge_scored`` marks
tasks whose outcome the LLM judge alone decides, e.g. imported MultiAgentBench tasks, which
ship no tests); every other scalar
per-episode metric a record holds (a metric registered with
:func:`hasbench.metrics.episode_metric`) follows them, by name."""

REQUIRED_FIELDS = (
    "key", "task_id", "domain", "pattern", "setting", "backends", "seed", "error", "trace",
)  # fmt: skip
"""The fields every episode record has."""

# ---------------------------------------------------------------------------------------
# Loading


@dataclass(frozen=True)
class Damaged:
    """A record or trace of the store that cannot be used.

    Attributes:
        key: The episode's key (the record's file name).
        path: The file at fault.
        reason: What is wrong with it.
    """

    key: str
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


EXPERIMENTS = "experiments"
"""The store's folder of experiment definitions, one ``<key>.json`` each."""


@dataclass(frozen=True)
class StoredExperiment:
    """An experiment run into a results store, as its definition file says.

    Attributes:
        directory: the results store.
        definition: the content of ``experiments/<key>.json``.
    """

    directory: Path
    definition: dict[str, Any]

    @property
    def key(self) -> str:
        """The experiment's key."""
        return self.definition["key"]

    @property
    def name(self) -> str:
        """The experiment's name."""
        return self.definition["name"]

    @property
    def episodes(self) -> list[str]:
        """The keys of its episodes, in grid order."""
        return self.definition["episodes"]

    def experiment(self) -> Experiment:
        """The experiment as asked for (its task selection, backends, settings, seeds)."""
        return Experiment.model_validate(self.definition["experiment"])

    def label(self) -> str:
        """``name (key): N episodes``, to tell experiments of one store apart."""
        return f"{self.name} ({self.key[:8]}): {len(self.episodes)} episodes"


def stored_experiments(directory: str | Path) -> list[StoredExperiment]:
    """The experiments run into a store, the one run last at the end.

    Raises:
        ExperimentError: a definition file that cannot be read (naming it).
    """
    folder = Path(directory) / EXPERIMENTS
    found = []
    for path in folder.glob("*.json"):
        try:
            definition = json.loads(path.read_text(encoding="utf-8"))
            if definition["key"] != path.stem:
                raise ValueError(f"its key {definition['key']!r} is not its file name")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ExperimentError(f"{path}: not a readable experiment definition: {exc}") from None
        found.append((path.stat().st_mtime_ns, path.stem, definition))
    return [StoredExperiment(Path(directory), d) for _, _, d in sorted(found, key=lambda f: f[:2])]


ExperimentChoice = str | StoredExperiment | ResolvedExperiment | Experiment | None
"""What names an experiment of a store: its key (or a unique prefix of at least 4 digits),
its name (the one of that name run last), its stored or resolved form, the experiment
itself, or None for the experiment run last."""


def find_experiment(directory: str | Path, which: str | None = None) -> StoredExperiment | None:
    """The experiment of a store named by key, key prefix or name; None: the one run last.

    Returns None only for a store without experiment definitions (made before they were
    kept), whose episodes then all count.

    Raises:
        ExperimentError: no experiment or several match, naming the store's experiments.
    """
    stored = stored_experiments(directory)
    if which is None:
        return stored[-1] if stored else None
    matches = [e for e in stored if e.key == which] or [
        e for e in stored if len(which) >= 4 and e.key.startswith(which)
    ]
    if len(matches) > 1:
        raise ExperimentError(f"{directory}: {which!r} is the start of several experiment keys")
    named = [e for e in stored if e.name == which]
    chosen = matches or named[-1:]
    if not chosen:
        known = "; ".join(e.label() for e in stored) or "none"
        raise ExperimentError(f"{directory}: no experiment {which!r} here (experiments: {known})")
    return chosen[0]


def experiment_episodes(
    directory: str | Path, experiment: ExperimentChoice = None
) -> list[str] | None:
    """The episode keys of the experiment meant by ``experiment`` (see :data:`ExperimentChoice`).

    None for a store without experiment definitions when none is named: all its episodes.
    """
    if isinstance(experiment, ResolvedExperiment):
        return experiment.keys
    if isinstance(experiment, Experiment):
        return resolve(experiment).keys
    if isinstance(experiment, StoredExperiment):
        return experiment.episodes
    found = find_experiment(directory, experiment)
    return None if found is None else found.episodes


def scan_store(
    directory: str | Path, keys: Iterable[str] | None = None, verify: bool = False
) -> tuple[dict[str, dict[str, Any]], list[Damaged]]:
    """The intact episodes of a store by key, and its damaged records and traces.

    Each episode is given by its record's summary (the parts a results table reads; see
    :mod:`hasbench.runner.store_index`), taken from the store's index when the record's
    file is the one indexed, else read from the record, checked, and added to the index.

    Args:
        directory: the results store.
        keys: read only these episodes (those without a record are simply not there);
            None: every record of the store.
        verify: check every trace's SHA-256 (else its size; see the module docstring).

    Raises:
        ExperimentError: ``directory`` is not a results store.
    """
    store = Path(directory)
    folder = os.path.join(store, "episodes")  # plain strings: 50,000 paths add up
    if not os.path.isdir(folder):
        raise ExperimentError(f"{store}: not a results directory (no episodes/ folder)")
    if keys is None:
        keys = sorted(name[:-5] for name in os.listdir(folder) if name.endswith(".json"))
    indexed = store_index.read(store)
    read: dict[str, tuple[store_index.Signature, dict[str, Any]]] = {}
    episodes: dict[str, dict[str, Any]] = {}
    damaged: list[Damaged] = []
    for key in dict.fromkeys(keys):
        path = os.path.join(folder, f"{key}.json")
        try:
            summarized = _indexed_summary(path, indexed.get(key))
            if summarized is None:
                read[key] = _read_summary(path, key)
                summarized = read[key][1]
            else:
                _check(summarized, key)
        except FileNotFoundError:
            continue  # not run yet
        except ValueError as exc:
            damaged.append(Damaged(key, Path(path), str(exc)))
            continue
        trace = summarized["trace"]
        if trace is not None:
            trace_path = os.path.join(store, trace)
            if problem := _trace_problem(trace_path, summarized, verify):
                damaged.append(Damaged(key, Path(trace_path), problem))
                continue
        episodes[key] = summarized
    if read:
        with contextlib.suppress(OSError):  # a store this process cannot write loads as well
            store_index.append(store, read)
    return episodes, damaged


def _indexed_summary(
    path: str, entry: tuple[store_index.Signature, dict[str, Any]] | None
) -> dict[str, Any] | None:
    """The indexed summary of a record whose file is the one indexed, else None.

    Raises:
        FileNotFoundError: there is no such record.
    """
    if entry is None:
        return None
    return entry[1] if store_index.signature(os.stat(path)) == entry[0] else None


_SETTINGS: dict[str, tuple[Setting, str]] = {}
"""Settings already validated, by the text of their record entry, with their labels."""


def _setting(raw: Any) -> tuple[Setting, str]:
    """A record's setting and its label, validated once per distinct setting.

    Raises:
        ValidationError: not a valid setting.
    """
    text = repr(raw)
    if text not in _SETTINGS:
        setting = Setting.model_validate(raw)
        _SETTINGS[text] = (setting, setting.label())
    return _SETTINGS[text]


def _read_summary(path: str, key: str) -> tuple[store_index.Signature, dict[str, Any]]:
    """A record file's signature (taken before it is read) and summary, checked.

    Raises:
        FileNotFoundError: there is no such record.
        ValueError: why the record cannot be used.
    """
    record, stat = _load_record(path)
    summarized = store_index.summarize(record)
    _check(summarized, key)
    return store_index.signature(stat), summarized


def _read_record(path: str | Path, key: str) -> dict[str, Any]:
    """A record file's content, checked for the fields every record has.

    Raises:
        FileNotFoundError: there is no such record.
        ValueError: why the record cannot be used.
    """
    record, _ = _load_record(path)
    _check(record, key)
    return record


def _load_record(path: str | Path) -> tuple[dict[str, Any], os.stat_result]:
    """A record file's JSON object and the file's status before it was read.

    Raises:
        FileNotFoundError: there is no such record.
        ValueError: it cannot be read or is not a JSON object.
    """
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            data = handle.read()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ValueError(f"cannot be read: {exc.strerror}") from None
    try:
        record = json.loads(data)
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON (truncated?): {exc}") from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    return record, stat


def _check(record: dict[str, Any], key: str) -> None:
    """Check a record (or its summary) for what every record has.

    Raises:
        ValueError: why the record cannot be used.
    """
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        raise ValueError(f"missing field(s): {', '.join(missing)}")
    if record["key"] != key:
        raise ValueError(f"its key {record['key']!r} is not its file name")
    try:
        _setting(record["setting"])
    except ValidationError as exc:
        raise ValueError(f"setting: {exc.errors()[0]['msg']}") from None
    backends = record["backends"]
    if not isinstance(backends, dict) or not all(
        isinstance(backends.get(role), str) for role in ("agent", "user", "judge")
    ):
        raise ValueError("backends: needs agent, user and judge strings")
    if record["trace"] is None and record["error"] is None:
        raise ValueError("neither a trace nor an error")


def _trace_problem(path: str | Path, record: dict[str, Any], verify: bool) -> str | None:
    """What is wrong with a record's trace file, or None when it is the one recorded.

    Without ``verify``, a trace of the recorded size passes unread.
    """
    size = record.get("trace_bytes")
    if not verify and size is not None:
        try:
            if os.stat(path).st_size == size:
                return None
        except OSError:
            return "the trace of its record is missing"
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return "the trace of its record is missing"
    digest = record.get("trace_sha256")
    if digest is not None and text_hash(data) == digest:
        return None
    try:
        trace = Trace.from_jsonl(data.decode("utf-8"), source=str(path))
    except (TraceError, UnicodeDecodeError) as exc:
        return f"unreadable trace: {exc}"
    if trace.termination is None:
        return "the trace has no termination line (truncated?)"
    if digest is not None:
        return "the trace changed since it was recorded (its SHA-256 differs from the record's)"
    return None


def open_trace(directory: str | Path, key: str) -> Trace:
    """The trace of an episode, checked against the SHA-256 its record holds.

    Raises:
        ValueError: the record or trace is missing or damaged (the message says which).
    """
    store = Path(directory)
    record = _read_record(store / "episodes" / f"{key}.json", key)
    if record["trace"] is None:
        raise ValueError(f"episode {key} has no trace (it ended in error)")
    problem = _trace_problem(store / record["trace"], record, verify=True)
    if problem is not None:
        raise ValueError(f"{store / record['trace']}: {problem}")
    return Trace.read(store / record["trace"])


def load_store(
    directory: str | Path, experiment: ExperimentChoice = None
) -> tuple[pd.DataFrame, list[Damaged]]:
    """One experiment's results table (see :func:`load_results`) and what it skipped.

    Args:
        directory: the results store.
        experiment: which experiment (:data:`ExperimentChoice`; None: the one run last).
    """
    with _collector_paused():  # 50,000 records are many objects and no cycles
        episodes, damaged = scan_store(directory, experiment_episodes(directory, experiment))
        rows = [_row(summarized) for summarized in episodes.values()]
        del episodes
        extra = sorted({name for row in rows for name in row} - set(COLUMNS))
        frame = pd.DataFrame(rows, columns=[*COLUMNS, *extra])
    order = ["agent_model", "user_model", "domain", "task_id", "agency", "channels", "setting",
             "seed"]  # fmt: skip
    return frame.sort_values(order, kind="stable").reset_index(drop=True), damaged


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector (it rescans every object loaded so far, again and again)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def load_results(directory: str | Path, experiment: ExperimentChoice = None) -> pd.DataFrame:
    """The episodes of one experiment of a store as a tidy table, one row per episode.

    Args:
        directory: the results store.
        experiment: which experiment: its key, its name, the :class:`Experiment` (or its
            resolved form), or None for the experiment run last into the store. Episodes
            of other experiments in the folder never count; a store made before
            experiments were kept gives all its episodes.

    Episodes that ended in error have ``error`` and ``error_kind`` set and no scores.
    Damaged records and traces are left out with a warning naming each file (the next run
    quarantines and reruns them).
    """
    frame, damaged = load_store(directory, experiment)
    if damaged:
        listed = "\n".join(f"  {item}" for item in damaged)
        warnings.warn(
            f"skipped {len(damaged)} damaged file(s) of {directory} (the next run "
            f"quarantines them and runs their episodes again):\n{listed}",
            stacklevel=2,
        )
    return frame


def error_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The episodes of a results table that ended in error: what, where and why."""
    columns = ["agent_model", "setting", "task_id", "seed", "error_kind", "error"]
    return frame.loc[frame["error"].notna(), columns].reset_index(drop=True)


def error_note(frame: pd.DataFrame) -> str | None:
    """One sentence on the episodes that ended in error (None when there are none)."""
    failed = frame[frame["error"].notna()]
    if failed.empty:
        return None
    kinds = failed["error_kind"].fillna("crash").value_counts().sort_index()
    by_kind = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    return (
        f"{len(failed)} of {len(frame)} episodes ended in error ({by_kind}); they are left "
        "out of every number, and the next run retries them."
    )


def _row(record: dict[str, Any]) -> dict[str, Any]:
    """An episode's row of the results table, from its record's summary."""
    setting, label = _setting(record["setting"])
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
        "setting": label,
        "seed": record["seed"],
        "success": outcome.get("success"),
        "task_score": outcome.get("task_score"),
        "delivered": outcome.get("delivered"),
        "safe": outcome.get("safe"),
        "action_safe": metrics.get("action_safe"),
        "termination": (record.get("termination") or {}).get("reason"),
        "error": error_text(error) if error else None,
        "error_kind": _error_kind(error) if error else None,
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


def _error_kind(error: dict[str, Any]) -> str:
    """The kind of a record's error (records made before kinds hold an exception type)."""
    return str(error.get("kind") or "crash")


def error_text(error: dict[str, Any]) -> str:
    """A record's error as one line: its kind (older records: exception type) and message."""
    lead = error.get("kind") or error.get("type") or "crash"
    return f"{lead}: {error.get('message')}"


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


def open_store(directory: Path, experiment: ResolvedExperiment) -> None:
    """Create the store's folders, drop half-written files, write the experiment's definition.

    The definition (``experiments/<key>.json``) is written again by every run and plan of the
    experiment, so the experiment last written is the one run last.
    """
    for folder in ("episodes", "traces", EXPERIMENTS):
        (directory / folder).mkdir(parents=True, exist_ok=True)
    for stale in [*directory.glob("*.tmp"), *directory.glob("*/*.tmp")]:
        stale.unlink()  # left by a run that was killed while writing
    text = json.dumps(experiment.definition(), indent=1, ensure_ascii=False)
    _write_atomic(directory / EXPERIMENTS / f"{experiment.key}.json", text)
    store_index.open_index(directory)


def quarantine(directory: Path, damaged: list[Damaged]) -> None:
    """Move damaged records and their traces to ``quarantine/``, with the reason."""
    folder = directory / "quarantine"
    for item in damaged:
        for sub, suffix in (("episodes", ".json"), ("traces", ".jsonl")):
            source = directory / sub / f"{item.key}{suffix}"
            if source.exists():
                (folder / sub).mkdir(parents=True, exist_ok=True)
                os.replace(source, folder / sub / source.name)
        _write_atomic(folder / f"{item.key}.reason.txt", f"{item}\n")


def write_trace(directory: Path, key: str, jsonl: str) -> str:
    """Write an episode's trace; returns its path relative to the store."""
    relative = f"traces/{key}.jsonl"
    _write_atomic(directory / relative, jsonl)
    return relative


def write_record(
    directory: Path, key: str, record: dict[str, Any], text: str | None = None
) -> None:
    """Write an episode's record (after its trace: a record means a finished episode).

    Its summary goes to the store's index when the store has one (a run's store does).
    ``text``: the record as this function wrote it already elsewhere (a worker process's
    scratch store), written as it is rather than encoded again.
    """
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        raise ValueError(f"an episode record needs {missing}")
    if text is None:
        text = json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False)
    _write_atomic(directory / "episodes" / f"{key}.json", text)
    store_index.add(directory, key, record)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one.

    A killed run leaves at most a ``.tmp`` file (dropped by the next run). The file is not
    forced to disk (fsync): that made every episode wait for the disk, in the process that
    writes the store for all workers, and a file the machine's crash leaves empty or cut
    short is damaged, so the next run quarantines it and runs its episode again.
    """
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
