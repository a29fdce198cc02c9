"""Fixtures of the DocuTeam tests (their shared helpers are in ``tests/docuteam_helpers.py``)."""

from __future__ import annotations

import sys

import pytest
from docuteam_helpers import make_session
from ipykernel.kernelspec import install
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from hasbench.docuteam import Session


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
