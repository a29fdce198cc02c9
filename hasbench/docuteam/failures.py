"""Infrastructure failures in a DocuTeam session: lost steps, and when the session fails.

A model step is *lost* when its call fails for a reason outside the model's answer, a
:class:`~hasbench.llm.ModelError`: a missing key or ``[local]`` extra, an unknown model,
an endpoint that does not answer, a timeout or server errors after the client's retries.
An unusable answer is not a loss: it is the model's own behaviour, which the session
records and measures.

A session *fails* at the first permanent failure (no later call to that backend can
succeed) or after :attr:`~hasbench.docuteam.session.SessionConfig.failed_steps_in_a_row`
lost steps in a row, whether the engine's model or a simulated participant's model
failed. Its log gets one ``session_failed`` event, no model step runs after it, and it
gives no measures and no study rows (:class:`FailedSessionError`). A session that lost
steps without failing reports how many (``steps_lost``) beside its measures.
"""

from __future__ import annotations

from typing import Any

from hasbench.llm import FIXES, ModelError


class FailedSessionError(ValueError):
    """A session marked failed was asked for measures or study rows (the message says why)."""


class LossCounter:
    """Counts lost steps in a row and says when a loss fails the session.

    Args:
        limit: Lost steps in a row that fail the session.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_a_row = 0

    def answered(self) -> None:
        """A model answered (usable or not): the run of losses is broken."""
        self.in_a_row = 0

    def lost(self, error: ModelError) -> bool:
        """Count a lost step; True when it fails the session."""
        self.in_a_row += 1
        return error.permanent or self.in_a_row >= self.limit


def failure_payload(role: str, model: str, step: str, error: ModelError) -> dict[str, Any]:
    """The payload of a ``session_failed`` event: who failed, where, why and what to fix."""
    return {
        "role": role,
        "model": model,
        "step": step,
        "kind": error.kind,
        "message": error.message,
        "permanent": error.permanent,
        "fix": FIXES.get(error.kind, ""),
    }


def describe_failure(failure: dict[str, Any]) -> str:
    """A failure in one sentence (with what to fix when that is known)."""
    fix = f" ({failure['fix']})" if failure.get("fix") else ""
    return (
        f"the {failure['role']} model {failure['model']} failed at the {failure['step']} "
        f"step: {failure['kind']}: {failure['message']}{fix}"
    )
