"""Personas of simulated study participants: expertise, initiative and trust.

The personas live in ``data/docuteam/personas.yaml``. Each dimension is a number in
[0, 1]; the scripted user reads them as numbers, a model user reads them as the words
of :meth:`StudyPersona.describe`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hasbench.paths import DATA_DIR, read_yaml

STUDY_PERSONAS_FILE = DATA_DIR / "docuteam" / "personas.yaml"
DIMENSIONS = ("expertise", "initiative", "trust")

_WORDS: dict[str, tuple[str, str, str]] = {
    "expertise": (
        "You have little experience planning events and often do not know what a good plan needs.",
        "You have planned a few events and know the usual pieces of a plan.",
        "You have planned many events and know exactly what makes a plan workable.",
    ),
    "initiative": (
        "You rarely act on your own; you mostly react to what the agents bring up.",
        "You act on your own now and then, and react to the agents otherwise.",
        "You take the lead: you edit, start discussions and steer them yourself.",
    ),
    "trust": (
        "You doubt the agents' suggestions and prefer your own wording and choices.",
        "You weigh the agents' suggestions and take the ones that fit.",
        "You trust the agents and readily take up their ideas and offered answers.",
    ),
}


class StudyPersonaError(ValueError):
    """A personas file that cannot be used; the message names the file and the field."""


class StudyPersona(BaseModel):
    """A simulated participant's character."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    expertise: float = Field(ge=0.0, le=1.0)
    initiative: float = Field(ge=0.0, le=1.0)
    trust: float = Field(ge=0.0, le=1.0)

    def describe(self) -> str:
        """The persona in words, for a model playing it."""
        lines = [f"{self.name}. {self.description}"]
        for dimension in DIMENSIONS:
            value = getattr(self, dimension)
            lines.append(_WORDS[dimension][0 if value < 0.34 else 1 if value < 0.67 else 2])
        return " ".join(lines)


class _PersonaFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    personas: list[StudyPersona] = Field(min_length=1)


def load_study_personas(path: str | Path = STUDY_PERSONAS_FILE) -> list[StudyPersona]:
    """Read the personas of a file, in file order.

    Raises:
        StudyPersonaError: unreadable YAML, a missing or wrong field, or a repeated id.
    """
    path = Path(path)
    raw = read_yaml(path, StudyPersonaError)
    try:
        personas = _PersonaFile.model_validate(raw).personas
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise StudyPersonaError(f"{path}: {where}: {error['msg']}") from None
    ids = [p.id for p in personas]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise StudyPersonaError(f"{path}: persona id(s) repeat: {', '.join(repeated)}")
    return personas
