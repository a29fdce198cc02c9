"""Participants' door to models: each call recorded as an event, a failure ends the episode."""

from __future__ import annotations

from typing import Any

from hasbench.llm import LLMClient, ModelError, ResponseCache
from hasbench.simulator.record import Record
from hasbench.simulator.setup import EpisodeSetup
from hasbench.trace import ModelCallPayload, ModelErrorPayload


class Models:
    """The episode's model client, shared by its participants' gateways.

    Attributes:
        client: the model client; one with the default response cache is made at the
            first call when none was given.
    """

    def __init__(self, setup: EpisodeSetup, record: Record, client: Any | None) -> None:
        self.setup = setup
        self.record = record
        self.client = client

    def gateway(self, actor: str) -> ParticipantGateway:
        """The door of one participant (see :class:`~hasbench.participants.base.Gateway`)."""
        return ParticipantGateway(self, actor)

    def ready_client(self) -> Any:
        """The model client, made now if none was given."""
        if self.client is None:
            self.client = LLMClient(cache=ResponseCache.default())
        return self.client


class ParticipantGateway:
    """One participant's model calls and error reports, recorded under its id."""

    def __init__(self, models: Models, actor: str) -> None:
        self._models = models
        self._actor = actor

    async def complete(
        self,
        role: str,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Any:
        """One model call on the participant's behalf, recorded as a ``model_call`` event.

        A call that fails for good is an infrastructure failure, not the participant's
        doing: it is recorded as a ``model_error`` event and ends the episode (termination
        ``model_error``), and the error is raised on to unwind the participant.

        Raises:
            ModelError: the call failed for good.
        """
        client, setup, record = self._models.ready_client(), self._models.setup, self._models.record
        try:
            response = await client.complete(
                model, messages, tools, temperature=0.0, response_format=response_format,
                seed=setup.seed, endpoint=setup.backends.endpoint(role),
            )  # fmt: skip
        except ModelError as exc:
            if not record.ended:
                payload = ModelErrorPayload(
                    model=model, role=role, kind=exc.kind, message=exc.message
                )
                record.record(type="model_error", actor=self._actor, payload=payload)
                record.terminate("model_error", f"{role} model {model}: {exc}")
            raise
        record.record(
            type="model_call",
            actor=self._actor,
            payload=ModelCallPayload(
                model=model,
                role=role,
                cached=response.cached,
                cost=response.cost,
                attempts=response.attempts,
            ),
            usage=response.usage,
        )
        return response

    def report_error(self, error_type: str, message: str) -> None:
        """Record unusable output of the participant."""
        self._models.record.record_error(self._actor, error_type, message)
