"""What is derived from an object that is known not to change, computed once.

Tasks and traces are mutable models, so what is derived from them (a task's content hash,
a trace's judge log) is in general computed on every call. Where a caller knows they stay
as they are for a while (the runner, from an episode's start to its record), it says so with
:func:`unchanged`, and :func:`derived` computes each derived value once inside that block:

    with unchanged(scenario):
        ...  # every scenario.content_hash() here hashes the task once

Outside such a block :func:`derived` computes every time. The block covers the asyncio
tasks started inside it (they copy the context).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
S = TypeVar("S")

_scope: ContextVar[tuple[dict[int, object], dict[tuple[int, str], Any]] | None] = ContextVar(
    "hasbench_unchanged", default=None
)
"""The objects declared unchanged (by id, kept alive here) and what was derived from them."""


@contextmanager
def unchanged(*objects: object) -> Iterator[None]:
    """Declare that ``objects`` do not change inside the block (nested blocks add to it)."""
    outer = _scope.get()
    kept, values = (dict(outer[0]), outer[1]) if outer is not None else ({}, {})
    added = {id(obj) for obj in objects} - kept.keys()
    kept.update((id(obj), obj) for obj in objects)
    token = _scope.set((kept, values))
    try:
        yield
    finally:
        _scope.reset(token)
        for key in [key for key in values if key[0] in added]:
            del values[key]  # an id may be another object's once this one is gone


def derived(obj: S, name: str, build: Callable[[S], T]) -> T:
    """``build(obj)``: computed once per :func:`unchanged` block holding ``obj``, else each time."""
    scope = _scope.get()
    if scope is None or scope[0].get(id(obj)) is not obj:
        return build(obj)
    key = (id(obj), name)
    values = scope[1]
    if key not in values:
        values[key] = build(obj)
    return values[key]
