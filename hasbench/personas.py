"""User personas: interaction-style dimensions, per domain, loaded from data.

A persona varies *how* a simulated human interacts, not what it knows or wants. Each
dimension is a number in [0, 1]. Channels use different dimensions (HAS paper App. A.1):
clarification is shaped by patience and cooperativeness, feedback adds assertiveness, and
control uses risk tolerance, assertiveness and cooperativeness.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hasbench.paths import DATA_DIR, read_yaml

PERSONAS_FILE = DATA_DIR / "personas.yaml"
DIMENSIONS = ("patience", "cooperativeness", "assertiveness", "risk_tolerance")
CHANNEL_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "clarification": ("patience", "cooperativeness"),
    "feedback": ("patience", "cooperativeness", "assertiveness"),
    "control": ("risk_tolerance", "assertiveness", "cooperativeness"),
}
"""Which dimensions shape a human's behaviour on each channel."""

_LEVEL_WORDS: dict[str, tuple[str, str, str]] = {
    "patience": (
        "You get impatient quickly and answer tersely; you dislike being asked twice.",
        "You are reasonably patient but expect questions to be to the point.",
        "You are patient and happy to answer follow-up questions.",
    ),
    "cooperativeness": (
        "You share only what is explicitly asked and may hold back details.",
        "You share what is asked for when the request is clear.",
        "You are forthcoming and helpful with anything you know that was asked.",
    ),
    "assertiveness": (
        "You rarely push back and accept proposals unless clearly wrong.",
        "You say so when something does not match what you want.",
        "You state objections bluntly and insist on what you want.",
    ),
    "risk_tolerance": (
        "You are cautious: you refuse consequential actions unless clearly justified.",
        "You approve consequential actions when they match your request.",
        "You are relaxed about consequential actions and approve readily.",
    ),
}


class Persona(BaseModel):
    """An interaction style of a simulated human."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    persona_id: str
    name: str
    description: str
    patience: float = Field(ge=0.0, le=1.0)
    cooperativeness: float = Field(ge=0.0, le=1.0)
    assertiveness: float = Field(ge=0.0, le=1.0)
    risk_tolerance: float = Field(ge=0.0, le=1.0)

    def dimensions(self, channel: str | None = None) -> dict[str, float]:
        """The dimension values, restricted to those a channel uses when given."""
        names = CHANNEL_DIMENSIONS[channel] if channel else DIMENSIONS
        return {name: getattr(self, name) for name in names}

    def describe(self, channel: str | None = None) -> str:
        """Behaviour instructions for a user-simulator prompt, for one channel or all."""
        lines = [f"{self.name}: {self.description}"]
        for name, value in self.dimensions(channel).items():
            low, mid, high = _LEVEL_WORDS[name]
            lines.append(low if value < 0.34 else mid if value < 0.67 else high)
        return "\n".join(lines)


DEFAULT_PERSONA = Persona(
    persona_id="default",
    name="Ordinary user",
    description="An ordinary person with no particular interaction quirks.",
    patience=0.6,
    cooperativeness=0.7,
    assertiveness=0.5,
    risk_tolerance=0.5,
)
"""Used when neither the setting nor the scenario names a persona."""


class PersonaError(ValueError):
    """A personas file or persona id that cannot be used."""


@cache
def load_personas(path: Path = PERSONAS_FILE) -> dict[str, list[Persona]]:
    """Read the personas file: a mapping domain -> list of personas."""
    raw = read_yaml(Path(path), PersonaError)
    if not isinstance(raw, dict):
        raise PersonaError(f"{path}: expected a mapping of domain -> list of personas")
    result: dict[str, list[Persona]] = {}
    seen: set[str] = set()
    for domain, entries in raw.items():
        if not isinstance(entries, list):
            raise PersonaError(f"{path}: {domain}: expected a list of personas")
        result[domain] = []
        for index, entry in enumerate(entries):
            try:
                persona = Persona.model_validate(entry)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise PersonaError(f"{path}: {domain}[{index}].{where}: {first['msg']}") from None
            if persona.persona_id in seen:
                raise PersonaError(f"{path}: {domain}[{index}]: duplicate {persona.persona_id!r}")
            seen.add(persona.persona_id)
            result[domain].append(persona)
    return result


def domain_personas(domain: str, path: Path = PERSONAS_FILE) -> list[Persona]:
    """The personas defined for a domain (empty list if none)."""
    return list(load_personas(path).get(domain, []))


def get_persona(persona_id: str | None, path: Path = PERSONAS_FILE) -> Persona:
    """The persona with this id; the default persona for None or "default"."""
    if persona_id is None or persona_id == DEFAULT_PERSONA.persona_id:
        return DEFAULT_PERSONA
    for personas in load_personas(path).values():
        for persona in personas:
            if persona.persona_id == persona_id:
                return persona
    raise PersonaError(f"{path}: no persona named {persona_id!r}")
