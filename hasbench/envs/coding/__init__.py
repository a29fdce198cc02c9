"""The Coding domain: a repository workspace, a bubblewrap sandbox and hidden tests."""

from hasbench.envs.base import project_domain
from hasbench.envs.coding.environment import CodingEnvironment

__all__ = ["DOMAIN", "CodingEnvironment"]

DOMAIN = project_domain(
    name="coding",
    environment=CodingEnvironment,
    deliverable="A submitted change to the repository.",
)
