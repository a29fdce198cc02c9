"""Domain environments and the factory that builds one for a scenario."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from hasbench.envs.base import Environment, EnvironmentDataError

if TYPE_CHECKING:
    from hasbench.scenario import Scenario

ENVIRONMENTS: dict[str, str] = {
    "mock": "hasbench.envs.mock:MockEnvironment",
    "retail": "hasbench.envs.retail:RetailEnvironment",
    "airline": "hasbench.envs.airline:AirlineEnvironment",
    "telecom": "hasbench.envs.telecom:TelecomEnvironment",
    "coding": "hasbench.envs.coding:CodingEnvironment",
}
"""Domain name -> "module:class". Adding a domain means adding one line here."""


def environment_class(domain: str) -> type[Environment]:
    """The Environment subclass registered for a domain."""
    try:
        module_name, class_name = ENVIRONMENTS[domain].split(":")
    except KeyError:
        raise EnvironmentDataError(f"no environment registered for domain {domain!r}") from None
    return getattr(importlib.import_module(module_name), class_name)


def make_environment(scenario: Scenario) -> Environment:
    """A fresh environment in the scenario's initial state."""
    return environment_class(scenario.domain).from_scenario(scenario)
