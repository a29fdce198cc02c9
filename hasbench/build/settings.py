"""What a build of HAS-Bench is asked to do (its settings) and what it produced (its result).

:mod:`hasbench.build.pipeline` runs a build with :class:`BuildSettings` and fills a
:class:`BuildResult`; :mod:`hasbench.build.build_report` writes the report from both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hasbench.build.patterns import RULE_JUDGES
from hasbench.build.validation import RULE_REVIEWERS


@dataclass
class BuildSettings:
    """Everything besides the sources that decides a build's result."""

    judges: tuple[str, ...] = RULE_JUDGES
    min_agree: int = 3
    structural: tuple[str, ...] = RULE_REVIEWERS
    worthiness: tuple[str, ...] = RULE_REVIEWERS
    patterns_per_task: int | None = None
    """At most this many scenarios per base task (None: one per supported pattern, as the
    paper adapts every pattern a base task supports)."""
    max_repair_rounds: int = 2
    per_stratum: int = 2
    seed: int = 0
    workers: int = 2


@dataclass
class BuildResult:
    """What a build produced (also written to ``build_report.json``)."""

    counts: dict[str, dict[str, Any]] = field(default_factory=dict)
    patterns: dict[str, int] = field(default_factory=dict)
    domain_patterns: dict[str, dict[str, int]] = field(default_factory=dict)
    """Included tasks per domain and pattern."""
    kappa: dict[str, Any] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Source benchmark -> release, origin and file hashes (also in ``benchmark.json``)."""
    stages: dict[str, Any] = field(default_factory=dict)
    """Counts per step, domain and pattern: base tasks, supported, declined, excluded."""
    skipped: list[str] = field(default_factory=list)
    """Kept source tasks that could not be imported, with the reason."""
