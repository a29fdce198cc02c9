"""The import report: every imported τ² task's automatic checks, and why any fail.

:func:`check_imported` runs the automatic checks (:mod:`hasbench.build.checks`) on each
imported task (in worker processes) and explains a failure when the source task itself makes the
check unpassable:

- ``unchanged_end_state``: the gold path leaves the state as it was (a request the
  policy refuses, a hand-over to a human agent, a write that fails in τ² too). Doing
  nothing then ends in the gold state, so the idle agent earns that share, and an agent
  on its own matches it without anything from the customer.
- ``assertion_holds_at_start``: one of τ²'s state assertions already holds before the
  episode, so doing nothing earns its share.

- ``gold_value_unknowable``: the gold path uses a value no agent can know (found at
  import, listed under ``unreachable``), so even the oracle cannot reach the gold state.

A failure of the oracle is explained only by the last. :func:`write_import_report`
writes one CSV row per task and a Markdown summary with, per domain, how many tasks the
oracle solves and the pass rate of all checks, over all tasks and over the tasks no
exception covers.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hasbench.build.checks import CHECKS, TaskCheck, check_many, passes
from hasbench.envs import make_environment
from hasbench.evaluate import replay_gold
from hasbench.scenario import Scenario

EXCEPTIONS = {
    "unchanged_end_state": (
        "the gold path leaves the state unchanged (the policy refuses the request, the "
        "customer is handed to a human agent, or the write fails in τ² too): doing "
        "nothing ends in the gold state, and nothing is needed from the customer to match it"
    ),
    "assertion_holds_at_start": (
        "a τ² state assertion already holds before the episode, so doing nothing earns "
        "its share of the score"
    ),
    "gold_value_unknowable": (
        "τ²'s gold path uses a value that neither the customer's instructions state nor "
        "any record or tool shows (listed per task under `unreachable`): no agent can "
        "know it, so even the oracle cannot reproduce the gold state"
    ),
}
"""Why a source task makes a check unpassable: the idle and A1 checks, and the oracle's
only where a gold value is out of everyone's reach."""
EXCUSABLE = {"idle", "oracle_fails_A1"}


@dataclass
class ImportRow:
    """One imported task in the report."""

    domain: str
    task_id: str
    source_task_id: str
    passed: bool
    oracle_solved: bool
    """The oracle solves the task under A3 (Task Score 1.0; where a dimension waits for a
    judge, 1.0 on every other)."""
    failed: str
    """``check: reason`` of each failed check, joined by `` | ``."""
    exception: str = ""
    """A key of :data:`EXCEPTIONS` when the source task explains every failure."""
    lookups_added: int = 0
    facts_added: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)


def explain(scenario: Scenario, check: TaskCheck) -> str:
    """The exception that explains all of a task's failed checks, or ``""``."""
    failed = {name for name, value in check.results.items() if not passes(value)}
    if "oracle_A3" in failed and scenario.metadata.get("unreachable"):
        return "gold_value_unknowable"
    if not failed or not failed <= EXCUSABLE:
        return ""
    initial = make_environment(scenario)
    gold, _ = replay_gold(scenario)
    if gold.state_hash() == initial.state_hash():
        return "unchanged_end_state"
    if failed == {"idle"} and any(
        initial.run_assertion(a.func_name, a.arguments) == a.assert_value
        for a in scenario.evaluation_criteria.env_assertions
    ):
        return "assertion_holds_at_start"
    return ""


def _row(scenario: Scenario, check: TaskCheck) -> ImportRow:
    added = scenario.metadata.get("added_on_import", {})
    return ImportRow(
        domain=scenario.domain,
        task_id=scenario.task_id,
        source_task_id=scenario.source_task_id or "",
        passed=check.passed,
        oracle_solved=passes(check.results.get("oracle_A3", "")),
        failed=" | ".join(
            f"{name}: {value}" for name, value in check.results.items() if not passes(value)
        ),
        exception=explain(scenario, check),
        lookups_added=len(added.get("lookups", [])),
        facts_added=list(added.get("facts", [])),
        unreachable=list(scenario.metadata.get("unreachable", [])),
    )


def check_imported(scenarios: Iterable[Scenario], workers: int = 2) -> list[ImportRow]:
    """Check every task (in ``workers`` processes; 1 runs in this process), in order."""
    scenarios = list(scenarios)
    return [_row(s, c) for s, c in zip(scenarios, check_many(scenarios, workers), strict=True)]


def pass_rates(rows: list[ImportRow]) -> dict[str, dict[str, float | int]]:
    """Per domain: tasks, oracle solves, passed, excepted, pass rates over all and the rest."""
    rates: dict[str, dict[str, float | int]] = {}
    for domain in dict.fromkeys(r.domain for r in rows):
        mine = [r for r in rows if r.domain == domain]
        passed = sum(r.passed for r in mine)
        excepted = sum(bool(r.exception) for r in mine)
        solved = sum(r.oracle_solved for r in mine)
        rates[domain] = {
            "tasks": len(mine),
            "oracle_solved": solved,
            "oracle_rate": solved / len(mine) if mine else 0.0,
            "passed": passed,
            "excepted": excepted,
            "unexplained": len(mine) - passed - excepted,
            "pass_rate": passed / len(mine) if mine else 0.0,
            "pass_rate_without_exceptions": passed / (len(mine) - excepted)
            if len(mine) > excepted
            else 0.0,
        }
    return rates


def write_import_report(rows: list[ImportRow], out_dir: str | Path, name: str) -> list[Path]:
    """Write ``<name>.csv`` (one row per task) and ``<name>.md``; returns both paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{name}.csv", out / f"{name}.md"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(ImportRow.__dataclass_fields__))
        writer.writeheader()
        for row in rows:
            data = asdict(row)
            for key in ("facts_added", "unreachable"):
                data[key] = "; ".join(data[key])
            writer.writerow(data)
    lines = [
        "# Import report: automatic checks of the imported τ² tasks",
        "",
        f"Checks: {', '.join(CHECKS)} (see `hasbench.build.checks`).",
        "",
        "| domain | tasks | oracle solves | passed | pass rate | reasoned exceptions "
        "| unexplained | pass rate without exceptions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for domain, r in pass_rates(rows).items():
        lines.append(
            f"| {domain} | {r['tasks']} | {r['oracle_solved']} ({r['oracle_rate']:.1%}) "
            f"| {r['passed']} | {r['pass_rate']:.1%} | "
            f"{r['excepted']} | {r['unexplained']} | {r['pass_rate_without_exceptions']:.1%} |"
        )
    counts = Counter(r.exception for r in rows if r.exception)
    lines += ["", "## Reasoned exceptions", ""]
    for key, text in EXCEPTIONS.items():
        lines.append(f"- `{key}` ({counts.get(key, 0)} tasks): {text}.")
    lines += ["", "## Tasks that fail a check", "", "| task | source | exception | failed checks |"]
    lines.append("|---|---|---|---|")
    for row in rows:
        if not row.passed:
            source, failed = (text.replace("|", "\\|") for text in (row.source_task_id, row.failed))
            lines.append(f"| {row.task_id} | {source} | {row.exception or '—'} | {failed} |")
    added = sum(r.lookups_added for r in rows)
    given = sum(len(r.facts_added) for r in rows)
    lines += [
        "",
        f"Added on import: {added} lookups and {given} customer facts "
        "(per task in the CSV and in each task's `metadata.added_on_import`).",
        "",
    ]
    md_path.write_text("\n".join(lines), encoding="utf-8")
    return [csv_path, md_path]
