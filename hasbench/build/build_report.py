"""The build report: a build's counts beside the paper's, and where they differ, why.

:func:`write_report` writes ``build_report.md`` and ``build_report.json`` for a
:class:`~hasbench.build.settings.BuildResult`: the sources it was built from, the tasks
per domain at every step beside Table 11 and §4.2, the tasks per pattern beside Table 3,
per domain and pattern, and a section on every difference from the paper: by how much,
whether it is within the tolerance (15% per domain, 25% per pattern), and which step's
rule made it (the pattern panel's support, a template's decline with its reason, a
validation exclusion with its reason).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.build.source_filter import PAPER_KEPT

if TYPE_CHECKING:
    from hasbench.build.settings import BuildResult, BuildSettings
    from hasbench.build.validation import Validation
    from hasbench.scenario import Scenario

PAPER_TASKS = {
    "retail": 94, "telecom": 100, "airline": 31, "coding": 115, "research": 30, "bargaining": 27,
}  # fmt: skip
"""HAS paper §4.2: tasks per domain (397 in all)."""
PAPER_PATTERNS = {"A": 107, "B": 114, "C": 35, "D": 62, "E": 61, "F": 18}
"""HAS paper Table 3: tasks per primary pattern."""
PAPER_PATTERN_DOMAINS = {"A": 4, "B": 4, "C": 4, "D": 4, "E": 3, "F": 2}
"""HAS paper Table 3: in how many domains each pattern occurs."""
TOLERANCE = {"domain": 0.15, "pattern": 0.25}
"""How far from the paper a count may land (share of the paper's count)."""


def deviation(count: int, paper: int) -> float:
    """The relative difference from the paper's count (0.1 = 10% more)."""
    return (count - paper) / paper


def differences(result: BuildResult) -> list[dict[str, Any]]:
    """Every count that differs from the paper's: what, by how much, and why.

    A domain's difference is traced through the steps: the kept base tasks, the patterns
    the panel supports on them, the adaptations templates declined and the tasks
    validation excluded (each with its most frequent reason); a pattern's likewise.
    """
    stages = result.stages
    found = []
    for domain, c in result.counts.items():
        if c["waiting"] or c["included"] == PAPER_TASKS[domain]:
            continue
        found.append(_difference("domain", domain, c["included"], PAPER_TASKS[domain],
                                 _causes(stages, domain=domain)))  # fmt: skip
    for pattern, paper in PAPER_PATTERNS.items():
        count = result.patterns.get(pattern, 0)
        if count != paper:
            found.append(_difference("pattern", pattern, count, paper,
                                     _causes(stages, pattern=pattern)))  # fmt: skip
    return found


def _difference(kind: str, name: str, count: int, paper: int, causes: list[str]) -> dict:
    share = deviation(count, paper)
    return {
        "kind": kind,
        "name": name,
        "count": count,
        "paper": paper,
        "deviation": round(share, 3),
        "within_tolerance": abs(share) <= TOLERANCE[kind],
        "causes": causes,
    }


def _causes(
    stages: dict[str, Any], domain: str | None = None, pattern: str | None = None
) -> list[str]:
    """The step-by-step account of one domain's or pattern's count."""

    def total(stage: str) -> int:
        return sum(
            n for d, row in stages[stage].items() if domain in (None, d)
            for p, why in row.items() if pattern in (None, p) for n in why.values()
        )  # fmt: skip

    def reasons(stage: str) -> str:
        counts: Counter[str] = Counter()
        for d, row in stages[stage].items():
            for p, why in row.items():
                if domain in (None, d) and pattern in (None, p):
                    counts.update({f"{p}: {r}" if pattern is None else f"{d}: {r}": n
                                   for r, n in why.items()})  # fmt: skip
        return "; ".join(f"{r} ({n})" for r, n in counts.most_common(3))

    lines = []
    if domain is not None:
        bases, none = stages["bases"][domain], stages["unassigned"][domain]
        lines.append(f"step 1 kept {bases} base tasks; the pattern panel supported no pattern "
                     f"on {none} of them")  # fmt: skip
        included = sum(stages["included"].get(domain, {}).values())
        per_base = included / bases if bases else 0
        paper = PAPER_TASKS[domain] / PAPER_KEPT[domain][1]
        lines.append(f"{per_base:.2f} included scenarios per base task (the paper: {paper:.2f})")
        secondary = stages.get("secondary", {}).get(domain, {})
        if secondary:
            primary = included - sum(secondary.values())
            share = deviation(primary, PAPER_TASKS[domain])
            lines.append(
                "adaptation makes a scenario of every pattern the panel supports (App. B.3.1: "
                "a base task may support several viable adaptations, each its own scenario): "
                f"{sum(secondary.values())} included scenarios adapt a base task's secondary "
                "pattern ("
                + ", ".join(f"{p} {n}" for p, n in sorted(secondary.items()))
                + f"); the primary patterns alone give {primary} ({share:+.0%})"
            )
    per = {p: n for p, n in _flat(stages["supported"], domain, pattern).items() if n}
    lines.append(
        "pattern panel (3 of 4 judges find the pattern viable): "
        + (", ".join(f"{k} {n}" for k, n in per.items()) or "nothing")
        + " supported"
    )
    declined, excluded = total("declined"), total("excluded")
    if declined:
        lines.append(f"templates declined {declined}: {reasons('declined')}")
    if excluded:
        lines.append(f"validation excluded {excluded}: {reasons('excluded')}")
    included = _flat(stages["included"], domain, pattern)
    lines.append(
        "included: " + (", ".join(f"{k} {n}" for k, n in included.items() if n) or "nothing")
    )
    return lines


def _flat(table: dict[str, dict[str, int]], domain: str | None, pattern: str | None) -> dict:
    """A domain's counts per pattern, or a pattern's counts per domain."""
    if domain is not None:
        return dict(table.get(domain, {}))
    return {d: row.get(pattern, 0) for d, row in table.items()}


def write_report(
    result: BuildResult,
    settings: BuildSettings,
    out: Path,
    declined: list[dict[str, str]],
    validations: dict[str, Validation],
    sample: list[Scenario],
) -> list[str]:
    """Write ``build_report.md`` and ``build_report.json`` into ``out``; their paths."""
    kappa = result.kappa
    found = differences(result)
    lines = ["# HAS-Bench build report", "", *_sources(result), "", _settings(settings), ""]
    lines += [
        "| domain | raw | kept (step 1) | paper kept | patterns assigned | adapted "
        "| pass every check (before repairs) | included | included passing every check "
        "| paper | difference |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for domain, c in result.counts.items():
        if c["waiting"]:
            cells = "waiting for the domain's adaptation templates | — | — | — | —"
        else:
            share = deviation(c["included"], c["paper"])
            cells = (f"{c['adapted']} | {c['checks_passed']} | {c['included']} "
                     f"| {c['included_passing']} | {c['paper']} | {share:+.0%}")  # fmt: skip
        lines.append(f"| {domain} | {c['raw']} | {c['kept']} | {c['paper_kept']} "
                     f"| {c['assigned']} | {cells} |")  # fmt: skip
    total = sum(c["included"] for c in result.counts.values())
    kept = sum(c["kept"] for c in result.counts.values())
    lines.append(f"| **all** | | {kept} | 301 | | | | **{total}** | | **397** | |")
    lines += ["", "| pattern | included | paper (Table 3) | difference | domains | paper domains |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for pattern, paper in PAPER_PATTERNS.items():
        count = result.patterns.get(pattern, 0)
        domains = sum(bool(row.get(pattern)) for row in result.domain_patterns.values())
        lines.append(f"| {pattern} | {count} | {paper} | {deviation(count, paper):+.0%} "
                     f"| {domains} | {PAPER_PATTERN_DOMAINS[pattern]} |")  # fmt: skip
    lines += ["", "Included tasks per domain and pattern (the paper gives no such breakdown):", "",
              "| domain | " + " | ".join(PAPER_PATTERNS) + " |",
              "|---|" + "---|" * len(PAPER_PATTERNS)]  # fmt: skip
    for domain, row in result.domain_patterns.items():
        lines.append(f"| {domain} | " + " | ".join(str(n) for n in row.values()) + " |")
    lines += ["", "## Differences from the paper", ""]
    lines += [
        f"Tolerance: {TOLERANCE['domain']:.0%} per domain, {TOLERANCE['pattern']:.0%} per "
        "pattern. Each difference is traced through the steps that decide the count.",
        "",
    ]
    for d in found:
        mark = "within tolerance" if d["within_tolerance"] else "**outside tolerance**"
        lines.append(f"- {d['kind']} **{d['name']}**: {d['count']} vs {d['paper']} "
                     f"({d['deviation']:+.0%}, {mark})")  # fmt: skip
        lines += [f"  - {cause}" for cause in d["causes"]]
    if result.waiting:
        lines += ["", "Adaptation is waiting for the domains " + ", ".join(result.waiting)
                  + ": they were filtered and their patterns assigned, but no templates are "
                  "registered for them yet (a module in hasbench/build/templates registering "
                  "`@template(<domain>, <pattern>)`); the next build adapts them."]  # fmt: skip
    lines += _panels(kappa, validations, declined)
    if result.skipped:
        lines += ["", "## Kept source tasks that could not be imported", ""]
        lines += [f"- {note}" for note in result.skipped]
    seconds = ", ".join(f"{k} {v:.1f}" for k, v in result.seconds.items())
    lines += [
        "",
        f"Human verification: {len(sample)} tasks sampled (at least {settings.per_stratum} "
        "per domain x coordination mode x source stratum) in review/review_sheet.csv and .html.",
        "",
        f"Time (s): {seconds}",
    ]
    if result.errors:
        lines += ["", "## Errors (rerun to retry; finished work is kept)", ""]
        lines += [f"- {e}" for e in result.errors]
    md, js = out / "build_report.md", out / "build_report.json"
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    verdicts = Counter(v.verdict for v in validations.values())
    report = {
        "sources": result.sources, "counts": result.counts, "patterns": result.patterns,
        "domain_patterns": result.domain_patterns, "paper_patterns": PAPER_PATTERNS,
        "paper_tasks": PAPER_TASKS, "differences": found, "stages": result.stages,
        "kappa": result.kappa, "waiting": result.waiting, "skipped": result.skipped,
        "errors": result.errors, "seconds": result.seconds, "validation": dict(verdicts),
    }  # fmt: skip
    js.write_text(json.dumps(report, indent=1, default=str, ensure_ascii=False), "utf-8")
    return [str(md), str(js)]


def _sources(result: BuildResult) -> list[str]:
    lines = ["Built from:", ""]
    for name, source in result.sources.items():
        lines.append(f"- {name}: {source['release']}, read from {source['origin']} "
                     f"({len(source['files'])} files; SHA-256 in benchmark.json)")  # fmt: skip
    return lines


def _settings(settings: BuildSettings) -> str:
    per_task = (f"up to {settings.patterns_per_task} patterns" if settings.patterns_per_task
                else "every supported pattern")  # fmt: skip
    return (
        f"Judges: {', '.join(settings.judges)} (a pattern needs {settings.min_agree} viable "
        f"votes); structural reviewers: {', '.join(settings.structural)}; worthiness "
        f"reviewers: {', '.join(settings.worthiness)}; {per_task} per base task; seed "
        f"{settings.seed}."
    )


def _panels(kappa: dict[str, Any], validations: dict, declined: list[dict[str, str]]) -> list[str]:
    verdicts = Counter(v.verdict for v in validations.values())
    reasons = Counter(v.reason for v in validations.values() if v.verdict == "EXCLUDE")
    repaired = Counter(
        name for v in validations.values() for record in v.rounds[:1]
        for name in record.get("preflight_repairs", [])
    )  # fmt: skip
    lines = [
        "", "## Pattern panel agreement", "",
        f"Fleiss' kappa across the {kappa.get('judges', 0)} judges over "
        f"{kappa.get('tasks', 0)} base tasks: primary pattern {_num(kappa.get('primary'))} "
        f"(observed agreement {_num(kappa.get('primary_observed'))}); viability per pattern: "
        + ", ".join(f"{p} {_num(k)}" for p, k in kappa.get("viability", {}).items()) + ".",
        "", "## Validation", "",
        ", ".join(f"{k}: {n}" for k, n in sorted(verdicts.items())) or "nothing validated",
        "",
    ]  # fmt: skip
    lines += [f"- repaired before the panels, {name}: {n}" for name, n in repaired.items()]
    lines += [f"- excluded, {why}: {n}" for why, n in reasons.most_common()]
    by_reason = Counter(f"{d['pattern']}: {d['reason']}" for d in declined)
    lines += ["", "## Declined adaptations", ""]
    lines += [f"- {why} ({n})" for why, n in by_reason.most_common()]
    return lines


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    return "undefined" if value != value else f"{value:.3f}"
