"""One runner for the figure notebooks that run episodes: RQ modules declare, it runs.

An RQ module says its grid and its tables; :class:`Study` does the rest. What differs
between the research questions is declared in a :class:`Study`: its settings (one list,
or one per domain when every domain needs its own, as RQ4's personas do),
whether the process is judged, which offline stand-ins and domains it defaults to, whether
it compares user simulators (a :class:`SimulatorStudy`), and the function that turns its
results into tables and figures. What is the same is here, once:

1. the parameters, declared once with their defaults as :meth:`Study.plan`'s and
   :meth:`Study.run`'s (an RQ module's ``plan`` and ``run`` are its study's bound methods):
   offline stand-ins where no model is given, ``local/`` models left out with a note when
   their extra is missing, requested domains without tasks replaced with a note;
2. :meth:`Study.plan`: each grid's episodes and a measured estimate of the time they take
   (:func:`hasbench.runner.planning.estimate`);
3. :meth:`Study.run`: each grid run (or resumed) into its results store, and the results
   of *exactly* those grids loaded (a store can hold other experiments: they never count);
   the run's time printed beside the plan's estimate; the tables (CSV, Markdown, LaTeX,
   each with its notes), the figures and ``manifest.json`` written.

The manifest lists exactly what the tables rest on: the parameters, the experiments (key,
name, benchmark, results store, grid size), the backends, and the key of every episode.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from hasbench import __version__
from hasbench.agency import Setting
from hasbench.benchmark import GENERATED, Benchmark, BenchmarkError, identify
from hasbench.experiments.common import (
    N_RESAMPLES,
    PAPER_DOMAINS,
    available_models,
    domain_files,
    execute,
    make_client,
    output_dir_for,
    resolve_domains,
    run_notes,
    write_table,
)
from hasbench.experiments.defaults import (
    OFFLINE_JUDGE,
    OFFLINE_USER,
    OFFLINE_USER_SIMULATORS,
    agents_or_default,
)
from hasbench.paths import RUNS_DIR, TASKS_DIR
from hasbench.registry import domain_names
from hasbench.runner import Experiment, TaskSelection
from hasbench.runner.experiment import code_fingerprint
from hasbench.runner.notebooks import MANIFEST
from hasbench.runner.progress import announce, duration
from hasbench.runner.reuse import neighbour_stores
from hasbench.runner.store import find_experiment
from hasbench.simulator import Backends

if TYPE_CHECKING:
    from hasbench.llm import LLMClient
    from hasbench.runner import RunSummary
    from hasbench.runner.planning import Plan


@dataclass(frozen=True)
class Parameters:
    """What a study is asked for (a notebook's parameters).

    Attributes:
        agent_models: agent backends; None: the study's offline stand-ins.
        user_models: user simulators (one, unless the study compares them); None: the
            offline simulators of a study that compares them.
        judge_model: the judge.
        domains: the domains asked for.
        max_tasks_per_domain: at most this many tasks per domain (None: every task).
        seed: the episodes' seed (and the bootstrap's).
        benchmark: the folder of a built HAS-Bench (``hasbench build has-bench`` writes
            one) whose task files the domains' tasks come from; None: the project's
            generated tasks (``data/tasks``).
    """

    agent_models: Sequence[str] | None
    user_models: Sequence[str] | None
    judge_model: str
    domains: Sequence[str]
    max_tasks_per_domain: int | None
    seed: int
    benchmark: str | Path | None = None


@dataclass(frozen=True)
class Table:
    """A table of a study: its numbers, its cells for reading, and what they mean.

    Attributes:
        numeric: the numbers (written as CSV).
        shown: the formatted cells (written as Markdown and LaTeX).
        text_columns: how many leading columns are text (left-aligned in LaTeX).
        notes: what this table's reader must know (undefined cells and why, what a range
            is); the study's notes (stand-ins, errors) come first.
    """

    numeric: pd.DataFrame
    shown: pd.DataFrame
    text_columns: int = 1
    notes: tuple[str, ...] = ()


@dataclass
class Analysis:
    """What a study's tables and figures are made from.

    Attributes:
        results: the episodes of the study's grids, and no other (one row each).
        parameters: the parameters as chosen (stand-ins and domains filled in).
        grids: the experiments run.
        stores: the results store of each grid.
        client: the model client (judges of the analysis use it too).
        output_dir: where tables and figures go.
        notes: what every table's reader must know; the analysis may add to them.
        benchmark: the benchmark the tasks come from.
    """

    results: pd.DataFrame
    parameters: Parameters
    grids: list[Experiment]
    stores: list[Path]
    client: LLMClient
    output_dir: Path
    notes: list[str]
    benchmark: Benchmark


@dataclass
class Outputs:
    """What a study's analysis made.

    Attributes:
        tables: name -> table.
        figure: the main figure's PNG.
        files: every other file written (figures as PNG and PDF, plotted numbers, evidence).
        headline: a few numbers that sum the study up (a sweep's summary lists them).
    """

    tables: dict[str, Table]
    figure: Path
    files: list[Path] = field(default_factory=list)
    headline: dict[str, Any] = field(default_factory=dict)


class Plans(list):
    """The plans of a study's grids, shown one after the other."""

    def _repr_markdown_(self) -> str:
        return "\n\n".join(plan._repr_markdown_() for plan in self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("\n".join(f"Plan. {plan}" for plan in self))


@dataclass
class Study:
    """A research question's experiment: its grid and its tables.

    Attributes:
        name: its name: the grid's name, and its folder under the figures and the runs.
        title: how notes name it ("RQ1").
        settings: the grid's settings, or a function of the domain giving each domain its
            own grid (named ``<name>_<domain>``) in its own results store (``<dir>/<domain>``).
        judge_process: whether CQS/FUR/CRJ events are judged.
        analyse: makes the tables and figures from an :class:`Analysis`.
        sweep: its default agent is the single sweep stand-in (else every stand-in).
        grid_notes: what the reader must know about the grids (before the notes on the run).
        domains: the domains run when none are asked for.
        compares_simulators: it crosses agents with user simulators (its parameter is
            ``user_models``, defaulting to the offline simulators): a :class:`SimulatorStudy`.
    """

    name: str
    title: str
    settings: Sequence[Setting] | Callable[[str], Sequence[Setting]]
    judge_process: bool
    analyse: Callable[[Analysis], Outputs]
    sweep: bool = False
    grid_notes: Callable[[list[Experiment]], list[str]] | None = None
    domains: Sequence[str] = PAPER_DOMAINS
    compares_simulators: ClassVar[bool] = False
    _plans: dict[str, Plan] = field(default_factory=dict, init=False, repr=False)

    # -- the grid ------------------------------------------------------------------

    def experiment(
        self,
        agent_models: Sequence[str],
        user_model: str = OFFLINE_USER,
        judge_model: str = OFFLINE_JUDGE,
        domains: Sequence[str] | None = None,
        max_tasks_per_domain: int | None = None,
        seed: int = 0,
    ) -> Experiment:
        """The study's grid of the generated tasks, as :meth:`run` runs it with these arguments.

        ``domains`` None: the study's :attr:`domains`; a study with settings per domain
        takes one domain.
        """
        domains = self.domains if domains is None else domains
        return self.grid(agent_models, [user_model], judge_model, domains, max_tasks_per_domain,
                         seed)  # fmt: skip

    def grid(
        self,
        agent_models: Sequence[str],
        user_models: Sequence[str],
        judge_model: str,
        domains: Sequence[str],
        max_tasks_per_domain: int | None = None,
        seed: int = 0,
        benchmark: Benchmark | None = None,
    ) -> Experiment:
        """The grid over ``domains``: their tasks × agents × user simulators × settings.

        For a study with settings per domain, ``domains`` is one domain. The tasks are the
        benchmark's (None: the registered domains' task files, the generated benchmark).
        """
        if callable(self.settings):
            (domain,) = domains
            settings, name = list(self.settings(domain)), f"{self.name}_{domain}"
        else:
            settings, name = list(self.settings), self.name
        return Experiment(
            name=name,
            tasks=TaskSelection(
                files=domain_files(domains, benchmark),
                benchmark=GENERATED if benchmark is None else benchmark.name,
                max_per_domain=max_tasks_per_domain,
            ),
            backends=[
                Backends(agent=agent, user=user, judge=judge_model)
                for agent in agent_models
                for user in user_models
            ],
            settings=settings,
            seeds=[seed],
            judge_process=self.judge_process,
        )

    def choose(self, asked: Parameters) -> tuple[Parameters, list[str]]:
        """The parameters with stand-ins and domains filled in, and a note for each change.

        Raises:
            ParameterError: a parameter of the wrong kind (one line naming the notebook, the
                parameter and the value).
        """
        benchmark = self.check(asked)
        agents = agents_or_default(asked.agent_models, self.sweep)
        notes: list[str] = []
        users = asked.user_models
        if users is None:
            users = OFFLINE_USER_SIMULATORS
        if self.compares_simulators:
            users, notes = available_models(users, self.title)
        domains, domain_notes = resolve_domains(asked.domains, self.title, benchmark)
        chosen = Parameters(list(agents), list(users), asked.judge_model, domains,
                            asked.max_tasks_per_domain, asked.seed,
                            None if benchmark is None else str(benchmark.folder))  # fmt: skip
        return chosen, [*notes, *domain_notes]

    def check(self, asked: Parameters) -> Benchmark | None:
        """Refuse a parameter of the wrong kind before anything runs.

        Returns the benchmark ``asked.benchmark`` names (None: the generated tasks).

        Raises:
            ParameterError: naming the notebook, the parameter and the value.
        """
        users = "user_models" if self.compares_simulators else "user_model"
        given = asked.user_models
        if not self.compares_simulators and given is not None:
            given = given[0] if len(given) == 1 else given
        checks = {
            "agent_models": (asked.agent_models, _models_or_none, "a list of model strings, "
                             "or None for the offline stand-ins"),
            users: (given, _models_or_none if self.compares_simulators else _text,
                    "a list of model strings, or None" if self.compares_simulators
                    else "a model string"),
            "judge_model": (asked.judge_model, _text, "a model string"),
            "domains": (asked.domains, _names, "a list of domain names, e.g. [retail, airline]"),
            "max_tasks_per_domain": (asked.max_tasks_per_domain, _count_or_none,
                                     "a whole number of at least 1, or None for every task"),
            "seed": (asked.seed, _seed, "a whole number of at least 0"),
        }  # fmt: skip
        for name, (value, fits, expected) in checks.items():
            if not fits(value):
                raise ParameterError(f"{self.name}: parameter {name} = {value!r}: expected "
                                     f"{expected}")  # fmt: skip
        known = domain_names()
        if not any(domain in known for domain in asked.domains):  # a typo: nothing to run
            raise ParameterError(f"{self.name}: parameter domains = {list(asked.domains)!r}: no "
                                 f"such domain (the domains: {', '.join(known)})")  # fmt: skip
        return self._benchmark(asked.benchmark)

    def _benchmark(self, folder: Any) -> Benchmark | None:
        """The built benchmark in ``folder`` (None for None), or a one-line ParameterError."""
        if folder is None:
            return None
        where = f"{self.name}: parameter benchmark = {folder!r}"
        if not isinstance(folder, str | Path) or not str(folder).strip():
            raise ParameterError(f"{where}: expected the folder of a built HAS-Bench "
                                 "(hasbench build has-bench writes one), or None for the "
                                 "generated tasks")  # fmt: skip
        try:
            benchmark = identify(folder)
        except BenchmarkError as exc:
            raise ParameterError(f"{where}: {exc}") from None
        if benchmark.kind == "other":
            raise ParameterError(f"{where}: {benchmark.folder} is not a built benchmark "
                                 "(no benchmark.json; hasbench build has-bench writes "
                                 "one)")  # fmt: skip
        return benchmark

    def grids(
        self, chosen: Parameters, results_dir: str | Path | None
    ) -> list[tuple[Experiment, Path]]:
        """Each grid of the chosen parameters with its results store."""
        root = Path(results_dir) if results_dir is not None else RUNS_DIR / self.name
        p = chosen
        bench = None if p.benchmark is None else identify(p.benchmark)
        if callable(self.settings):
            return [
                (self.grid(p.agent_models, p.user_models, p.judge_model, [domain],
                           p.max_tasks_per_domain, p.seed, bench), root / domain)
                for domain in p.domains
            ]  # fmt: skip
        grid = self.grid(p.agent_models, p.user_models, p.judge_model, p.domains,
                         p.max_tasks_per_domain, p.seed, bench)  # fmt: skip
        return [(grid, root)]

    # -- the notebook's parameters -----------------------------------------------------

    def plan(
        self,
        agent_models: Sequence[str] | None = None,
        user_model: str = OFFLINE_USER,
        judge_model: str = OFFLINE_JUDGE,
        domains: Sequence[str] | None = None,
        max_tasks_per_domain: int | None = None,
        seed: int = 0,
        results_dir: str | Path | None = None,
        benchmark: str | Path | None = None,
    ) -> Plans:
        """How much work :meth:`run` with these arguments is, before it runs.

        Takes :meth:`run`'s arguments but ``output_dir`` and ``progress``. Counts each
        grid's episodes (one grid per domain for a study with settings per domain) and
        those already stored, and times a few pending episodes per backend, domain and
        agency level (stored, so :meth:`run` skips them) to estimate how long the rest
        takes. The run prints its time beside this estimate.
        """
        asked = self.parameters(agent_models, [user_model], judge_model, domains,
                                max_tasks_per_domain, seed, benchmark)  # fmt: skip
        return self.plan_parameters(asked, results_dir)

    def run(
        self,
        agent_models: Sequence[str] | None = None,
        user_model: str = OFFLINE_USER,
        judge_model: str = OFFLINE_JUDGE,
        domains: Sequence[str] | None = None,
        max_tasks_per_domain: int | None = None,
        seed: int = 0,
        output_dir: str | Path | None = None,
        results_dir: str | Path | None = None,
        progress: bool = True,
        benchmark: str | Path | None = None,
    ) -> dict[str, Any]:
        """Run (or resume) the study's grids; write its tables, figures and manifest.

        Args:
            agent_models: agent backends (litellm model strings); None: the offline
                stand-ins (:mod:`hasbench.experiments.defaults`; the sweep agent for a sweep).
            user_model: the user simulator.
            judge_model: the judge.
            domains: the domains whose tasks run; None: the study's :attr:`domains`.
            max_tasks_per_domain: at most this many tasks per domain (None: every task).
            seed: the episodes' seed (and the bootstrap's).
            output_dir: where tables, figures and ``manifest.json`` go; None:
                ``FIGURES_DIR/<name>``.
            results_dir: the results store; None: ``RUNS_DIR/<name>`` (one store per domain
                under it for a study with settings per domain).
            progress: show the run's progress as it goes.
            benchmark: the folder of a built HAS-Bench whose tasks to run (None: the
                generated tasks in ``data/tasks``); the tables and the manifest name it.

        Returns:
            ``results`` (the tidy table of exactly the grids' episodes), ``tables`` (numeric,
            by name), ``figure`` (the main PNG), ``summaries`` (one
            :class:`~hasbench.runner.RunSummary` per grid; ``summary`` too for a one-grid
            study) and ``notes``.
        """
        asked = self.parameters(agent_models, [user_model], judge_model, domains,
                                max_tasks_per_domain, seed, benchmark)  # fmt: skip
        return self.run_parameters(asked, output_dir, results_dir, progress)

    def parameters(
        self,
        agent_models: Sequence[str] | None,
        user_models: Sequence[str] | None,
        judge_model: str,
        domains: Sequence[str] | None,
        max_tasks_per_domain: int | None,
        seed: int,
        benchmark: str | Path | None,
    ) -> Parameters:
        """The parameters as asked, the study's domains where none are asked for."""
        domains = self.domains if domains is None else domains
        return Parameters(agent_models, user_models, judge_model, domains,
                          max_tasks_per_domain, seed, benchmark)  # fmt: skip

    # -- planning and running ----------------------------------------------------------

    def plan_parameters(self, asked: Parameters, results_dir: str | Path | None = None) -> Plans:
        """:meth:`plan` with the parameters gathered."""
        from hasbench.runner.planning import estimate
        from hasbench.sync import run_sync

        chosen, _ = self.choose(asked)
        plans = Plans()
        grids = self.grids(chosen, results_dir)
        others = neighbour_stores(runs_root(results_dir))
        for grid, store in grids:
            plan = run_sync(estimate(grid, store, make_client(grid), others))
            self._plans[plan.key] = plan
            plans.append(plan)
        return plans

    def run_parameters(
        self,
        asked: Parameters,
        output_dir: str | Path | None = None,
        results_dir: str | Path | None = None,
        progress: bool = True,
    ) -> dict[str, Any]:
        """:meth:`run` with the parameters gathered."""
        chosen, notes = self.choose(asked)
        grids = self.grids(chosen, results_dir)
        client = make_client(grids[0][0])
        others = neighbour_stores(runs_root(results_dir))
        summaries, frames = [], []
        expected = {key: seconds for plan in self._plans.values()
                    for key, seconds in plan.expected_seconds().items()}  # fmt: skip
        for grid, store in grids:
            summary, frame = execute(grid, store, client, progress, others, expected)
            plan = self._plans.pop(summary.experiment, None)
            if plan is not None and Path(plan.directory) == Path(summary.directory):
                summary.estimate = plan.seconds
            summaries.append(summary)
            frames.append(frame)
        results = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        out = output_dir_for(self.name, output_dir)
        experiments = [grid for grid, _ in grids]
        benchmark = identify(chosen.benchmark or TASKS_DIR)
        notes = [benchmark_note(benchmark), *notes]
        notes += self.grid_notes(experiments) if self.grid_notes is not None else []
        analysis = Analysis(results, chosen, experiments, [s.directory for s in summaries],
                            client, out, [*notes, *run_notes(results)], benchmark)  # fmt: skip
        made = self.analyse(analysis)
        files = [*write_tables(out, made.tables, analysis.notes), made.figure, *made.files]
        write_manifest(out, self, asked, chosen, analysis, summaries, made, files)
        announce(timing(self.name, summaries))
        answer: dict[str, Any] = {
            "results": results,
            "tables": {name: table.numeric for name, table in made.tables.items()},
            "figure": made.figure,
            "summaries": summaries,
            "notes": analysis.notes,
        }
        if len(summaries) == 1:
            answer["summary"] = summaries[0]
        return answer


class SimulatorStudy(Study):
    """A study that crosses agents with user simulators, on a task subset.

    Its ``plan`` and ``run`` take ``user_models`` (None: the offline simulators, ``local/``
    ones left out with a note when their extra is missing) where a :class:`Study` takes one
    ``user_model``, and run two tasks per domain unless asked otherwise.
    """

    compares_simulators: ClassVar[bool] = True

    def experiment(
        self,
        agent_models: Sequence[str],
        user_models: Sequence[str],
        judge_model: str = OFFLINE_JUDGE,
        domains: Sequence[str] | None = None,
        max_tasks_per_domain: int | None = None,
        seed: int = 0,
    ) -> Experiment:
        """The study's grid of the generated tasks: agents × the given user simulators."""
        domains = self.domains if domains is None else domains
        return self.grid(agent_models, user_models, judge_model, domains, max_tasks_per_domain,
                         seed)  # fmt: skip

    def plan(
        self,
        agent_models: Sequence[str] | None = None,
        user_models: Sequence[str] | None = None,
        judge_model: str = OFFLINE_JUDGE,
        domains: Sequence[str] | None = None,
        max_tasks_per_domain: int | None = 2,
        seed: int = 0,
        results_dir: str | Path | None = None,
        benchmark: str | Path | None = None,
    ) -> Plans:
        """How much work :meth:`run` with these arguments is, before it runs.

        As :meth:`Study.plan`, timing a few pending episodes per agent and user simulator.
        """
        asked = self.parameters(agent_models, user_models, judge_model, domains,
                                max_tasks_per_domain, seed, benchmark)  # fmt: skip
        return self.plan_parameters(asked, results_dir)

    def run(
        self,
        agent_models: Sequence[str] | None = None,
        user_models: Sequence[str] | None = None,
        judge_model: str = OFFLINE_JUDGE,
        domains: Sequence[str] | None = None,
        max_tasks_per_domain: int | None = 2,
        seed: int = 0,
        output_dir: str | Path | None = None,
        results_dir: str | Path | None = None,
        progress: bool = True,
        benchmark: str | Path | None = None,
    ) -> dict[str, Any]:
        """Run (or resume) the study on a task subset; write its tables, figures and manifest.

        As :meth:`Study.run`, with ``user_models`` (None: the offline user simulators of
        :mod:`hasbench.experiments.defaults`) for ``user_model`` and at most
        ``max_tasks_per_domain`` = 2 tasks per domain by default.
        """
        asked = self.parameters(agent_models, user_models, judge_model, domains,
                                max_tasks_per_domain, seed, benchmark)  # fmt: skip
        return self.run_parameters(asked, output_dir, results_dir, progress)


def runs_root(results_dir: str | Path | None) -> Path:
    """The folder holding a study's results store beside those of the other studies.

    Episodes a store there already holds are copied, not run again
    (:mod:`hasbench.runner.reuse`): the figure notebooks share many.
    """
    return Path(results_dir).parent if results_dir is not None else RUNS_DIR


class ParameterError(ValueError):
    """A study parameter of the wrong kind; the message names notebook, parameter, value."""


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _names(value: Any) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(map(_text, value))


def _models_or_none(value: Any) -> bool:
    return value is None or _names(value)


def _count_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)


def _seed(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def benchmark_note(benchmark: Benchmark) -> str:
    """What every table says first: the benchmark its tasks come from."""
    note = f"Tasks: {benchmark.label}, read from {benchmark.folder}."
    if benchmark.modified:
        note += (f" Its task files {', '.join(benchmark.modified)} were edited after the "
                 "build (their SHA-256 differs from benchmark.json).")  # fmt: skip
    return note


def timing(name: str, summaries: Sequence[RunSummary]) -> str:
    """One line: how long the grids' episodes took, beside the plan's estimate."""
    seconds = sum(s.seconds or 0.0 for s in summaries)
    ran = sum(s.ran for s in summaries)
    text = f"{name}: ran {ran} episodes in {duration(seconds)}"
    estimates = [s.estimate for s in summaries]
    if all(e is not None for e in estimates):
        text += f" (the plan estimated {duration(sum(estimates))})"
    if reused := sum(s.reused for s in summaries):
        text += f"; {reused} more were copied from other results stores"
    return text + "."


def write_tables(output_dir: Path, tables: dict[str, Table], notes: Sequence[str]) -> list[Path]:
    """Write every table (CSV, Markdown, LaTeX), each with the common notes then its own."""
    files: list[Path] = []
    for name, table in tables.items():
        files += write_table(output_dir, name, table.numeric, table.shown,
                             [*notes, *table.notes], table.text_columns)  # fmt: skip
    return files


def headline(results: pd.DataFrame) -> dict[str, Any]:
    """The numbers every study's manifest sums up with: episodes, errors, Pass@1, Task Score."""
    ok = results[results["error"].isna()]
    return {
        "episodes": int(len(results)),
        "errors": int(results["error"].notna().sum()),
        "pass1": float(ok["success"].astype(float).mean() * 100) if len(ok) else float("nan"),
        "task_score": float(pd.to_numeric(ok["task_score"]).mean() * 100)
        if len(ok)
        else float("nan"),
    }


def write_manifest(
    output_dir: Path,
    study: Study,
    asked: Parameters,
    chosen: Parameters,
    analysis: Analysis,
    summaries: Sequence[RunSummary],
    made: Outputs,
    files: Sequence[Path],
) -> Path:
    """Write ``manifest.json``: exactly what the tables of this output directory rest on.

    The parameters as asked and as run, each experiment (key, name, benchmark, results
    store, grid size), the backends and the key of every episode behind the tables, the
    package, code and library versions, the run's counts and model calls, the notes, the
    headline numbers and the files. Model calls and cache hits are the client's over the
    whole run (episodes and any judge calls of the analysis); episodes a notebook's plan
    cell timed before the run were stored then, and ``episodes_run`` leaves them out.
    """
    import matplotlib
    import scipy

    results = analysis.results
    users = "user_models" if study.compares_simulators else "user_model"
    parameters = {
        "agent_models": chosen.agent_models,
        users: list(asked.user_models or OFFLINE_USER_SIMULATORS)
        if study.compares_simulators
        else chosen.user_models[0],
        **({"user_models_run": chosen.user_models} if study.compares_simulators else {}),
        "judge_model": chosen.judge_model,
        "domains": list(asked.domains),
        "domains_run": chosen.domains,
        "max_tasks_per_domain": chosen.max_tasks_per_domain,
        "seed": chosen.seed,
        "benchmark": None if asked.benchmark is None else str(asked.benchmark),
    }
    bench = analysis.benchmark

    def used(column: str) -> list[str]:
        return sorted(str(v) for v in results[column].dropna().unique())

    experiments = []
    for summary in summaries:
        stored = find_experiment(summary.directory, summary.experiment)
        experiments.append({
            "key": stored.key, "name": stored.name, "benchmark": stored.definition["benchmark"],
            "results": str(summary.directory), "grid_episodes": len(stored.episodes),
        })  # fmt: skip
    manifest = {
        "experiment": study.name,
        "parameters": parameters,
        "benchmark": {
            "name": bench.name,
            "kind": bench.kind,
            "label": bench.label,
            "folder": str(bench.folder),
            "sources": bench.versions(),
            "task_files": bench.task_hashes,
            "modified": bench.modified,
        },  # fmt: skip
        "experiments": experiments,
        "backends": {role: used(f"{role}_model") for role in ("agent", "user", "judge")},
        "package_version": __version__,
        "code": code_fingerprint(),
        "library_versions": {
            "numpy": np.__version__,
            "pandas": pd.__version__,
            "scipy": scipy.__version__,
            "matplotlib": matplotlib.__version__,
        },
        "results": [str(s.directory) for s in summaries],
        "episodes": len(results),
        "errors": int(results["error"].notna().sum()),
        "episode_keys": sorted(results["key"]),
        "episodes_run": sum(s.ran for s in summaries),
        "run_seconds": round(sum(s.seconds or 0.0 for s in summaries), 3),
        "estimated_seconds": None
        if any(s.estimate is None for s in summaries)
        else round(sum(s.estimate for s in summaries), 3),
        "model_calls": analysis.client.stats.calls,
        "cache_hits": analysis.client.stats.cache_hits,
        "bootstrap": {"n_resamples": N_RESAMPLES, "confidence": 0.95, "method": "percentile"},
        "headline": {**headline(results), **made.headline},
        "notes": list(analysis.notes),
        "files": sorted({p.name for p in files}),
    }
    path = output_dir / MANIFEST
    path.write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
    return path
