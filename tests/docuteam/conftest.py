"""Shared pieces of the DocuTeam engine tests: the task folders and a scripted session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ipykernel.kernelspec import install
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from hasbench.docuteam import ManualClock, Session, SessionConfig
from hasbench.docuteam.demo import DEMOS
from hasbench.docuteam.steps import Backends

WORKSHOP = Path(__file__).resolve().parents[2] / "data" / "docuteam" / "workshop"
SPORTS_DAY = WORKSHOP.parent / "sports_day"
NETWORKING_EDIT = DEMOS["workshop"].rewrite[2]


def make_session(tmp_path: Path | None = None, **config) -> Session:
    """A scripted workshop session on a manual clock (log file under tmp_path if given)."""
    backends = config.pop("backends", Backends())
    client = config.pop("client", None)
    return Session.from_folder(
        WORKSHOP,
        config=SessionConfig(**config),
        backends=backends,
        client=client,
        clock=ManualClock(),
        log_path=None if tmp_path is None else tmp_path / "session.jsonl",
    )


@pytest.fixture
def workshop_session(tmp_path) -> Session:
    return make_session(tmp_path)


@pytest.fixture(scope="session")
def hasbench_kernel() -> str:
    """Register the ``hasbench`` Jupyter kernel in this environment if it is missing."""
    try:
        KernelSpecManager().get_kernel_spec("hasbench")
    except NoSuchKernel:
        install(kernel_name="hasbench", prefix=sys.prefix)
    return "hasbench"
