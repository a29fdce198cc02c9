"""Shared base of the database-backed service domains (Retail, Airline).

A service environment's state is one JSON database in τ²-bench format. It comes either
from ``environment.db_path`` of the scenario (a τ²-bench ``db.json`` loads as is) or,
by default, from the domain's seeded generator. Both are validated by the domain's
pydantic schema and cached per process; environments share its records (copy-on-write).
Relative ``db_path`` values are looked up in the working directory, then in
:data:`hasbench.paths.DATA_DIR`.

Write tools change records copy-on-write (:meth:`Environment.writable`), so a snapshot
for rollback and diffs costs a shallow copy of the tables, not of the database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ValidationError

from hasbench.envs.base import Environment, EnvironmentDataError, ToolError, tool
from hasbench.envs.state import fast_copy, shared_origin, shared_tables
from hasbench.paths import DATA_DIR, POLICIES_DIR, data_stamp, is_data_file, read_data_bytes
from hasbench.registry import get_domain

if TYPE_CHECKING:
    from hasbench.scenario import Scenario

DEFAULT_DB_SEED = 0
"""Seed of the generated database every built-in task runs against."""

_EXPRESSION = re.compile(r"^[0-9+\-*/(). ]+$")


class ServiceEnvironment(Environment):
    """A service domain: a validated JSON database, a policy and the generic tools."""

    schema: ClassVar[type[BaseModel]]
    """Pydantic model of the whole database (τ²-bench format)."""
    copy_on_write = True

    @classmethod
    def generate_db(cls, seed: int) -> dict[str, Any]:
        """Generate the domain database from a seed (implemented per domain)."""
        raise NotImplementedError

    @classmethod
    def check_db(cls, db: dict[str, Any]) -> list[str]:
        """Cross-record problems of a schema-valid database (dangling ids, ...)."""
        return []

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> ServiceEnvironment:
        """The database (file or generated) with the scenario's initial state applied."""
        settings = scenario.environment
        if settings.db_path:
            path = resolve_data_path(settings.db_path)
            if not is_data_file(path):
                raise EnvironmentDataError(f"{path}: database file not found")
            shared = _loaded(cls, path, data_stamp(path))
        else:
            shared = _generated(cls, DEFAULT_DB_SEED)
        env = cls(shared_tables(shared))
        env.origin = shared_origin(shared)
        env.policy = (
            load_policy(settings.policy_path) if settings.policy_path else domain_policy(cls.domain)
        )
        env.compat = settings.compat
        env.initialize(scenario)
        return env

    @classmethod
    def default_db(cls, seed: int = DEFAULT_DB_SEED) -> dict[str, Any]:
        """A private copy of the generated database for ``seed``."""
        return fast_copy(_generated(cls, seed))

    @classmethod
    def load_db(cls, path: Path) -> dict[str, Any]:
        """A private copy of a database file, validated.

        Raises:
            EnvironmentDataError: naming the file and what is wrong with it.
        """
        if not is_data_file(path):
            raise EnvironmentDataError(f"{path}: database file not found")
        return fast_copy(_loaded(cls, path, data_stamp(path)))

    @classmethod
    def normalize(cls, raw: Any, source: str) -> dict[str, Any]:
        """Validate raw database data and return it with every optional field present."""
        try:
            model = cls.schema.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise EnvironmentDataError(
                f"{source}: invalid {cls.domain} database at {where}: {first['msg']}"
                + (f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else "")
            ) from None
        db = model.model_dump(mode="json")
        problems = cls.check_db(db)
        if problems:
            raise EnvironmentDataError(f"{source}: invalid {cls.domain} database: {problems[0]}")
        return db

    def failing_records(
        self, table: str, fails: Callable[[dict[str, Any], dict[str, Any]], bool]
    ) -> set[str]:
        """Keys of ``db[table]`` whose record ``fails(record, users)``.

        ``fails`` must depend only on the record and its owner, ``users[record["user_id"]]``.
        Records that are the origin's and whose owner is too keep the origin's verdict
        (computed once per origin), so only the records a write replaced are looked at.
        """
        records, users = self.db[table], self.db["users"]
        affected = set(self.changed_records(table))
        known: set[str] = set()
        if self.origin is not None:
            known, owned = self.origin.remember(
                (table, fails), lambda db: _verdicts(db, table, fails)
            )
            for user_id in self.changed_records("users"):
                affected.update(owned.get(user_id, ()))
        return {k for k in known if k in records and k not in affected} | {
            k for k in affected if k in records and fails(records[k], users)
        }

    # -- generic tools shared by the service domains ----------------------------------

    @tool(kind="generic")
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression (digits, + - * / ( ) . and spaces).

        Args:
            expression: The expression, e.g. "2 * (3.5 + 1)".

        Returns:
            The value rounded to two decimals, as text.
        """
        if not _EXPRESSION.match(expression):
            raise ToolError("invalid_arguments", "Invalid characters in expression")
        try:
            value = eval(expression, {"__builtins__": {}}, {})  # characters checked above
        except (SyntaxError, ZeroDivisionError, TypeError) as exc:
            raise ToolError("invalid_arguments", f"Cannot evaluate expression: {exc}") from None
        return str(round(float(value), 2))

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human support agent, with a summary of the issue.

        Args:
            summary: What the customer needs and what has been done so far.
        """
        return "Transfer successful"


def resolve_data_path(value: str) -> Path:
    """A data file path: absolute, or relative to the working directory or DATA_DIR."""
    path = Path(value)
    if path.is_absolute() or path.exists():
        return path
    return DATA_DIR / path


def load_policy(name: str) -> str:
    """The policy text: a file name in ``data/policies`` or any data path."""
    path = POLICIES_DIR / name if "/" not in name else resolve_data_path(name)
    if not path.is_file():
        raise EnvironmentDataError(f"{path}: policy file not found")
    return _policy_text(path)


def domain_policy(domain: str) -> str:
    """The text of the policy file a domain registers (empty when it has none)."""
    policy = get_domain(domain).policy
    return "" if policy is None else load_policy(str(policy))


def id_mismatches(db: dict[str, Any], id_fields: dict[str, str]) -> list[str]:
    """Records whose key differs from their id field (table -> id field name)."""
    return [
        f"{table}.{key}: {id_field} is {record[id_field]!r}"
        for table, id_field in id_fields.items()
        for key, record in db[table].items()
        if record[id_field] != key
    ]


def not_found(what: str) -> ToolError:
    """The error for an unknown id."""
    return ToolError("not_found", what)


def _verdicts(
    db: dict[str, Any], table: str, fails: Callable[[dict[str, Any], dict[str, Any]], bool]
) -> tuple[set[str], dict[str, list[str]]]:
    """The keys of a table's failing records, and user id -> keys of the records they own."""
    owned: dict[str, list[str]] = {}
    for key, record in db[table].items():
        owned.setdefault(record["user_id"], []).append(key)
    return {k for k, r in db[table].items() if fails(r, db["users"])}, owned


@lru_cache(maxsize=8)
def _generated(cls: type[ServiceEnvironment], seed: int) -> dict[str, Any]:
    """The validated generated database, shared: callers copy it or change it copy-on-write."""
    source = f"generated {cls.domain} database (seed {seed})"
    return cls.normalize(cls.generate_db(seed), source)


@lru_cache(maxsize=8)
def _loaded(cls: type[ServiceEnvironment], path: Path, mtime_ns: int) -> dict[str, Any]:
    """A validated database file, shared like :func:`_generated`."""
    try:
        raw = json.loads(read_data_bytes(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EnvironmentDataError(f"{path}: not valid JSON: {exc}") from None
    return cls.normalize(raw, str(path))


@lru_cache(maxsize=16)
def _policy_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")
