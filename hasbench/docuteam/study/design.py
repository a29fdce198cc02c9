"""A study with real participants: the design file (``STUDY.yaml``) and who does what when.

``hasbench serve study STUDY.yaml`` runs it (:mod:`hasbench.serve.study`). The file::

    title: DocuTeam replication, spring 2027      # shown on every page
    consent: |                                     # shown first; the participant agrees
      You are invited to ...
    participants: 8                                # P01..P08, or a list of pseudonyms
    raters: [R1, R2]                               # blind raters of the final plans
    tasks: [workshop, sports_day]                  # two task folders (data/docuteam/NAME
                                                   # or a path; relative to the file)
    counterbalancing: rotate                       # or an explicit plan, see below
    minutes_per_session: 30                        # time for each of the two sessions
    debounce: 2.0                                  # seconds after typing before the
                                                   # agents read an edit
    backends: scripted:docuteam                    # every role, or per role:
    # backends: {agents: openai/gpt-5-mini, moderator: openai/gpt-5-mini, ...}

The two conditions are always DocuTeam and Baseline. ``rotate`` gives participant i the
design cell i mod 4 of :func:`~hasbench.docuteam.study.example.counterbalanced_design`
(DocuTeam first or second, crossed with which task goes with DocuTeam), so four
participants cover every order and task pairing. An explicit plan names each
participant's two sessions in order::

    counterbalancing:
      P01: [DocuTeam workshop, Baseline sports_day]
      P02: [Baseline workshop, DocuTeam sports_day]

Every problem is reported with the file and the field, before anything runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hasbench.docuteam.demo import DOCUTEAM_DATA
from hasbench.docuteam.steps import ROLES, RoleModels
from hasbench.docuteam.study.data import CONDITIONS
from hasbench.docuteam.study.example import counterbalanced_design
from hasbench.paths import read_yaml

PSEUDONYM = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


class StudyDesignError(ValueError):
    """A study file that cannot be used; the message names the file and the field."""


class SessionPlan(BaseModel):
    """One of a participant's two sessions."""

    model_config = ConfigDict(frozen=True)

    order: int
    condition: str
    task: str


class StudyDesign(BaseModel):
    """The contents of ``STUDY.yaml`` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=1)
    consent: str = Field(min_length=1)
    participants: list[str] | int
    raters: list[str] = Field(default_factory=lambda: ["R1", "R2"])
    tasks: list[str] = Field(min_length=2, max_length=2)
    counterbalancing: str | dict[str, list[str]] = "rotate"
    minutes_per_session: float = Field(default=30, gt=0)
    debounce: float = Field(default=2.0, ge=0)
    backends: str | dict[str, str] = "scripted:docuteam"

    @field_validator("participants")
    @classmethod
    def _people(cls, value: list[str] | int) -> list[str] | int:
        names = [f"P{i + 1:02d}" for i in range(value)] if isinstance(value, int) else value
        if not names:
            raise ValueError("name at least one participant")
        _check_names(names)
        return value

    @field_validator("raters")
    @classmethod
    def _raters(cls, value: list[str]) -> list[str]:
        _check_names(value)
        return value

    @property
    def people(self) -> list[str]:
        """The participants' pseudonyms."""
        if isinstance(self.participants, int):
            return [f"P{i + 1:02d}" for i in range(self.participants)]
        return list(self.participants)

    def role_models(self) -> RoleModels:
        """The backend of every DocuTeam role."""
        if isinstance(self.backends, str):
            return RoleModels.all(self.backends)
        return RoleModels(**self.backends)


def _check_names(names: list[str]) -> None:
    bad = [n for n in names if not PSEUDONYM.fullmatch(n)]
    if bad:
        raise ValueError(
            f"{bad[0]!r}: a pseudonym is 1-40 letters, digits, '_', '.' or '-' (no real names)"
        )
    if len(set(names)) != len(names):
        raise ValueError("a name is listed twice")


class StudyPlan:
    """A loaded design: the task folders and each participant's two sessions.

    Args:
        design: The design.
        path: The design file (task names are resolved next to it first).

    Raises:
        StudyDesignError: a task folder that does not exist, or a counterbalancing plan
            that does not give every participant both conditions with different tasks.
    """

    def __init__(self, design: StudyDesign, path: Path) -> None:
        self.design = design
        self.path = path
        self.task_folders = {name: self._folder(name) for name in design.tasks}
        self.plans = self._plans()

    def _folder(self, name: str) -> Path:
        for folder in (self.path.parent / name, DOCUTEAM_DATA / name):
            if (folder / "agents.yaml").exists():
                return folder
        known = ", ".join(sorted(p.name for p in DOCUTEAM_DATA.iterdir() if p.is_dir()))
        raise StudyDesignError(
            f"{self.path}: tasks: {name!r} is neither a task folder (plan.md, agents.yaml, "
            f"task.md) next to the file nor one of {known}"
        )

    def _plans(self) -> dict[str, list[SessionPlan]]:
        design, people = self.design, self.design.people
        if design.counterbalancing == "rotate":
            cells = counterbalanced_design(len(people))
            names = dict(zip((f"P{i + 1:02d}" for i in range(len(people))), people, strict=True))
            tasks = dict(zip(("workshop", "sports_day"), design.tasks, strict=True))
            plans: dict[str, list[SessionPlan]] = {p: [] for p in people}
            for cell in cells:
                plans[names[str(cell["participant"])]].append(
                    SessionPlan(
                        order=int(cell["order"]),
                        condition=str(cell["condition"]),
                        task=tasks[str(cell["task"])],
                    )
                )
            return {p: sorted(s, key=lambda x: x.order) for p, s in plans.items()}
        if isinstance(design.counterbalancing, str):
            raise StudyDesignError(
                f"{self.path}: counterbalancing: {design.counterbalancing!r} is not 'rotate' "
                "or a plan per participant"
            )
        return self._explicit(design.counterbalancing)

    def _explicit(self, given: dict[str, list[str]]) -> dict[str, list[SessionPlan]]:
        people = self.design.people
        missing = [p for p in people if p not in given]
        unknown = [p for p in given if p not in people]
        if missing or unknown:
            raise StudyDesignError(
                f"{self.path}: counterbalancing: "
                + (f"no plan for {', '.join(missing)}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"{', '.join(unknown)} not among the participants" if unknown else "")
            )
        plans = {}
        for person in people:
            where = f"{self.path}: counterbalancing.{person}"
            sessions = []
            for order, item in enumerate(given[person], start=1):
                condition, _, task = str(item).partition(" ")
                if condition not in CONDITIONS or task not in self.design.tasks:
                    raise StudyDesignError(
                        f"{where}[{order - 1}]: {item!r} is not 'CONDITION TASK' with a "
                        f"condition of {', '.join(CONDITIONS)} and a task of the study"
                    )
                sessions.append(SessionPlan(order=order, condition=condition, task=task))
            if (
                len(sessions) != 2
                or {s.condition for s in sessions} != set(CONDITIONS)
                or sessions[0].task == sessions[1].task
            ):
                raise StudyDesignError(
                    f"{where}: two sessions, one per condition, each on a different task"
                )
            plans[person] = sessions
        return plans


def load_design(path: str | Path) -> StudyPlan:
    """Read and check a study file (see the module docstring).

    Raises:
        StudyDesignError: the file cannot be read or breaks the schema; the message names
            the file and the field.
    """
    path = Path(path)
    raw = read_yaml(path, StudyDesignError)
    if isinstance(raw, dict) and isinstance(raw.get("backends"), dict):
        unknown = [role for role in raw["backends"] if role not in ROLES]
        if unknown:
            raise StudyDesignError(
                f"{path}: backends.{unknown[0]}: not a DocuTeam role ({', '.join(ROLES)})"
            )
    try:
        design = StudyDesign.model_validate(raw)
        design.role_models()
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "file"
        raise StudyDesignError(f"{path}: {where}: {error['msg']}") from None
    return StudyPlan(design, path.resolve())
