"""The experiment schema: tasks × backends × settings × seeds, and the key of each episode.

``key`` is a hash of everything that determines an episode: the scenario's content hash,
the setting, the backends (with each role's endpoint server and extra parameters, never its
key), the seed, the package version and the prompt hashes.

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

import yaml
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
from hasbench.paths import REPO_ROOT, RUNS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends
from hasbench.vocab import content_hash

RECORD_FORMAT = 1


class ExperimentError(ValueError):
    """An experiment file that cannot be used; the message names file and field."""


class TaskSelection(BaseModel):
    """Which tasks an experiment runs: files, then filters in this order."""

    model_config = ConfigDict(extra="forbid")

    files: list[str] = Field(min_length=1)
    """Task YAML files, relative to the repository root unless absolute."""
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
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExperimentError(f"{path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ExperimentError(f"{path}: invalid YAML: {exc}") from None
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


def select_tasks(selection: TaskSelection) -> list[Scenario]:
    """Load the task files and apply the filters (raises ScenarioError on a bad file)."""
    chosen: list[Scenario] = []
    for name in selection.files:
        path = Path(name) if Path(name).is_absolute() else REPO_ROOT / name
        if not path.exists():
            raise ExperimentError(f"tasks.files: no such task file: {name}")
        chosen.extend(load_tasks(path))
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
    """One cell of the grid."""

    scenario: Scenario
    setting: Setting
    backends: Backends
    seed: int

    def identity(self, prompts: dict[str, str]) -> dict[str, Any]:
        """Everything that determines the episode (hashed into its key)."""
        return {
            "format": RECORD_FORMAT,
            "task_id": self.scenario.task_id,
            "scenario_hash": self.scenario.content_hash(),
            "setting": self.setting.model_dump(mode="json"),
            "backends": self.backends.identity(),
            "seed": self.seed,
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
        EpisodeSpec(scn, setting, backends, seed)
        for backends in experiment.backends
        for scn in scenarios
        for setting in experiment.settings
        for seed in experiment.seeds
    ]
