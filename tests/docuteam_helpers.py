"""Shared pieces of the DocuTeam tests: the task folders, a demo edit and a scripted session.

A plain module on pytest's pythonpath (not the conftest), so test modules import it by a
name no other test folder shares.
"""

from __future__ import annotations

from pathlib import Path

from hasbench.docuteam import ManualClock, Session, SessionConfig
from hasbench.docuteam import schemas as s
from hasbench.docuteam.demo import DEMOS
from hasbench.docuteam.discussion import Discussion
from hasbench.docuteam.document import Block
from hasbench.docuteam.scripted import incorporate
from hasbench.docuteam.steps import RoleModels

WORKSHOP = Path(__file__).resolve().parents[1] / "data" / "docuteam" / "workshop"
SPORTS_DAY = WORKSHOP.parent / "sports_day"
NETWORKING_EDIT = DEMOS["workshop"].rewrite[2]


def make_session(tmp_path: Path | None = None, **config) -> Session:
    """A scripted workshop session on a manual clock (log file under tmp_path if given)."""
    backends = config.pop("backends", RoleModels())
    client = config.pop("client", None)
    return Session.from_folder(
        WORKSHOP,
        config=SessionConfig(**config),
        backends=backends,
        client=client,
        clock=ManualClock(),
        log_path=None if tmp_path is None else tmp_path / "session.jsonl",
    )


def adapted(message: s.Message, speakers: list[str], target: Block, placement: str) -> str:
    """The scripted incorporator's block text for a message applied at a target."""
    data = s.IncorporateInput(
        snippet=message.text,
        author_name=message.author_name,
        speakers=speakers,
        focus="",
        target=target,
        before=None,
        after=None,
        placement=placement,
    )
    return incorporate(data).text


async def networking_question(session: Session) -> Discussion:
    """Rewrite the networking line with two options; the agents' discussion asks the user."""
    session.edit("b22", NETWORKING_EDIT)
    await session.flush_edits()
    await session.settle()
    d = session.discussions["d1"]
    assert d.status == "waiting_for_user" and len(d.pending.options) == 2
    return d
