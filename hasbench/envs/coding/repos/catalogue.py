"""Every repository of the Coding tasks, in the order the task generator takes them."""

from __future__ import annotations

from hasbench.envs.coding.repos import (
    Repository,
    cliargs,
    configlite,
    csvlite,
    datekit,
    moneyfmt,
    retrykit,
    statskit,
    structs,
    tablefmt,
    textkit,
)

REPOSITORIES: tuple[Repository, ...] = tuple(
    module.REPOSITORY
    for module in (moneyfmt, datekit, csvlite, cliargs, textkit, structs, retrykit, configlite,
                   statskit, tablefmt)
)  # fmt: skip
"""The repositories (the generator cycles through them in this order)."""
