"""Who plays each role of an episode: a model (litellm string) or a scripted policy."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hasbench.llm import Endpoint, endpoint_identity

Role = Literal["agent", "user", "judge"]


class Backends(BaseModel):
    """Which model or scripted policy plays each role (litellm strings or ``scripted:*``).

    ``endpoints`` says, per role, where its model is served and how it is called (see
    :class:`~hasbench.llm.Endpoint`); a role not listed uses its provider's own endpoint.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(default="scripted:oracle", min_length=1)
    user: str = Field(default="scripted:user", min_length=1)
    judge: str = Field(default="rule", min_length=1)
    endpoints: dict[Role, Endpoint] = Field(default_factory=dict)

    def endpoint(self, role: str) -> Endpoint | None:
        """The endpoint of a role's model (None: the provider's own)."""
        return self.endpoints.get(role)

    def models(self) -> dict[str, str]:
        """Role -> backend string."""
        return {"agent": self.agent, "user": self.user, "judge": self.judge}

    def endpoint_identities(self) -> dict[str, dict[str, Any]]:
        """Role -> what determines its endpoint's answers, for roles not on the default.

        A role without an endpoint whose provider's server is set in the environment
        (``OPENAI_API_BASE``, ...) is listed with it, a ``local/`` model with its weights.
        """
        found = {
            role: endpoint_identity(self.endpoints.get(role), model)
            for role, model in sorted(self.models().items())
        }
        return {role: identity for role, identity in found.items() if identity}

    def identity(self) -> dict[str, Any]:
        """What determines the backends' behaviour (part of an episode's key).

        The backend strings and, where set, each role's server and extra parameters (a local
        model's weights); never a key, a key's variable or the retry policy.
        """
        found: dict[str, Any] = self.models()
        if endpoints := self.endpoint_identities():
            found["endpoints"] = endpoints
        return found
