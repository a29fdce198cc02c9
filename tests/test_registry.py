import dataclasses
import importlib
import os
import subprocess
import sys

import pytest

from hasbench import registry
from hasbench.envs import environment_class
from hasbench.envs.base import EnvironmentDataError
from hasbench.envs.mock import MockEnvironment
from hasbench.paths import TASKS_DIR
from hasbench.registry import Domain, DomainError, Ownership


def test_builtin_domains_are_found_by_scanning_the_envs_package():
    assert {"airline", "bargaining", "mock", "research", "retail", "telecom"} <= set(
        registry.domain_names()
    )
    for domain in registry.all_domains():
        assert domain.environment.domain == domain.name
        assert environment_class(domain.name) is domain.environment
        assert domain.task_files and all(path.is_file() for path in domain.task_files)
        assert domain.policy is not None and domain.policy.is_file()
        # every domain names its task-relevant output, except Airline (DR "–", Table 4)
        assert (domain.deliverable is None) == (domain.name == "airline")
        assert domain.deliverable is None or domain.deliverable.strip()
        if domain.name in ("mock", "retail", "airline", "telecom"):  # customer accounts
            assert domain.safety_rule(Ownership) is not None
        if domain.generator is not None:
            module, function = domain.generator.split(":")
            assert callable(getattr(importlib.import_module(module), function))
        if domain.playbook is not None:  # the offline stand-ins' know-how of the domain
            module, name = domain.playbook.split(":")
            assert isinstance(getattr(importlib.import_module(module), name), type)
    assert registry.get_domain("mock").generator is None  # hand-written examples
    assert registry.get_domain("retail").safety_rule(Ownership) == Ownership(
        owner_key="user_id", records={"order_id": "orders"}
    )


def test_unknown_domain_names_the_known_ones():
    with pytest.raises(
        DomainError, match=r"unknown domain 'shop' \(known: airline, bargaining, coding, mock,"
    ):
        registry.get_domain("shop")
    with pytest.raises(EnvironmentDataError, match="no environment registered"):
        environment_class("shop")


def test_a_second_declaration_under_a_taken_name_is_refused():
    retail = registry.get_domain("retail")
    assert registry.register(retail, "again") is retail  # the same declaration: no change
    clash = dataclasses.replace(registry.get_domain("mock"), deliverable="something else")
    taken = "mine: domain 'mock' is already registered by hasbench.envs.mock"
    with pytest.raises(DomainError, match=taken):
        registry.register(clash, "mine")
    assert registry.get_domain("mock") is not clash


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Bad_name"}, "must be lowercase letters"),
        ({"environment": dict}, "must be an Environment subclass"),
        ({"name": "other"}, "MockEnvironment.domain is 'mock'"),
        ({"deliverable": " "}, "deliverable must say"),
        ({"generator": "hasbench.build.retail_tasks.write"}, "must be 'module:name'"),
    ],
)
def test_declarations_with_problems_are_refused(changes, message):
    base = Domain(name="mock", environment=MockEnvironment, deliverable="a note")
    with pytest.raises(DomainError, match=message):
        registry.register(dataclasses.replace(base, **changes), "test")


def test_a_broken_plugin_is_named():
    with pytest.raises(DomainError, match="plug-in 'no_such_module' cannot be imported"):
        registry.load_plugin("no_such_module")
    with pytest.raises(DomainError, match="'hasbench.envs.base' defines no DOMAIN"):
        registry.load_plugin("hasbench.envs.base")
    examples = str(TASKS_DIR / "examples.yaml")
    result = subprocess.run(
        [sys.executable, "-m", "hasbench.cli", "validate", examples], capture_output=True,
        text=True, env={**os.environ, "HASBENCH_PLUGINS": "no_such_module"},
    )  # fmt: skip
    assert result.returncode == 2
    assert "HASBENCH_PLUGINS: plug-in 'no_such_module' cannot be imported" in result.stderr


def test_the_registry_imports_no_other_hasbench_module():
    code = (
        "import sys, hasbench.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith('hasbench.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "['hasbench.registry']", result.stderr
