"""Domain environments and the factory that builds one for a scenario.

Each domain module here declares its :class:`hasbench.registry.Domain` as ``DOMAIN``; the
registry finds them by scanning this package (see :mod:`hasbench.registry`).

Environments of copy-on-write domains are built once per task content (and per replay,
see :func:`replayed_environment`), frozen, and handed out as forks of that shared base.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hasbench.envs.base import Environment, EnvironmentDataError
from hasbench.registry import DomainError, get_domain

if TYPE_CHECKING:
    from hasbench.scenario import Scenario

SHARED_BASES_KEPT = 1024
"""Frozen environments kept per process (least recently used are dropped)."""

_shared: OrderedDict[tuple[Any, ...], tuple[Environment, Any]] = OrderedDict()


def environment_class(domain: str) -> type[Environment]:
    """The Environment subclass of a registered domain."""
    try:
        return get_domain(domain).environment
    except DomainError as exc:
        raise EnvironmentDataError(f"no environment registered: {exc}") from None


def make_environment(scenario: Scenario) -> Environment:
    """A fresh environment in the scenario's initial state."""
    return replayed_environment(scenario, "initial", lambda env: None)[0]


def replayed_environment(
    scenario: Scenario, name: str, replay: Callable[[Environment], Any]
) -> tuple[Environment, Any]:
    """A fresh environment after ``replay`` ran on it, and what ``replay`` returned.

    ``replay`` must be a deterministic function of the task (``name`` says which one, e.g.
    ``"gold"``). In copy-on-write domains it runs once per task content and process; the
    caller gets a fork of the result, so it may change the environment freely.
    """
    cls = environment_class(scenario.domain)
    if not cls.copy_on_write:
        env = cls.from_scenario(scenario)
        return env, replay(env)
    key = (cls, name, scenario.content_hash(), _file_stamps(scenario))
    entry = _shared.get(key)
    if entry is None:
        env = cls.from_scenario(scenario)
        entry = (env, replay(env))
        env.freeze()
        _shared[key] = entry
        if len(_shared) > SHARED_BASES_KEPT:
            _shared.popitem(last=False)
    else:
        _shared.move_to_end(key)
    return entry[0].fork(), entry[1]


def _file_stamps(scenario: Scenario) -> tuple[tuple[str, int], ...]:
    """Modification times of the data files a task names (a changed file is a new base)."""
    from hasbench.envs.service import resolve_data_path
    from hasbench.paths import data_stamp, is_data_file

    stamps = []
    for field in ("db_path", "user_db_path", "policy_path"):
        value = getattr(scenario.environment, field, None)
        if value:
            path = resolve_data_path(value)
            stamps.append((str(path), data_stamp(path) if is_data_file(path) else -1))
    return tuple(stamps)
