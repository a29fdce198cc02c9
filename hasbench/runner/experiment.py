"""The experiment schema: tasks × backends × settings × seeds, and the keys of the grid.

An episode's ``key`` is a hash of everything that determines it: the scenario's content
hash, the setting, the backends (with each role's endpoint server and extra parameters,
never its key), the seed, whether its process is judged, the package version, a hash of
the package's code and the prompt hashes.

An experiment's key (:func:`resolve`) is a hash of its name, its benchmark (the name of the
task set and the content hash of each task file) and the keys of its episodes: two grids
that differ in a task, a backend, a setting, a seed or the code have different keys, and
the tables of an experiment are computed from exactly its episodes.

Every field is validated; :func:`load_experiment` names the file and the field of each
problem (``exp.yaml: seeds.0: Input should be greater than or equal to 0``), and resolves
every backend string of every entry before anything runs (``exp.yaml: backends.1.agent:
unknown scripted agent 'scripted:oracel'; did you mean 'scripted:oracle'?``).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

import hasbench
from hasbench import __version__
from hasbench.agency import Setting
from hasbench.benchmark import GENERATED
from hasbench.memo import unchanged
from hasbench.paths import REPO_ROOT, RUNS_DIR, read_yaml
from hasbench.prompts import prompt_hashes
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends
from hasbench.vocab import content_hash, text_hash

RECORD_FORMAT = 2
"""The version of the episode identity and record layout (2: ``judge_process`` is part of
an episode's identity, records hold their trace's size)."""
DEFAULT_BENCHMARK = GENERATED
"""The benchmark of the project's generated task files (``data/tasks``)."""


class ExperimentError(ValueError):
    """An experiment file that cannot be used; the message names file and field."""


class TaskSelection(BaseModel):
    """Which tasks an experiment runs: files, then filters in this order."""

    model_config = ConfigDict(extra="forbid")

    files: list[str] = Field(min_length=1)
    """Task YAML files, relative to the repository root unless absolute."""
    benchmark: str = Field(default=DEFAULT_BENCHMARK, pattern=r"^[A-Za-z0-9_.-]+$")
    """The name of the task set the files belong to; with the files' content hashes it is
    the benchmark every table and manifest of the experiment names."""
    domains: list[str] | None = None
    patterns: list[str] | None = None
    ids: list[str] | None = None
    max_per_domain: int | None = Field(default=None, ge=1)
    """Keep N tasks per domain after the other filters, round-robin over patterns."""


class RunBudget(BaseModel):
    """A limit on one run's model calls and spending (cache hits are free).

    When it is spent, no further episode starts and episodes cut short are not recorded;
    the next run goes on from there.
    """

    model_config = ConfigDict(extra="forbid")

    max_calls: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)
    """Dollars, as litellm prices the calls (calls of unknown price count 0)."""


class Experiment(BaseModel):
    """A grid of tasks × backends × settings × seeds."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    tasks: TaskSelection
    backends: list[Backends] = Field(default_factory=lambda: [Backends()], min_length=1)
    """Who plays each role, and per role where its model is served (``endpoints``)."""
    settings: list[Setting] = Field(default_factory=lambda: [Setting()], min_length=1)
    seeds: list[Annotated[int, Field(ge=0)]] = Field(default_factory=lambda: [0], min_length=1)
    concurrency: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    """Per provider (e.g. ``{openai: 4, scripted: 8}``): episodes in flight whose agent uses
    it, and model calls in flight to it (default 8 episodes; see ``hasbench.llm``). Each key
    must be the provider of one of the experiment's backends."""
    judge_process: bool = True
    """Whether to judge CQS/FUR/CRJ events (each judged event is one judge call)."""
    budget: RunBudget | None = None
    _source: Path | None = PrivateAttr(default=None)
    """The file it was read from (named in the errors of its task selection)."""

    @field_validator("concurrency")
    @classmethod
    def _known_providers(cls, value: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        if not value or "backends" not in info.data:
            return value
        used = {provider(model) for b in info.data["backends"] for model in b.models().values()}
        unknown = sorted(set(value) - used)
        if unknown:
            raise ValueError(
                f"no backend of this experiment uses provider(s) {unknown} "
                f"(they use: {', '.join(sorted(used))})"
            )
        return value

    def default_dir(self) -> Path:
        """``RUNS_DIR/<name>``."""
        return RUNS_DIR / self.name

    def check_backends(self) -> None:
        """Resolve every backend string of every entry; nothing is built or called.

        Raises:
            ExperimentError: one line per string that cannot play its role, naming the
                file, the entry and the string, with a "did you mean" where one is close.
        """
        from hasbench.participants.backends import backend_problems

        where = f"{self._source}: " if self._source is not None else ""
        lines = [
            f"{where}backends.{index}.{role}: {problem}"
            for index, backends in enumerate(self.backends)
            for role, problem in backend_problems(backends.models()).items()
        ]
        if lines:
            raise ExperimentError("\n".join(lines))


def provider(model: str) -> str:
    """The concurrency group of a backend string: its provider, or its registered prefix.

    ``openai/gpt-4o`` -> ``openai``; ``scripted:oracle`` -> ``scripted``; ``rule`` ->
    ``rule``; a bare litellm name is resolved by litellm (``gpt-4o-mini`` -> ``openai``).
    """
    if "/" not in model and (":" in model or model == "rule"):
        return model.split(":", 1)[0]
    from hasbench.llm import provider_of

    return provider_of(model)


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment YAML file; errors name the file and the field."""
    path = Path(path)
    raw = read_yaml(path, ExperimentError)
    try:
        experiment = Experiment.model_validate(raw)
    except ValidationError as exc:
        lines = [
            f"{path}: {'.'.join(str(p) for p in err['loc']) or '<top>'}: "
            + err["msg"].removeprefix("Value error, ")
            for err in exc.errors()
        ]
        raise ExperimentError("\n".join(lines)) from None
    experiment._source = path
    experiment.check_backends()
    return experiment


def task_file(name: str) -> Path:
    """A task file of a selection: absolute as given, else under the repository root.

    Raises:
        ExperimentError: the file does not exist.
    """
    path = Path(name) if Path(name).is_absolute() else REPO_ROOT / name
    if not path.exists():
        raise ExperimentError(f"tasks.files: no such task file: {name}")
    return path


def select_tasks(selection: TaskSelection) -> list[Scenario]:
    """Load the task files and apply the filters (raises ScenarioError on a bad file)."""
    chosen: list[Scenario] = []
    for name in selection.files:
        chosen.extend(load_tasks(task_file(name)))
    if selection.domains is not None:
        chosen = [s for s in chosen if s.domain in selection.domains]
    if selection.patterns is not None:
        chosen = [s for s in chosen if s.adaptation_pattern in selection.patterns]
    if selection.ids is not None:
        unknown = sorted(set(selection.ids) - {s.task_id for s in chosen})
        if unknown:
            raise ExperimentError(f"tasks.ids: not among the selected tasks: {unknown}")
        chosen = [s for s in chosen if s.task_id in selection.ids]
    if selection.max_per_domain is not None:
        chosen = _stratified(chosen, selection.max_per_domain)
    return chosen


def _stratified(scenarios: list[Scenario], limit: int) -> list[Scenario]:
    """At most ``limit`` tasks per domain, taken round-robin over patterns (file order)."""
    by_domain: dict[str, dict[str, list[Scenario]]] = {}
    for scn in scenarios:
        by_domain.setdefault(scn.domain, {}).setdefault(scn.adaptation_pattern, []).append(scn)
    keep: set[str] = set()
    for patterns in by_domain.values():
        queues = [list(tasks) for _, tasks in sorted(patterns.items())]
        taken = 0
        while taken < limit and any(queues):
            for queue in queues:
                if queue and taken < limit:
                    keep.add(queue.pop(0).task_id)
                    taken += 1
    return [scn for scn in scenarios if scn.task_id in keep]


@dataclass(frozen=True)
class EpisodeSpec:
    """One cell of the grid.

    Attributes:
        judge_process: whether the episode's CQS/FUR/CRJ events are judged (its record
            has process scores only then).
    """

    scenario: Scenario
    setting: Setting
    backends: Backends
    seed: int
    judge_process: bool = True

    def identity(self, prompts: dict[str, str]) -> dict[str, Any]:
        """Everything that determines the episode (hashed into its key)."""
        return {
            "format": RECORD_FORMAT,
            "task_id": self.scenario.task_id,
            "scenario_hash": self.scenario.content_hash(),
            "setting": self.setting.model_dump(mode="json"),
            "backends": self.backends.identity(),
            "seed": self.seed,
            "judge_process": self.judge_process,
            "package_version": __version__,
            "code": code_fingerprint(),
            "prompt_hashes": prompts,
        }


@functools.cache
def code_fingerprint() -> str:
    """A hash of the package's Python source (part of every episode's identity).

    A results store never reuses an episode that other code produced (an edited playbook,
    a fixed environment); model calls still come from the response cache.
    """
    root = Path(hasbench.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def episode_key(identity: dict[str, Any]) -> str:
    """The record key: first 20 hex digits of the SHA-256 of the canonical identity."""
    return content_hash(identity, 20)


def grid(experiment: Experiment) -> list[EpisodeSpec]:
    """Every episode of the experiment, in a fixed order.

    Raises:
        ExperimentError: a task file or id that is not there, naming the experiment's file.
    """
    try:
        scenarios = select_tasks(experiment.tasks)
    except ExperimentError as exc:
        if experiment._source is None:
            raise
        raise ExperimentError(f"{experiment._source}: {exc}") from None
    return [
        EpisodeSpec(scn, setting, backends, seed, experiment.judge_process)
        for backends in experiment.backends
        for scn in scenarios
        for setting in experiment.settings
        for seed in experiment.seeds
    ]


@dataclass(frozen=True)
class Cell:
    """One episode of a resolved grid: what it is, what determines it, and its key."""

    spec: EpisodeSpec
    identity: dict[str, Any]
    key: str


@dataclass(frozen=True)
class ResolvedExperiment:
    """An experiment with its tasks loaded: every episode's key, its benchmark and its key.

    Attributes:
        experiment: the experiment as asked for.
        cells: its episodes in grid order.
        benchmark: ``{"name": ..., "task_files": {file: SHA-256 of its bytes}}``.
        key: the experiment's key (a hash of its name, benchmark and episode keys).
    """

    experiment: Experiment
    cells: list[Cell]
    benchmark: dict[str, Any]
    key: str

    @property
    def keys(self) -> list[str]:
        """The episode keys of the grid, in grid order."""
        return [cell.key for cell in self.cells]

    def shape(self) -> dict[str, int]:
        """The grid's sizes: tasks, backends, settings, seeds."""
        experiment = self.experiment
        return {
            "tasks": len({cell.spec.scenario.task_id for cell in self.cells}),
            "backends": len(experiment.backends),
            "settings": len(experiment.settings),
            "seeds": len(experiment.seeds),
        }

    def definition(self) -> dict[str, Any]:
        """What a results store keeps of the experiment (``experiments/<key>.json``).

        The experiment as asked for (without its run controls, budget and concurrency,
        which change no result), its benchmark, the code it ran, and its episode keys.
        """
        return {
            "key": self.key,
            "name": self.experiment.name,
            "benchmark": self.benchmark,
            "experiment": self.experiment.model_dump(
                mode="json", exclude={"budget", "concurrency"}
            ),
            "shape": self.shape(),
            "package_version": __version__,
            "code": code_fingerprint(),
            "episodes": self.keys,
        }


def benchmark_identity(selection: TaskSelection) -> dict[str, Any]:
    """The benchmark of a task selection: its name and each task file's content hash.

    Files inside the repository are named relative to it, so the identity (and the keys
    made from it) does not depend on where the checkout lives.
    """
    files = {}
    for name in selection.files:
        path = task_file(name)
        shown = path.resolve()
        if shown.is_relative_to(REPO_ROOT):
            shown = shown.relative_to(REPO_ROOT)
        files[shown.as_posix()] = text_hash(path.read_bytes())
    return {"name": selection.benchmark, "task_files": files}


def experiment_key(name: str, benchmark: dict[str, Any], keys: list[str]) -> str:
    """The key of an experiment: 16 hex digits of the hash of its name, benchmark, episodes."""
    identity = {"format": RECORD_FORMAT, "name": name, "benchmark": benchmark,
                "episodes": sorted(keys)}  # fmt: skip
    return content_hash(identity, 16)


_RESOLVED: dict[str, ResolvedExperiment] = {}
"""Grids resolved in this process, by a hash of the experiment, its task files' contents, the
prompts, the code and the version (a plan and the run after it resolve the same grid)."""
RESOLVED_KEPT = 8
"""How many resolved grids :data:`_RESOLVED` keeps (a study runs one grid per domain)."""


def resolve(experiment: Experiment) -> ResolvedExperiment:
    """Load an experiment's tasks and compute every episode's key and the experiment's key.

    A grid resolved before in this process, from task files of the same content, is not
    loaded again.

    Raises:
        ExperimentError: a task file or id that is not there, naming the experiment's file.
    """
    prompts = prompt_hashes()
    try:
        memo = content_hash({"experiment": experiment.model_dump(mode="json"), "prompts": prompts,
                             "benchmark": benchmark_identity(experiment.tasks),
                             "code": code_fingerprint(), "version": __version__})  # fmt: skip
    except (OSError, ExperimentError):
        memo = None  # a task file that is not there: grid() says which, naming the experiment
    known = _RESOLVED.get(memo) if memo is not None else None
    if known is None:
        specs = grid(experiment)
        benchmark = benchmark_identity(experiment.tasks)
        tasks = {id(spec.scenario): spec.scenario for spec in specs}.values()
        with unchanged(*tasks):  # each task's content is hashed once, not once per episode
            cells = [Cell(s, identity := s.identity(prompts), episode_key(identity)) for s in specs]
        key = experiment_key(experiment.name, benchmark, [cell.key for cell in cells])
        known = ResolvedExperiment(experiment, cells, benchmark, key)
        while len(_RESOLVED) >= RESOLVED_KEPT:
            del _RESOLVED[next(iter(_RESOLVED))]
        _RESOLVED[memo] = known
    return ResolvedExperiment(experiment, known.cells, known.benchmark, known.key)
