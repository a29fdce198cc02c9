"""Step 3 of the construction pipeline: pattern templates turn a base task into a HAS scenario.

A template is a function ``(base, context) -> dict`` registered for one or more domains and
one pattern with :func:`template`. It returns the scenario's fields (everything but the
task id); :func:`adapt` numbers the task, validates it (schema and checks:
:func:`hasbench.scenario.checked_scenario`) and records the provenance. A template that
cannot adapt a particular task raises :class:`Declined` with the reason, which the
pipeline reports; it never invents a task the source cannot support.

Templates live in the modules of the :mod:`hasbench.build.templates` package, which are
all imported the first time templates are looked up. A domain adds its templates by adding
a module there (or by calling :func:`template` from its own module before the pipeline
runs): nothing in this file or another domain's module changes. The τ² templates are in
:mod:`hasbench.build.templates.tau2`, those of the MultiAgentBench domains in
:mod:`hasbench.build.templates.marble_coding`, :mod:`~hasbench.build.templates.marble_research`
and :mod:`~hasbench.build.templates.marble_bargaining`.
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hasbench.scenario import Scenario, ScenarioError, checked_scenario

if TYPE_CHECKING:
    from hasbench.build.base_tasks import BaseTask

Template = Callable[["BaseTask", "AdaptContext"], dict[str, Any]]
_TEMPLATES: dict[str, dict[str, Template]] = {}
_loaded = False


class Declined(Exception):
    """A template cannot adapt this base task; the message says why."""


class AdaptationError(ValueError):
    """A template produced an invalid scenario; the message names template, task and field."""


@dataclass(frozen=True)
class AdaptContext:
    """What a template may use besides the base task.

    Attributes:
        pattern: the pattern being instantiated.
        secondary: the panel's other supported patterns (metadata only).
        rng: the generator for this (task, pattern), seeded from the build seed and both.
    """

    pattern: str
    secondary: tuple[str, ...]
    rng: np.random.Generator


def template(domains: str | tuple[str, ...], pattern: str) -> Callable[[Template], Template]:
    """Register a function as the template of ``pattern`` for the given domains.

    Raises:
        ValueError: another template is already registered for one of them.
    """
    names = (domains,) if isinstance(domains, str) else domains

    def register(func: Template) -> Template:
        for domain in names:
            existing = _TEMPLATES.setdefault(domain, {}).get(pattern)
            if existing is not None and existing is not func:
                raise ValueError(
                    f"{domain}/{pattern}: template already registered "
                    f"({existing.__module__}.{existing.__name__})"
                )
            _TEMPLATES[domain][pattern] = func
        return func

    return register


def load_templates() -> None:
    """Import every module of :mod:`hasbench.build.templates` (once)."""
    global _loaded
    if _loaded:
        return
    package = importlib.import_module("hasbench.build.templates")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    _loaded = True


def templates_for(domain: str) -> dict[str, Template]:
    """Pattern -> template registered for a domain (empty when the domain has none yet)."""
    load_templates()
    return dict(_TEMPLATES.get(domain, {}))


def rng_for(seed: int, key: str, pattern: str) -> np.random.Generator:
    """A generator that depends only on the build seed, the base task and the pattern."""
    digest = hashlib.sha256(f"{seed}:{key}:{pattern}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def adapt(
    base: BaseTask, pattern: str, number: int, *, secondary: tuple[str, ...] = (), seed: int = 0
) -> Scenario:
    """Instantiate one pattern for one base task as task ``{domain}_{pattern}_{number:03d}``.

    Raises:
        Declined: the template cannot adapt this task (or none is registered).
        AdaptationError: the template's result does not validate.
    """
    func = templates_for(base.domain).get(pattern)
    if func is None:
        raise Declined(f"no {pattern} template registered for {base.domain}")
    context = AdaptContext(pattern, secondary, rng_for(seed, base.key, pattern))
    fields = func(base, context)
    task_id = f"{base.domain}_{pattern}_{number:03d}"
    fields.setdefault("metadata", {})
    fields["metadata"]["adaptation"] = {
        "pattern": pattern,
        "template": f"{func.__module__}.{func.__name__}",
        "secondary_patterns": list(secondary),
        "source": base.source,
        "source_id": base.source_id,
    }
    label = f"{func.__name__} on {base.key} ({task_id})"
    try:
        return checked_scenario(
            {
                "task_id": task_id,
                "source_task_id": base.source_id,
                "adaptation_pattern": pattern,
                **fields,
            }
        )
    except ScenarioError as exc:
        raise AdaptationError(f"{label}: {exc}") from None
