"""MultiAgentBench (MARBLE) task files: the JSONL reader and the import dispatch.

A MARBLE task file has one JSON object per line with the same twelve top-level keys in
every scenario (``scenario``, ``task_id``, ``coordinate_mode``, ``relationships``,
``llm``, ``environment``, ``task``, ``agents``, ``memory``, ``metrics``,
``engine_planner``, ``output``). :func:`read_marble` checks that shape line by line;
:func:`import_marble` hands each record to the converter registered for its
``scenario`` in :data:`CONVERTERS` and collects the converted tasks, the per-record
warnings and the reasons for records that were not converted. Converters live in their
own modules (``marble_coding``, ``marble_research``, ``marble_bargaining``) and expose
``convert(record, pattern) -> (raw task, warnings)``, raising :class:`RecordSkipped` with
the reason when a record cannot be converted.

The source files are read from the user's checkout; nothing of them is copied into the
project.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hasbench.build.builder import dump_tasks
from hasbench.envs import make_environment
from hasbench.envs.base import EnvironmentDataError
from hasbench.scenario import Scenario, check_scenario

RECORD_KEYS = frozenset(
    {
        "scenario", "task_id", "coordinate_mode", "relationships", "llm", "environment",
        "task", "agents", "memory", "metrics", "engine_planner", "output",
    }
)  # fmt: skip
CONVERTERS: dict[str, str] = {
    "coding": "hasbench.build.marble_coding",
    "research": "hasbench.build.marble_research",
    "bargaining": "hasbench.build.marble_bargaining",
}
"""MARBLE scenario -> module with ``convert(record, pattern)``."""


class MarbleFormatError(ValueError):
    """A file that is not a MARBLE task file (unreadable, or not one JSON object a line)."""


class RecordSkipped(ValueError):
    """A record that cannot be converted; the message says why."""


@dataclass(frozen=True)
class MarbleRecord:
    """One task of a MARBLE file, with where it came from."""

    source: str
    line: int
    data: dict[str, Any]

    @property
    def scenario(self) -> str:
        """The record's scenario label (research, bargaining, coding, ...)."""
        return str(self.data.get("scenario", ""))

    @property
    def task_id(self) -> int:
        """MARBLE's task id (unique within one file only)."""
        return int(self.data["task_id"])

    @property
    def label(self) -> str:
        """How messages name the record: ``file:line (scenario task N)``."""
        return f"{self.source}:{self.line} ({self.scenario} task {self.data.get('task_id')})"


@dataclass
class ImportResult:
    """What an import produced."""

    read: int = 0
    scenarios: list[Scenario] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line: records read, converted per scenario, not converted."""
        counts: dict[str, int] = {}
        for scenario in self.scenarios:
            counts[scenario.domain] = counts.get(scenario.domain, 0) + 1
        parts = ", ".join(f"{n} {domain}" for domain, n in sorted(counts.items())) or "none"
        return (
            f"read {self.read} records: converted {len(self.scenarios)} ({parts}), "
            f"not converted {len(self.skipped)}, warnings {len(self.warnings)}"
        )


def read_marble(path: str | Path) -> tuple[list[MarbleRecord], list[str]]:
    """The records of a MARBLE JSONL file and the lines that are not records (with why).

    Raises:
        MarbleFormatError: the file cannot be read or holds no JSON object at all.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MarbleFormatError(f"{path}: cannot read file: {exc}") from None
    records: list[MarbleRecord] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not valid JSON: {exc.msg}")
            continue
        if not isinstance(data, dict):
            problems.append(f"{path}:{number}: expected a JSON object")
            continue
        missing = sorted(RECORD_KEYS - set(data))
        if missing:
            problems.append(f"{path}:{number}: missing keys: {', '.join(missing)}")
            continue
        if not isinstance(data["task_id"], int) or isinstance(data["task_id"], bool):
            problems.append(f"{path}:{number}: task_id is not an integer")
            continue
        records.append(MarbleRecord(str(path), number, data))
    if not records and not problems:
        raise MarbleFormatError(f"{path}: no MARBLE records in the file")
    return records, problems


def import_marble(path: str | Path, pattern: str = "D") -> ImportResult:
    """Convert every record of a MARBLE task file that has a converter.

    Each converted task is validated against the schema and its environment is built, so
    an imported task is known to run. Records that cannot be converted are reported in
    ``skipped`` with the reason; recoverable gaps (e.g. a price missing from a profile)
    in ``warnings``.

    Raises:
        MarbleFormatError: the file is not a MARBLE task file.
    """
    records, problems = read_marble(path)
    result = ImportResult(read=len(records) + len(problems), skipped=list(problems))
    for record in records:
        module = CONVERTERS.get(record.scenario)
        if module is None:
            known = ", ".join(sorted(CONVERTERS))
            result.skipped.append(f"{record.label}: no converter for this scenario ({known})")
            continue
        try:
            converter = importlib.import_module(module)
            raw, warnings = converter.convert(record, pattern)
            _runnable(raw, converter)
            scenario = Scenario.model_validate(raw)
            problems_found = check_scenario(scenario)
            if problems_found:
                first = problems_found[0]
                raise RecordSkipped(f"{first.path}: {first.message}")
            make_environment(scenario)
        except (RecordSkipped, ValidationError, EnvironmentDataError) as exc:
            result.skipped.append(f"{record.label}: {_one_line(exc)}")
            continue
        result.warnings += [f"{record.label}: {w}" for w in warnings]
        result.scenarios.append(scenario)
    return result


def _runnable(raw: dict[str, Any], converter: Any) -> None:
    """Make a converted record an imported task the checks can run.

    Its pattern is only a label (``pattern_provisional``: the import adds no human part);
    a converter with a ``reference_path(raw)`` gives the oracle's path (bargaining: a
    deal every limit allows; it raises :class:`RecordSkipped` for an infeasible record);
    without one (coding, research: MARBLE ships no answer) the task is judge-scored.
    """
    raw["metadata"]["pattern_provisional"] = True
    reference = getattr(converter, "reference_path", None)
    if reference is None:
        raw["metadata"]["judge_scored"] = True
    else:
        raw["evaluation_criteria"]["actions"] = reference(raw)


def write_tasks(scenarios: list[Scenario], out: str | Path) -> Path:
    """Write imported scenarios as a task YAML file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_tasks(scenarios), encoding="utf-8")
    return out


def clean_text(text: str) -> str:
    """MARBLE free text made readable: no indentation, PDF line breaks joined.

    Lines inside a paragraph are joined with a space; blank lines separate paragraphs;
    non-breaking spaces become spaces.
    """
    paragraphs = re.split(r"\n\s*\n", text.replace("\xa0", " "))
    joined = (" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)
    return "\n\n".join(p for p in joined if p)


def graph_edges(record: MarbleRecord) -> list[list[str]]:
    """MARBLE's relationships as graph-mode ``collaborates`` edges (labels are free text).

    MARBLE's research files say ``collaborate with`` and its bargaining files ``parent``
    (for peers, which would make a tree with several parents): both become peer edges,
    in the direction given.
    """
    agents = {a["agent_id"] for a in record.data["agents"]}
    edges = []
    for index, triple in enumerate(record.data["relationships"]):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise RecordSkipped(f"relationships[{index}] is not a [source, target, label] triple")
        source, target, _ = triple
        if source not in agents or target not in agents:
            raise RecordSkipped(f"relationships[{index}] names an unknown agent")
        edges.append([source, target, "collaborates"])
    return edges


def agents_of(record: MarbleRecord) -> list[dict[str, Any]]:
    """The record's agents, checked: a list of objects with an id and a profile."""
    agents = record.data["agents"]
    if not isinstance(agents, list) or not agents:
        raise RecordSkipped("agents is empty")
    for index, spec in enumerate(agents):
        if not isinstance(spec, dict) or not spec.get("agent_id") or not spec.get("profile"):
            raise RecordSkipped(f"agents[{index}] has no agent_id or profile")
    ids = [a["agent_id"] for a in agents]
    if len(set(ids)) != len(ids):
        raise RecordSkipped("two agents have the same agent_id")
    return agents


def _one_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc).splitlines()[0]
