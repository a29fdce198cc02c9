"""An episode's record: the trace's header, its events, the channels' lifecycles, its end.

Every part of a running episode writes through one :class:`Record`. It stamps each event
with the current turn, holds the three channel controllers (whose request lifecycles are
events too) and ends the episode with a typed :data:`~hasbench.trace.TerminationReason`,
closing the requests still awaiting an answer. The header names everything that
determines the trace and carries no wall-clock, so a rerun is byte-identical.
"""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata

import hasbench
from hasbench.channels import Budget, ChannelController
from hasbench.prompts import prompt_hashes
from hasbench.simulator.setup import EpisodeSetup
from hasbench.trace import (
    ErrorPayload,
    Payload,
    Termination,
    TerminationReason,
    Trace,
    TraceHeader,
    Usage,
)
from hasbench.vocab import CHANNELS


class Record:
    """The trace of a running episode, its turn counter and its channel controllers.

    Attributes:
        trace: the trace being written.
        step_no: the current turn (0 before the first).
        controllers: one controller per channel, sharing the interaction budget.
    """

    def __init__(self, setup: EpisodeSetup) -> None:
        self._environment = setup.environment
        self.trace = Trace(header=trace_header(setup))
        self.step_no = 0
        setting = setup.setting
        budget = Budget(
            max(setting.interaction_budget, setup.scenario.environment.interaction_budget or 0)
        )
        enabled = setting.enabled_channels()
        self.controllers = {
            channel: ChannelController(
                channel, channel in enabled, setup.graph, budget, self.record
            )
            for channel in CHANNELS
        }

    @property
    def ended(self) -> bool:
        """True once the episode has a termination."""
        return self.trace.termination is not None

    def record(
        self,
        *,
        type: str,
        actor: str,
        target: str | None = None,
        channel: str | None = None,
        initiator: str | None = None,
        payload: Payload,
        usage: Usage | None = None,
    ) -> None:
        """Append an event of the current turn."""
        self.trace.append(
            step=self.step_no,
            actor=actor,
            type=type,
            target=target,
            channel=channel,
            initiator=initiator,
            payload=payload,
            usage=usage,
        )

    def record_error(self, actor: str, error_type: str, message: str) -> None:
        """Record a participant's unusable output or refused action as an ``error`` event."""
        self.record(
            type="error", actor=actor, payload=ErrorPayload(error_type=error_type, message=message)
        )

    def terminate(self, reason: TerminationReason, detail: str | None = None) -> None:
        """End the episode: close the requests awaiting an answer, then set the termination."""
        for controller in self.controllers.values():
            for request in controller.open_requests():
                controller.terminate(request, f"episode ended: {reason}")
        self.trace.termination = Termination(
            reason=reason,
            step=self.step_no,
            detail=detail,
            final_state_hash=self._environment.state_hash(),
        )


def trace_header(setup: EpisodeSetup) -> TraceHeader:
    """The header of an episode's trace: what determines it (never a wall-clock)."""
    scenario, backends = setup.scenario, setup.backends
    participants = {pid: setup.graph.participant(pid).kind for pid in scenario.participant_ids}
    return TraceHeader(
        scenario_id=scenario.task_id,
        scenario_hash=scenario.content_hash(),
        domain=scenario.domain,
        pattern=scenario.adaptation_pattern,
        setting=setup.setting.model_dump(mode="json"),
        backends=backends.models(),
        endpoints=backends.endpoint_identities() or None,
        seed=setup.seed,
        package_version=hasbench.__version__,
        prompt_hashes=prompt_hashes(),
        library_versions=library_versions(),
        participants=participants,
        counterparties=sorted(scenario.counterparties) or None,
        environment=setup.environment.describe(),
    )


@cache
def library_versions() -> dict[str, str]:
    """Versions of Python and the libraries that shape a trace (for the header)."""
    versions = {"python": platform.python_version()}
    for lib in ("numpy", "pydantic", "networkx", "litellm"):
        try:
            versions[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            versions[lib] = "missing"
    return versions
