"""Problems of a task file, and pydantic's errors turned into field paths and messages.

A :class:`Problem` names the file, the task and the field; it prints as
``file: task_id: field.path: message``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a task file; prints as ``file: task_id: path: message``.

    ``task_id`` is ``tasks[i]`` when the task has no usable id; ``file``, ``task_id``
    and ``path`` are None when they do not apply (e.g. a YAML syntax error).
    """

    file: str | None
    task_id: str | None
    path: str | None
    message: str

    def __str__(self) -> str:
        parts = (self.file, self.task_id, self.path, self.message)
        return ": ".join(part for part in parts if part is not None)


class ScenarioError(ValueError):
    """Raised by :func:`load_tasks` when a task file has problems."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def type_name(value: Any) -> str:
    """A YAML-flavoured name for the type of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string"


def _field_path(loc: tuple[str | int, ...]) -> str:
    """``('users', 0, 'known_info')`` -> ``users[0].known_info``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _unwrap(annotation: Any) -> Any:
    """Drop ``None`` from an optional annotation."""
    if get_origin(annotation) in (Union, UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _model_at(loc: tuple[str | int, ...], root: type[BaseModel]) -> type[BaseModel] | None:
    """The model under ``root`` that holds the field at ``loc`` (None if not a model)."""
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int):
            args = get_args(current)
            if get_origin(current) is not list or not args:
                return None
            current = args[0]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            if part not in current.model_fields:
                return None
            current = current.model_fields[part].annotation
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _message(error: dict[str, Any], root: type[BaseModel]) -> str:
    """A short human message for one pydantic error of a ``root`` model."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    got = type_name(value)
    if kind == "missing":
        return "missing required field"
    if kind == "extra_forbidden":
        model = _model_at(error["loc"][:-1], root)
        key = str(error["loc"][-1])
        close = difflib.get_close_matches(key, list(model.model_fields), n=1) if model else []
        return f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {got}"
    if kind == "list_type":
        return f"expected a list, got {got}"
    if kind == "string_type":
        hint = " (put it in quotes)" if isinstance(value, int | float) else ""
        return f"expected a string, got {got}{hint}"
    if kind in ("float_type", "float_parsing"):
        return f"expected a number, got {value!r}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected an integer, got {value!r}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {value!r}"
    if kind == "literal_error":
        return f"expected one of {ctx['expected']}, got {value!r}"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}, got {value!r}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return error["msg"][0].lower() + error["msg"][1:]


def describe_errors(exc: ValidationError, root: type[BaseModel]) -> list[tuple[str, str]]:
    """(field path, message) for each error of validating a ``root`` model, in order."""
    described = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        if loc and loc[-1] == "[key]":  # a mapping key of the wrong type
            path = f"{_field_path(loc[:-2])}.{loc[-2]}"
            described.append((path, f"keys must be strings, got {type_name(loc[-2])}"))
        else:
            described.append((_field_path(loc), _message(error, root)))
    return described
