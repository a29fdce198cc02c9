"""Small readings of a stand-in's case shared by the service playbooks."""

from __future__ import annotations

from typing import Any

from hasbench.participants.standin import Case


def output(case: Case, name: str, **arguments: Any) -> Any:
    """The latest successful output of a tool called with these arguments, or None."""
    for outcome in reversed(case.outputs):
        if outcome.name == name and outcome.error is None and outcome.arguments == arguments:
            return outcome.output
    return None


def failed(case: Case, name: str) -> bool:
    """Whether a call of this tool failed."""
    return any(o.name == name and o.error is not None for o in case.outputs)


def declined(case: Case, name: str) -> bool:
    """Whether a person denied or stopped a write of this tool."""
    return any(declined == name for declined, _ in case.declined)
