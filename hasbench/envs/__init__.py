"""Domain environments and the factory that builds one for a scenario.

Each domain module here declares its :class:`hasbench.registry.Domain` as ``DOMAIN``; the
registry finds them by scanning this package (see :mod:`hasbench.registry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hasbench.envs.base import Environment, EnvironmentDataError
from hasbench.registry import DomainError, get_domain

if TYPE_CHECKING:
    from hasbench.scenario import Scenario


def environment_class(domain: str) -> type[Environment]:
    """The Environment subclass of a registered domain."""
    try:
        return get_domain(domain).environment
    except DomainError as exc:
        raise EnvironmentDataError(f"no environment registered: {exc}") from None


def make_environment(scenario: Scenario) -> Environment:
    """A fresh environment in the scenario's initial state."""
    return environment_class(scenario.domain).from_scenario(scenario)
