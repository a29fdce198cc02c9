"""Small readings of a stand-in's case shared by the service playbooks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def settled(case: Case, name: str) -> bool:
    """Whether a write of this tool ran or a person declined it: its request needs no more."""
    return case.ran(name) or declined(case, name)


def read_requests(
    case: Case,
    said: list[str],
    text: str,
    source: str,
    requests_in: Callable[[str], list[str]],
    changed: Sequence[str],
) -> bool:
    """Learn the requests a text states; return whether a person replaced the earlier ones.

    The task's requests are the first ones. What a person says is kept in ``said``; the
    requests they state replace the known ones when the text has a word of ``changed``
    (they changed their mind), else the new ones are added.
    """
    if source == "task":
        case.learn("requests", requests_in(text), "task")
        return False
    said.append(text)
    stated = requests_in(text)
    if stated and any(w in text.lower() for w in changed):
        case.learn("requests", stated, source)
        return True
    if stated:
        known = case.facts.get("requests") or []
        case.learn("requests", known + [r for r in stated if r not in known], source)
    return False


def summary(case: Case, describe: Callable[[str, dict[str, Any], Any], str]) -> str:
    """The closing message: each write done, in ``describe``'s words, then each one declined.

    ``describe`` is given the tool's name, its arguments and its latest successful output.
    """
    lines = []
    for name, arguments in case.done:
        result = next(
            (o.output for o in reversed(case.outputs) if o.name == name and o.error is None),
            None,
        )
        lines.append(describe(name, arguments, result))
    for name, _ in case.declined:
        lines.append(f"You declined {name.replace('_', ' ')}; I did not do it.")
    return " ".join(lines) or "Nothing was changed."
