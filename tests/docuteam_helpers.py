"""Shared pieces of the DocuTeam tests: the task folders, a demo edit and a scripted session.

A plain module on pytest's pythonpath (not the conftest), so test modules import it by a
name no other test folder shares.
"""

from __future__ import annotations

from pathlib import Path

from hasbench.docuteam import ManualClock, Session, SessionConfig
from hasbench.docuteam.demo import DEMOS
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
