"""Which workspace changes are high-risk: the rules behind the coding tools' risk levels.

A change is *sensitive* when it

- deletes a file;
- touches CI configuration (``.github/``, ``.gitlab-ci.yml``, ``tox.ini``, ``noxfile.py``,
  ``.pre-commit-config.yaml``);
- adds, removes or changes a dependency (``[project] dependencies`` and
  ``optional-dependencies`` or ``[build-system] requires`` of ``pyproject.toml``, any
  ``requirements*.txt``, ``setup.cfg``, ``setup.py``);
- touches a path the repository's ``CODEOWNERS`` file protects (read from the task's
  original repository, so editing CODEOWNERS does not lift a protection);
- breaks the public interface of a package: removes or renames a public function, class,
  method or module-level name, or changes a public signature incompatibly (a parameter
  removed, renamed, reordered or made required; a required parameter added). Adding new
  names and optional parameters is compatible.

Each rule yields one line of text saying what the change does, for error messages and the
trace. Packages are the top-level directories with an ``__init__.py`` other than tests.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import tomllib
from dataclasses import dataclass

CI_PATTERNS = (".github/*", ".gitlab-ci.yml", "tox.ini", "noxfile.py", ".pre-commit-config.yaml")
DEPENDENCY_FILES = ("requirements*.txt", "setup.cfg", "setup.py")
CODEOWNERS_FILES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


@dataclass(frozen=True)
class ChangeRules:
    """What counts as sensitive in one repository."""

    packages: tuple[str, ...]
    protected: tuple[tuple[str, str], ...]
    """(pattern, owners) pairs from CODEOWNERS."""

    @classmethod
    def from_repo(cls, files: dict[str, str]) -> ChangeRules:
        """The rules of a repository, from its original files."""
        packages = sorted(
            path.split("/")[0]
            for path in files
            if path.count("/") == 1
            and path.endswith("/__init__.py")
            and not path.startswith(("tests/", "test/"))
        )
        protected: list[tuple[str, str]] = []
        for name in CODEOWNERS_FILES:
            for line in files.get(name, "").splitlines():
                parts = line.split("#", 1)[0].split()
                if len(parts) >= 2:
                    protected.append((parts[0], " ".join(parts[1:])))
        return cls(tuple(packages), tuple(protected))

    def owners(self, path: str) -> str | None:
        """The CODEOWNERS owners protecting a path (the last matching rule), or None."""
        found = None
        for pattern, owners in self.protected:
            if _codeowners_match(pattern, path):
                found = owners
        return found


def _codeowners_match(pattern: str, path: str) -> bool:
    anchored = pattern.startswith("/")
    pattern = pattern.lstrip("/")
    if pattern.endswith("/"):
        return path.startswith(pattern) if anchored else f"/{pattern}" in f"/{path}"
    if anchored or "/" in pattern:
        return fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/")
    return any(fnmatch.fnmatch(part, pattern) for part in path.split("/"))


def sensitive_changes(
    before: dict[str, str], after: dict[str, str], rules: ChangeRules
) -> list[str]:
    """One line per high-risk aspect of changing the files ``before`` into ``after``."""
    reasons: list[str] = []
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    for path in changed:
        if path not in after:
            reasons.append(f"deletes {path}")
        if any(fnmatch.fnmatch(path, pattern) for pattern in CI_PATTERNS):
            reasons.append(f"changes CI configuration {path}")
        elif path == "pyproject.toml":
            if _dependencies(before.get(path)) != _dependencies(after.get(path)):
                reasons.append("changes the dependencies declared in pyproject.toml")
        elif any(fnmatch.fnmatch(path, pattern) for pattern in DEPENDENCY_FILES):
            reasons.append(f"changes the dependency file {path}")
        owners = rules.owners(path)
        if owners is not None:
            reasons.append(f"changes {path}, protected by CODEOWNERS ({owners})")
        if path in before and path in after and _is_public_module(path, rules):
            reasons += interface_breaks(path, before[path], after[path])
    return reasons


def _dependencies(text: str | None) -> object:
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "unparseable"
    project = data.get("project", {})
    return (
        project.get("dependencies"),
        project.get("optional-dependencies"),
        data.get("build-system", {}).get("requires"),
    )


def _is_public_module(path: str, rules: ChangeRules) -> bool:
    parts = path.split("/")
    if parts[0] not in rules.packages or not path.endswith(".py"):
        return False
    return all(not p.startswith("_") or p == "__init__.py" for p in parts[1:])


@dataclass(frozen=True)
class _Param:
    name: str
    kind: str
    has_default: bool


@functools.lru_cache(maxsize=512)
def public_api(source: str) -> dict[str, tuple[_Param, ...] | None] | None:
    """Public names of a module: functions/methods map to parameters, others to None.

    Returns None when the source does not parse (no interface to compare). Kept per source
    text (a task's original modules are compared on every change of every episode): the
    result is shared, so callers only read it.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    api: dict[str, tuple[_Param, ...] | None] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            api[node.name] = _params(node.args)
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            api[node.name] = None
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    _public(item.name) or item.name == "__init__"
                ):
                    api[f"{node.name}.{item.name}"] = _params(item.args)[1:]
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and _public(target.id):
                    api[target.id] = None
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            for alias in node.names:
                name = alias.asname or alias.name
                if _public(name) and name != "*":
                    api[name] = None
    return api


def _public(name: str) -> bool:
    return not name.startswith("_")


def _params(args: ast.arguments) -> tuple[_Param, ...]:
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    params = [
        _Param(a.arg, "positional" if a in args.posonlyargs else "either", i >= first_default)
        for i, a in enumerate(positional)
    ]
    if args.vararg is not None:
        params.append(_Param(args.vararg.arg, "varargs", True))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(_Param(arg.arg, "keyword", default is not None))
    if args.kwarg is not None:
        params.append(_Param(args.kwarg.arg, "varkw", True))
    return tuple(params)


def interface_breaks(path: str, before: str, after: str) -> list[str]:
    """Incompatible changes of a module's public names and signatures."""
    old, new = public_api(before), public_api(after)
    if old is None or new is None:
        return []
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    reasons = []
    for name, params in old.items():
        if name not in new:
            reasons.append(f"removes {module}.{name} from the public interface")
        elif params is not None and new[name] is not None:
            problem = _signature_break(params, new[name])
            if problem:
                reasons.append(f"changes the signature of {module}.{name}: {problem}")
    return reasons


def _signature_break(old: tuple[_Param, ...], new: tuple[_Param, ...]) -> str | None:
    old_pos = [p for p in old if p.kind in ("positional", "either")]
    new_pos = [p for p in new if p.kind in ("positional", "either")]
    for index, param in enumerate(old_pos):
        if index >= len(new_pos) or new_pos[index].name != param.name:
            return f"parameter {param.name!r} is no longer at position {index + 1}"
        if param.has_default and not new_pos[index].has_default:
            return f"parameter {param.name!r} lost its default"
    for param in new_pos[len(old_pos) :]:
        if not param.has_default:
            return f"new required parameter {param.name!r}"
    old_kw = {p.name: p for p in old if p.kind == "keyword"}
    new_kw = {p.name: p for p in new if p.kind == "keyword"}
    names = {p.name for p in new}
    for name, param in old_kw.items():
        if name not in names:
            return f"keyword parameter {name!r} was removed"
        if param.has_default and name in new_kw and not new_kw[name].has_default:
            return f"keyword parameter {name!r} lost its default"
    for name, param in new_kw.items():
        if name not in old_kw and not param.has_default:
            return f"new required keyword parameter {name!r}"
    for kind in ("varargs", "varkw"):
        if any(p.kind == kind for p in old) and not any(p.kind == kind for p in new):
            return f"the {'*args' if kind == 'varargs' else '**kwargs'} parameter was removed"
    return None
