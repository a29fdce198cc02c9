"""A scripted user working on one of the project's event plans (``data/docuteam/``).

:func:`run_demo` plays the user's side of a short session, the same way in either
condition: fix a typo, rewrite an open line of the plan in two quick edits, answer the
agents' question if one comes, start a discussion and steer it with one message, and
apply an agent message to the edited line. Whatever the backends say is what happens;
the script only acts. ``hasbench docuteam demo`` runs it and writes the session log.
"""

from __future__ import annotations

from dataclasses import dataclass

from hasbench.docuteam.schemas import Mode
from hasbench.docuteam.session import Session
from hasbench.paths import DATA_DIR

DOCUTEAM_DATA = DATA_DIR / "docuteam"


@dataclass(frozen=True)
class DemoScript:
    """What the scripted user does on one task."""

    typo: tuple[str, str]
    """A block and its text with a typo fixed (a trivial edit)."""
    rewrite: tuple[str, str, str]
    """A block, a first quick edit and the final text typed right after it."""
    agents: tuple[str, str]
    mode: Mode
    scope: tuple[str, str]
    comment: str
    steer: str
    """The steering message posted into the user's discussion."""


DEMOS: dict[str, DemoScript] = {
    "workshop": DemoScript(
        typo=("b13", "09:30 | Registration and coffee"),
        rewrite=(
            "b22",
            "Networking: TBD?",
            "Networking: random tables of five during lunch, or structured speed rounds "
            "in the seminar room after the talks?",
        ),
        agents=("budget", "program"),
        mode="discussion",
        scope=("b8", "b9"),
        comment="Where should the cuts come from?",
        steer="I would rather keep a keynote but make it a remote talk.",
    ),
    "sports_day": DemoScript(
        typo=("b6", "Relay race, one team per department"),
        rewrite=(
            "b9",
            "Something for students who do not play sports: cheering?",
            "Something for students who do not play sports: a cheering contest judged by "
            "staff, or mixed-department quiz teams between the matches?",
        ),
        agents=("fairness", "competitor"),
        mode="discussion",
        scope=("b11", "b12"),
        comment="How do we keep prizes motivating without a winner-takes-all?",
        steer="I would rather give every department one award of its own.",
    ),
}


async def run_demo(session: Session, script: DemoScript) -> None:
    """Play the scripted user's session (see the module docstring).

    The session must run on a :class:`~hasbench.docuteam.timing.ManualClock`: the
    script moves it to separate and to batch its edits. Give the session
    ``SessionConfig(simulated_user=True)`` so study data made from its log say so.
    """
    block, text = script.typo
    session.edit(block, text)
    session.clock.advance(3.0)
    await session.tick()
    block, first, final = script.rewrite
    session.edit(block, first)
    session.clock.advance(1.0)
    await session.tick()
    session.edit(block, final)
    session.clock.advance(2.5)
    await session.tick()
    await session.settle()
    for discussion in list(session.discussions.values()):
        if discussion.status == "waiting_for_user":
            await session.answer(discussion.id, 2)
    scope = None if session.baseline else script.scope
    own = await session.start_discussion(list(script.agents), script.mode, scope, script.comment)
    await session.post(own.id, script.steer)
    source = next(iter(session.discussions.values()))
    said = [m for m in source.messages if m.kind == "utterance"]
    if said:
        await session.apply_message(source.id, said[-1].id, block, placement="replace")
        session.clock.advance(2.5)
        await session.tick()
    await session.settle()
