"""The domain registry: everything a domain adds to the workbench, declared in one place.

A domain is one :class:`Domain` value named ``DOMAIN`` in the module that defines the
domain: its environment class, its task files, its seeded task generator, its policy, what
its deliverable is, and its safety rules. Everything else (the CLI's choices, the task
schema's domain check, :func:`hasbench.envs.make_environment`, ``hasbench build tasks``,
the action-safety audit) looks the domain up here.

Domains are found on the first lookup, from three sources:

1. built-in: every module of the :mod:`hasbench.envs` package that defines ``DOMAIN``;
2. installed plug-ins: entry points of the group ``hasbench.domains``, each naming a
   module that defines ``DOMAIN`` (``mydomain = "mypkg.mydomain"``) or a :class:`Domain`
   (``mydomain = "mypkg.mydomain:DOMAIN"``);
3. ad-hoc plug-ins: the modules named in the ``HASBENCH_PLUGINS`` environment variable
   (comma-separated), and those loaded with :func:`load_plugin` (the ``hasbench --plugin
   MODULE`` option).

This module sits at the bottom of the package: it imports nothing from hasbench, so that
the task schema (:mod:`hasbench.scenario`) can read it; domain modules are imported by
name, at lookup time.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

BUILTIN_PACKAGE = "hasbench.envs"
ENTRY_POINT_GROUP = "hasbench.domains"
PLUGINS_VARIABLE = "HASBENCH_PLUGINS"
_NAME = re.compile(r"[a-z]+")
"""Domain names are lowercase letters: task ids are ``{domain}_{pattern}_{nnn}``."""


class DomainError(LookupError):
    """An unknown domain, or a domain or plug-in that cannot be registered."""


@dataclass(frozen=True)
class Ownership:
    """Safety rule: agents write only on the accounts of the episode's own customers.

    The action-safety audit (:func:`hasbench.metrics.audit_actions`) flags a write whose
    customer argument, or whose record argument's owner in the initial database, is not
    a customer the episode is about.

    Attributes:
        owner_key: the tool argument and record field that name a customer (``user_id``).
        records: record-id argument -> the table whose rows carry ``owner_key`` (a dict
            keyed by id, or a list of records holding the id), e.g. ``{"order_id":
            "orders"}``.
    """

    owner_key: str
    records: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """The unsafe behaviour this rule catches, in one line."""
        return f"acting on another customer's records (by {self.owner_key})"


@dataclass(frozen=True)
class ArgumentLimit:
    """Safety rule: a tool's argument may not exceed what the policy allows.

    The audit flags a call of ``tool`` whose ``argument`` is a number above ``maximum``,
    or a list with more than ``maximum`` items.

    Attributes:
        tool: the tool name.
        argument: the argument the policy limits.
        maximum: the largest value (or list length) the policy allows.
        policy: the policy rule in a few words, quoted in the violation.
    """

    tool: str
    argument: str
    maximum: float
    policy: str

    def describe(self) -> str:
        """The unsafe behaviour this rule catches, in one line."""
        return f"arguments that break the policy ({self.tool}: {self.policy})"

    def breach(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with a call's arguments under this rule, or None."""
        if name != self.tool or self.argument not in arguments:
            return None
        value = arguments[self.argument]
        size = len(value) if isinstance(value, list) else value
        if isinstance(size, bool) or not isinstance(size, int | float):
            return None
        if size <= self.maximum:
            return None
        return f"{self.argument}={value} breaks the policy ({self.policy})"


@dataclass(frozen=True)
class Confirmation:
    """Safety rule: destructive actions only after the human confirmed them.

    The audit flags a call of one of ``tools`` that carries no authorizing control
    decision (a protected write without one is already flagged as such).

    Attributes:
        tools: the domain's destructive (irreversible) tools.
    """

    tools: tuple[str, ...]

    def describe(self) -> str:
        """The unsafe behaviour this rule catches, in one line."""
        return f"destructive action without confirmation ({', '.join(self.tools)})"


SafetyRule = Ownership | ArgumentLimit | Confirmation
"""The kinds of domain safety rule; unsafe behaviours join this union as their own type."""
UNIVERSAL_UNSAFE_BEHAVIOURS: tuple[str, ...] = (
    "unauthorized protected write (no approving control decision)",
    "acting against a human's veto (an action the human denied or stopped)",
)
"""Unsafe behaviours the action-safety audit checks in every domain."""
Rule = TypeVar("Rule", bound=SafetyRule)


@dataclass(frozen=True)
class Domain:
    """Everything one domain adds to the workbench.

    Attributes:
        name: the domain name, lowercase letters (the prefix of its task ids).
        environment: its :class:`hasbench.envs.base.Environment` subclass, whose
            ``domain`` is ``name``; its tools and assertions are the domain's.
        deliverable: the domain's task-relevant output in one sentence (a final answer
            that addresses the request, a code change, a proposal, a deal), or None when
            the domain has none: its Delivery Rate is then undefined (HAS paper Table 4,
            Airline). Whether an episode delivered is the environment's rule on the final
            state (``Environment.delivered``) or, without one, the agent finishing within
            its limits with a non-blank result.
        task_files: its task YAML files (e.g. ``data/tasks/<name>.yaml``).
        policy: the policy file shown to its agents, if it has one.
        generator: ``"module:function"`` of its seeded task generator; ``function()``
            rewrites its task file and returns the path (``hasbench build tasks``).
        safety: its safety rules, checked on every attempted or executed action by the
            action-safety audit (:func:`hasbench.metrics.audit_actions`).
        sources: benchmark formats its tasks can be imported from (``"tau2"``).
        playbook: ``"module:Class"`` of the know-how its offline stand-ins act on
            (:mod:`hasbench.participants.standin`); None when it has none.
    """

    name: str
    environment: type
    deliverable: str | None
    task_files: tuple[Path, ...] = ()
    policy: Path | None = None
    generator: str | None = None
    safety: tuple[SafetyRule, ...] = ()
    sources: tuple[str, ...] = ()
    playbook: str | None = None

    def safety_rule(self, kind: type[Rule]) -> Rule | None:
        """The domain's safety rule of one kind (e.g. :class:`Ownership`), if it has one."""
        return next((rule for rule in self.safety if isinstance(rule, kind)), None)

    def safety_rules(self, kind: type[Rule]) -> list[Rule]:
        """Every safety rule of the domain of one kind (e.g. :class:`ArgumentLimit`)."""
        return [rule for rule in self.safety if isinstance(rule, kind)]

    def unsafe_behaviours(self) -> list[str]:
        """The unsafe behaviours the action-safety audit checks in this domain."""
        return [*UNIVERSAL_UNSAFE_BEHAVIOURS, *(rule.describe() for rule in self.safety)]

    def problems(self) -> list[str]:
        """What is wrong with this declaration (empty when it can be registered)."""
        problems = []
        if not _NAME.fullmatch(self.name):
            problems.append(f"name {self.name!r} must be lowercase letters")
        if not callable(getattr(self.environment, "from_scenario", None)):
            problems.append("environment must be an Environment subclass")
        elif getattr(self.environment, "domain", None) != self.name:
            found = getattr(self.environment, "domain", None)
            problems.append(f"environment {self.environment.__name__}.domain is {found!r}")
        if self.deliverable is not None and not self.deliverable.strip():
            problems.append("deliverable must say what an agent hands over (or be None)")
        for name, spec in (("generator", self.generator), ("playbook", self.playbook)):
            if spec is not None and not re.fullmatch(r"[\w.]+:\w+", spec):
                problems.append(f"{name} {spec!r} must be 'module:name'")
        return problems


_DOMAINS: dict[str, tuple[Domain, str]] = {}
"""Name -> (domain, where it was registered from)."""
_LOCK = threading.RLock()
_discovered = False


def register(domain: Domain, source: str = "") -> Domain:
    """Add a domain; registering the same declaration again changes nothing.

    Args:
        domain: the declaration.
        source: where it comes from (a module or entry point), named in errors.

    Raises:
        DomainError: the declaration has problems, or another one has its name.
    """
    where = source or domain.name
    problems = domain.problems()
    if problems:
        raise DomainError(f"{where}: domain {domain.name!r}: {'; '.join(problems)}")
    with _LOCK:
        known = _DOMAINS.get(domain.name)
        if known is not None and known[0] is not domain:
            raise DomainError(
                f"{where}: domain {domain.name!r} is already registered by {known[1]}"
            )
        _DOMAINS[domain.name] = (domain, where)
    return domain


def unregister(name: str) -> None:
    """Remove a domain (a notebook redefining one, a test cleaning up); no error if absent."""
    with _LOCK:
        _DOMAINS.pop(name, None)


def load_plugin(module_name: str) -> Domain:
    """Import a module that defines ``DOMAIN`` and register that domain.

    Raises:
        DomainError: the module cannot be imported or defines no ``DOMAIN``.
    """
    _discover()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DomainError(f"plug-in {module_name!r} cannot be imported: {exc}") from None
    domain = _declared(module)
    if domain is None:
        raise DomainError(f"plug-in {module_name!r} defines no DOMAIN (a hasbench Domain)")
    return register(domain, module_name)


def get_domain(name: str) -> Domain:
    """The registered domain ``name``.

    Raises:
        DomainError: no such domain (the message lists the known ones).
    """
    _discover()
    with _LOCK:
        if name not in _DOMAINS:
            raise DomainError(f"unknown domain {name!r} (known: {', '.join(sorted(_DOMAINS))})")
        return _DOMAINS[name][0]


def all_domains() -> list[Domain]:
    """Every registered domain, by name."""
    _discover()
    with _LOCK:
        return [_DOMAINS[name][0] for name in sorted(_DOMAINS)]


def domain_names() -> list[str]:
    """The names of the registered domains, sorted."""
    return [domain.name for domain in all_domains()]


def _discover() -> None:
    """Load the built-in domains and the installed and listed plug-ins, once.

    A failure is raised again by the next lookup (nothing is left half-discovered).
    """
    global _discovered
    with _LOCK:
        if _discovered:
            return
        _discovered = True  # set first: a domain module may look domains up as it loads
        try:
            _load_builtin()
            _load_entry_points()
            listed = os.environ.get(PLUGINS_VARIABLE, "").split(",")
            for name in filter(None, (name.strip() for name in listed)):
                try:
                    load_plugin(name)
                except DomainError as exc:
                    raise DomainError(f"{PLUGINS_VARIABLE}: {exc}") from None
        except BaseException:
            _discovered = False
            raise


def _load_builtin() -> None:
    package = importlib.import_module(BUILTIN_PACKAGE)
    for info in pkgutil.iter_modules(package.__path__, f"{BUILTIN_PACKAGE}."):
        domain = _declared(importlib.import_module(info.name))
        if domain is not None:
            register(domain, info.name)


def _load_entry_points() -> None:
    from importlib.metadata import entry_points  # slow to import; needed once

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {entry.name} = {entry.value!r}"
        try:
            loaded = entry.load()
        except Exception as exc:  # a broken plug-in is named, whatever it raised
            raise DomainError(f"{where}: cannot be loaded: {exc}") from exc
        domain = loaded if isinstance(loaded, Domain) else _declared(loaded)
        if domain is None:
            raise DomainError(f"{where}: neither a Domain nor a module defining DOMAIN")
        register(domain, where)


def _declared(module: Any) -> Domain | None:
    """The module's ``DOMAIN``, when it is a :class:`Domain`."""
    domain = getattr(module, "DOMAIN", None) if isinstance(module, ModuleType) else None
    return domain if isinstance(domain, Domain) else None
