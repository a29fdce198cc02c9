"""The user configuring the team of agents: adding an agent, rewriting a profile.

In the DocuTeam paper (§4.1.1) users manage the agents from the side panel: each has a
name and a short description of its role and viewpoint. Here a profile is a name, a role,
a stance and a list of expertise; a new agent starts with an empty memory, and an edited
one keeps its id and memory. Every change is an ``agent`` event with the profile as it
is afterwards (and, for an edit, as it was).
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from hasbench.docuteam.agents import Agent, AgentProfile
from hasbench.docuteam.session.state import SessionState


class Team:
    """Adds agents to a session and rewrites their profiles."""

    def __init__(self, state: SessionState) -> None:
        self.state = state

    def add(self, name: str, role: str, stance: str, expertise: list[str]) -> Agent:
        """Add an agent (see :meth:`Session.add_agent`)."""
        profile = self._profile(self._new_id(name), name, role, stance, expertise)
        agent = Agent(profile)
        self.state.agents[profile.id] = agent
        self.state.record("agent", "user", {"action": "added", "profile": profile.model_dump()})
        return agent

    def edit(self, agent_id: str, name: str, role: str, stance: str, expertise: list[str]) -> Agent:
        """Rewrite an agent's profile (see :meth:`Session.edit_agent`)."""
        if agent_id not in self.state.agents:
            raise KeyError(f"no agent {agent_id!r}")
        agent = self.state.agents[agent_id]
        before = agent.profile.model_dump()
        agent.profile = self._profile(agent_id, name, role, stance, expertise)
        payload = {"action": "edited", "profile": agent.profile.model_dump(), "before": before}
        self.state.record("agent", "user", payload)
        return agent

    def _new_id(self, name: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
        taken = set(self.state.agents)
        if base not in taken:
            return base
        number = 2
        while f"{base}-{number}" in taken:
            number += 1
        return f"{base}-{number}"

    @staticmethod
    def _profile(
        agent_id: str, name: str, role: str, stance: str, expertise: list[str]
    ) -> AgentProfile:
        fields = {
            "name": name.strip(),
            "role": role.strip(),
            "stance": stance.strip(),
            "expertise": [e.strip() for e in expertise if e.strip()],
        }
        empty = [field for field, value in fields.items() if not value]
        if empty:
            raise ValueError(f"an agent needs a {', '.join(empty)}")
        try:
            return AgentProfile(id=agent_id, **fields)
        except ValidationError as exc:
            raise ValueError(exc.errors()[0]["msg"]) from None
