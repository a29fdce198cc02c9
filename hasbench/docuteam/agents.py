"""DocuTeam agents: a profile (name, role, stance, expertise) and a long-term memory.

Profiles come from YAML::

    agents:
      - id: budget
        name: Bora
        role: Budget keeper
        stance: Every won must earn its place in the plan.
        expertise: [budget, catering costs, vendor quotes]
        memory:                      # optional starting entries
          - {type: preference, content: The user wants a printed programme.}

Memory entries are short sentences of three types (agreement, preference, summary),
each with an id that never changes; they are added, rewritten by id or deleted by id,
and an update naming an id the memory does not hold is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hasbench.paths import read_yaml

MemoryType = Literal["agreement", "preference", "summary"]


class AgentProfileError(ValueError):
    """An agent file that cannot be used; the message names the file and the field."""


class MemoryEntry(BaseModel):
    """One remembered fact."""

    model_config = ConfigDict(extra="forbid")

    id: str
    type: MemoryType
    content: str


class NewEntry(BaseModel):
    """An entry to add (its id is assigned by the memory)."""

    model_config = ConfigDict(extra="forbid")

    type: MemoryType
    content: str = Field(min_length=1, max_length=240)


class EntryRewrite(BaseModel):
    """New content for an existing entry."""

    model_config = ConfigDict(extra="forbid")

    id: str
    content: str = Field(min_length=1, max_length=240)


class MemoryUpdate(BaseModel):
    """Changes to one agent's memory: entries to add, rewrite and delete."""

    model_config = ConfigDict(extra="forbid")

    add: list[NewEntry] = Field(default_factory=list)
    update: list[EntryRewrite] = Field(default_factory=list)
    delete: list[str] = Field(default_factory=list)

    def unknown_ids(self, known: set[str]) -> list[str]:
        """Ids this update rewrites or deletes that are not in ``known``."""
        named = [entry.id for entry in self.update] + list(self.delete)
        return [entry_id for entry_id in named if entry_id not in known]


class MemoryUpdateError(ValueError):
    """An update that names entries the memory does not hold."""


@dataclass
class Memory:
    """An agent's long-term memory: entries in the order they were added."""

    entries: list[MemoryEntry] = field(default_factory=list)
    next_number: int = 1

    def ids(self) -> set[str]:
        """Ids of the entries held now."""
        return {entry.id for entry in self.entries}

    def add(self, kind: MemoryType, content: str) -> MemoryEntry:
        """Add an entry with a fresh id ``m<n>``."""
        entry = MemoryEntry(id=f"m{self.next_number}", type=kind, content=content)
        self.next_number += 1
        self.entries.append(entry)
        return entry

    def apply(self, update: MemoryUpdate) -> dict[str, list]:
        """Apply an update: rewrites, then deletes, then adds.

        Returns:
            ``{"added": [...], "updated": [...], "deleted": [...]}`` with the entries
            as they are after the change (deleted: as they were).

        Raises:
            MemoryUpdateError: the update names an id the memory does not hold; nothing is
                changed then.
        """
        unknown = update.unknown_ids(self.ids())
        if unknown:
            raise MemoryUpdateError(f"no memory entries with id(s) {', '.join(unknown)}")
        by_id = {entry.id: entry for entry in self.entries}
        updated = []
        for rewrite in update.update:
            by_id[rewrite.id].content = rewrite.content
            updated.append(by_id[rewrite.id].model_copy())
        deleted = [by_id[i].model_copy() for i in dict.fromkeys(update.delete)]
        self.entries = [entry for entry in self.entries if entry.id not in set(update.delete)]
        added = [self.add(new.type, new.content).model_copy() for new in update.add]
        return {"added": added, "updated": updated, "deleted": deleted}

    def snapshot(self) -> list[MemoryEntry]:
        """Copies of the entries held now."""
        return [entry.model_copy() for entry in self.entries]


class AgentProfile(BaseModel):
    """Who an agent is: the viewpoint it brings to every discussion."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    name: str = Field(min_length=1)
    role: str = Field(min_length=1)
    stance: str = Field(min_length=1)
    expertise: list[str] = Field(min_length=1)


class _AgentEntry(AgentProfile):
    memory: list[NewEntry] = Field(default_factory=list)


class _AgentFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agents: list[_AgentEntry] = Field(min_length=2)


@dataclass
class Agent:
    """A profile and its memory."""

    profile: AgentProfile
    memory: Memory = field(default_factory=Memory)

    @property
    def id(self) -> str:
        """The agent id."""
        return self.profile.id


def load_agents(path: str | Path) -> dict[str, Agent]:
    """Read agent profiles (and optional starting memory) from a YAML file.

    Returns:
        Agent id -> agent, in file order.

    Raises:
        AgentProfileError: unreadable YAML, a missing or wrong field, fewer than two
            agents, or a repeated id; the message names the file and the field.
    """
    path = Path(path)
    raw = read_yaml(path, AgentProfileError)
    try:
        parsed = _AgentFile.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(
            f"[{part}]" if isinstance(part, int) else str(part) for part in error["loc"]
        ).replace(".[", "[")
        raise AgentProfileError(f"{path}: {where or 'file'}: {error['msg']}") from None
    agents: dict[str, Agent] = {}
    for index, entry in enumerate(parsed.agents):
        if entry.id in agents:
            raise AgentProfileError(f"{path}: agents[{index}].id: {entry.id!r} repeats")
        memory = Memory()
        for new in entry.memory:
            memory.add(new.type, new.content)
        profile = AgentProfile.model_validate(entry.model_dump(exclude={"memory"}))
        agents[entry.id] = Agent(profile, memory)
    return agents
