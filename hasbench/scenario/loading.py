"""Reading task files: YAML parsing, schema validation and the cross-field checks.

:func:`load_tasks` raises :class:`~hasbench.scenario.problems.ScenarioError` listing every
problem of a file, :func:`validate_file` returns the problems instead, and
:func:`read_tasks` gives both the tasks that parsed and the problems.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hasbench.paths import resolve
from hasbench.scenario.checks import check_scenario
from hasbench.scenario.problems import Problem, ScenarioError, describe_errors, type_name
from hasbench.scenario.schema import Scenario


class _DuplicateKeyCheck:
    """Constructor mix-in that rejects duplicate mapping keys (YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        keys = [key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode)]
        for index, (key_node, _) in enumerate(node.value):
            if isinstance(key_node, yaml.ScalarNode) and key_node.value in keys[:index]:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


class _TaskLoader(_DuplicateKeyCheck, yaml.SafeLoader):
    """Safe YAML loader that rejects duplicate keys and keeps dates as strings."""


class _FastTaskLoader(_DuplicateKeyCheck, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The same loader on libyaml's parser when available (about 30x faster)."""


_IMPLICIT_RESOLVERS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_TaskLoader.yaml_implicit_resolvers = _IMPLICIT_RESOLVERS
_FastTaskLoader.yaml_implicit_resolvers = _IMPLICIT_RESOLVERS


def _at(mark: yaml.Mark | None) -> str:
    """`` at line L, column C`` (1-based) for a YAML mark, or nothing."""
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def _read_yaml(path: Path) -> tuple[Any, Problem | None]:
    """Parse a YAML file; return (data, None) or (None, the problem)."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, Problem(file, None, None, f"cannot read file: {reason}")
    try:
        return yaml.load(text, Loader=_FastTaskLoader), None
    except yaml.YAMLError:
        pass  # parse again with the pure-Python parser: its messages don't vary by install
    try:
        return yaml.load(text, Loader=_TaskLoader), None
    except yaml.MarkedYAMLError as exc:
        message = f"invalid YAML{_at(exc.problem_mark)}: {exc.problem or 'malformed YAML'}"
        if exc.context:
            message += f" ({exc.context}{_at(exc.context_mark)})"
        return None, Problem(file, None, None, message)
    except yaml.YAMLError as exc:
        return None, Problem(file, None, None, f"invalid YAML: {exc}")


def _task_label(raw: Any, index: int) -> str:
    """The task id to show in problems: the raw id if it is a scalar, else ``tasks[i]``."""
    if isinstance(raw, dict):
        task_id = raw.get("task_id")
        if isinstance(task_id, str | int) and not isinstance(task_id, bool) and str(task_id):
            return str(task_id)
    return f"tasks[{index}]"


def read_tasks(path: str | Path) -> tuple[list[Scenario], list[Problem]]:
    """Parse, validate and check every task of a file.

    Returns:
        The tasks that parsed (in file order) and every problem found; a task with a
        schema error is left out, and its cross-field checks are not run.
    """
    file = str(path)
    path = resolve(path)
    data, problem = _read_yaml(path)
    if problem is not None:
        return [], [problem]
    if not isinstance(data, list):
        got = "an empty file" if data is None else type_name(data)
        return [], [Problem(file, None, None, f"expected a YAML list of tasks, got {got}")]
    scenarios: list[Scenario] = []
    problems: list[Problem] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(data):
        label = _task_label(raw, index)
        if not isinstance(raw, dict):
            message = f"expected a mapping (one task), got {type_name(raw)}"
            problems.append(Problem(file, label, None, message))
            continue
        if label in first_index:
            message = f"duplicate task id (first defined at tasks[{first_index[label]}])"
            problems.append(Problem(file, label, "task_id", message))
        first_index.setdefault(label, index)
        try:
            scenario = Scenario.model_validate(raw)
        except ValidationError as exc:
            problems.extend(Problem(file, label, p, m) for p, m in describe_errors(exc, Scenario))
            continue
        scenarios.append(scenario)
        problems.extend(replace(p, file=file, task_id=label) for p in check_scenario(scenario))
    return scenarios, problems


def load_tasks(path: str | Path) -> list[Scenario]:
    """Load and check a task file.

    Args:
        path: A YAML file holding a list of tasks.

    Returns:
        The scenarios in file order.

    Raises:
        ScenarioError: If the file has any problem; ``.problems`` lists them all.
    """
    scenarios, problems = read_tasks(path)
    if problems:
        raise ScenarioError(problems)
    return scenarios


def load_task(path: str | Path, task_id: str) -> Scenario:
    """Load one task of a task file by its id.

    Raises:
        ScenarioError: the file has a problem.
        KeyError: the file has no such task (the message lists the ids it has).
    """
    tasks = {task.task_id: task for task in load_tasks(path)}
    if task_id not in tasks:
        raise KeyError(f"{path}: no task {task_id!r} (tasks: {', '.join(sorted(tasks))})")
    return tasks[task_id]


def validate_file(path: str | Path) -> list[Problem]:
    """Every problem of a task file (empty if the file is valid)."""
    return read_tasks(path)[1]
