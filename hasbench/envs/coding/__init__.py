"""The Coding domain: a repository workspace, a bubblewrap sandbox and hidden tests."""

from hasbench.envs.coding.environment import CodingEnvironment
from hasbench.paths import POLICIES_DIR, TASKS_DIR
from hasbench.registry import Domain

__all__ = ["DOMAIN", "CodingEnvironment"]

DOMAIN = Domain(
    name="coding",
    environment=CodingEnvironment,
    deliverable="A submitted change to the repository.",
    task_files=(TASKS_DIR / "coding.yaml",),
    policy=POLICIES_DIR / "coding.md",
    generator="hasbench.build.coding_tasks:write",
)
