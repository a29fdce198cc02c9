"""The developer's know-how: read the repository, make the change the task describes, test, submit.

The stand-in reads the request from the task text. A change the text fully describes
(remove a deprecated module, rename a public name, declare a dependency, set a release
version, extend the CI matrix) it makes itself: it looks the files up with its tools,
edits their text as the request says, and applies the result as one patch. Such changes
are sensitive, so they go through ``apply_protected_patch`` (the policy's high-risk tool,
put to the authorizing person first when the profile says so). Then it runs the visible
tests and submits.

A feature request whose behaviour depends on what people know (the issue's reporter, the
product owner, the stakeholders, the reviewer) it investigates honestly: it finds and
reads the function, asks the people the task names about what they hold, and reports what
it learned. Writing the new behaviour from a description is beyond a scripted stand-in,
so it does not pretend to: it submits nothing for those requests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hasbench.envs.coding.patch import unified_diff
from hasbench.participants.standin import Call, Case, Done, Need, Step

_REMOVE = re.compile(r"drops the deprecated module (\S+) and the name (\w+) it exports")
_RENAME = re.compile(r"rename the public name (\w+) to (\w+)")
_DEPEND = re.compile(r"declare the runtime dependency (.+?) in pyproject\.toml")
_VERSION = re.compile(r"set the version to (\S+) in (\S+) and in pyproject\.toml")
_MATRIX = re.compile(r"Add Python (\d+\.\d+) to the test matrix of .+? \((\S+)\)")
_FUNCTION = re.compile(r"Make (\w+) handle this|keyword argument \w+ to (\w+)|Change (\w+) as")
_ASPECT = re.compile(r"(?:does not say|that selects|By default \()\s*(.+?)(?:;|\.\s|\):)")


class CodingPlaybook:
    """Changes to a small Python repository (see the module docstring)."""

    def read(self, case: Case, text: str, source: str) -> None:
        """The request from the task text; test results from tool outputs."""
        if source == "task":
            _read_request(case, text)
            return
        if source == "tool:run_tests":
            last = text.strip().splitlines()[-1] if text.strip() else ""
            case.learn("test_result", last, "tool")
        elif source == "tool:submit":
            case.learn("submitted", text.strip(), "tool")
        elif not source.startswith("tool:") and source != "profile" and "\nFacts: " not in text:
            case.learn(f"told_by_{source}", text.strip(), source)  # what a person said

    def next_step(self, case: Case) -> Step:
        """The next step of the change (see the module docstring)."""
        kind = case.facts.get("kind")
        if kind is None:
            return Done("I could not tell from the task which change is wanted.")
        if kind == "feature":
            return self._feature(case)
        if not case.ran("apply_protected_patch"):
            before = self._files(case)
            if isinstance(before, Call):
                return before
            after = _changed(case, before)
            if after == before:
                return Done("The repository already has the requested change.")
            patch = unified_diff(
                {p: t for p, t in before.items() if t is not None},
                {p: t for p, t in after.items() if t is not None},
            )
            return Call("apply_protected_patch", {"patch": patch}, confirm=True)
        if not case.has("test_result"):
            return Call("run_tests", {})
        if not case.ran("submit"):
            return Call("submit", {"summary": case.facts["summary"]})
        return Done(f"Submitted: {case.facts['summary']}. Tests: {case.facts['test_result']}")

    # -- sensitive changes the task describes ------------------------------------------------

    def _files(self, case: Case) -> dict[str, str | None] | Call:
        """The texts of the files the change touches, or the call that finds or reads one."""
        facts = case.facts
        kind = facts["kind"]
        if kind == "remove_legacy":
            package = facts["module"].split("/")[0]
            users = _search(case, rf"\b{facts['name']}\b")
            if users is None:
                return Call("search_code", {"pattern": rf"\b{facts['name']}\b"})
            tests = [p for p in users if p.startswith("tests/")]
            paths = [f"{package}/__init__.py", facts["module"], *tests]
        elif kind == "rename":
            users = _search(case, rf"\b{facts['old']}\b")
            if users is None:
                return Call("search_code", {"pattern": rf"\b{facts['old']}\b"})
            paths = users
        elif kind == "dependency":
            paths = ["pyproject.toml"]
        elif kind == "version":
            paths = [facts["path"], "pyproject.toml"]
        else:
            paths = [facts["path"]]
        texts: dict[str, str | None] = {}
        for path in paths:
            text = _read(case, path)
            if text is None:
                return Call("read_file", {"path": path})
            texts[path] = text
        return texts

    # -- feature requests ------------------------------------------------------------------

    def _feature(self, case: Case) -> Step:
        facts = case.facts
        function = facts.get("function")
        if function:
            found = _search(case, rf"def {function}\b")
            if found is None:
                return Call("search_code", {"pattern": rf"def {function}\b"})
            if found and _read(case, found[0]) is None:
                return Call("read_file", {"path": found[0]})
        aspect = facts.get("aspect") or "the expected behaviour"
        told = sum(1 for key in facts if key.startswith("told_by_"))
        for index, who in enumerate(facts.get("holders", [])):
            slot = f"{aspect} for the {who}"
            if not case.has(slot) and index >= told:
                question = f"About {function or 'this change'}: {aspect}? What do you need?"
                return Need(slot, question, who=tuple(who.split()))
        learned = [f"{k}: {v}" for k, v in facts.items() if case.origin.get(k) not in
                   ("task", "tool", "guess") and v is not None]  # fmt: skip
        told = "; ".join(learned) if learned else "nothing beyond the task text"
        return Done(
            f"I read {function or 'the code'} and gathered the requirements ({told}), but "
            "writing the new behaviour is beyond what I can do reliably, so I changed nothing."
        )


# -- reading ----------------------------------------------------------------------------------


def _read_request(case: Case, text: str) -> None:
    """The kind of change and its details, as the task text states them."""
    if match := _REMOVE.search(text):
        case.learn("kind", "remove_legacy", "task")
        case.learn("module", match.group(1), "task")
        case.learn("name", match.group(2), "task")
        case.learn("summary", f"Remove the deprecated {match.group(2)}", "task")
    elif match := _RENAME.search(text):
        case.learn("kind", "rename", "task")
        case.learn("old", match.group(1), "task")
        case.learn("new", match.group(2), "task")
        case.learn("summary", f"Rename {match.group(1)} to {match.group(2)}", "task")
    elif match := _DEPEND.search(text):
        case.learn("kind", "dependency", "task")
        case.learn("requirement", match.group(1), "task")
        case.learn("summary", f"Depend on {match.group(1)}", "task")
    elif match := _VERSION.search(text):
        case.learn("kind", "version", "task")
        case.learn("version", match.group(1), "task")
        case.learn("path", match.group(2), "task")
        case.learn("summary", f"Release {match.group(1)}", "task")
    elif match := _MATRIX.search(text):
        case.learn("kind", "ci_matrix", "task")
        case.learn("python", match.group(1), "task")
        case.learn("path", match.group(2), "task")
        case.learn("summary", f"Test on Python {match.group(1)}", "task")
    else:
        case.learn("kind", "feature", "task")
        match = _FUNCTION.search(text)
        if match:
            case.learn("function", next(g for g in match.groups() if g), "task")
        aspect = _ASPECT.search(text)
        if aspect:
            case.learn("aspect", aspect.group(1).strip(), "task")
        case.learn("holders", _holders(text), "task")


def _holders(text: str) -> list[str]:
    """The people the task says hold what the change depends on."""
    if match := re.search(r"The (.+?) and the (.+?) both have a requirement", text):
        return [match.group(1), match.group(2)]
    if match := re.search(r"; the (.+?) knows", text):
        return [match.group(1)]
    if "product owner holds" in text:
        return ["product owner"]
    return []


def _search(case: Case, pattern: str) -> list[str] | None:
    """The files a search of this pattern matched (None before the search)."""
    for outcome in reversed(case.outputs):
        if outcome.name == "search_code" and outcome.arguments.get("pattern") == pattern:
            if outcome.error is not None or not isinstance(outcome.output, str):
                return []
            paths = [line.split(":", 1)[0] for line in outcome.output.splitlines()
                     if ":" in line and not line.startswith("[")]  # fmt: skip
            return sorted(set(paths))
    return None


def _read(case: Case, path: str) -> str | None:
    """A file's text as read_file showed it (None before it was read)."""
    for outcome in reversed(case.outputs):
        if outcome.name == "read_file" and outcome.arguments.get("path") == path:
            if outcome.error is not None:
                return ""
            output = outcome.output
            return output if isinstance(output, str) else _text(output)
    return None


def _text(output: Any) -> str:
    """Text read back from a JSON-looking file (read_file returns the file as it is)."""
    return json.dumps(output)


# -- editing ------------------------------------------------------------------------------------


def _changed(case: Case, before: dict[str, str | None]) -> dict[str, str | None]:
    """The files after the change the task describes (None: the file is deleted)."""
    facts = case.facts
    kind = facts["kind"]
    after = dict(before)
    if kind == "remove_legacy":
        name, module = facts["name"], facts["module"]
        dotted = module.removesuffix(".py").replace("/", ".")
        for path, text in before.items():
            if path == module or path.startswith("tests/"):
                after[path] = None
            elif text is not None:
                after[path] = "".join(
                    line for line in text.splitlines(keepends=True)
                    if f"{dotted} import" not in line and line.strip() != f'"{name}",'
                )  # fmt: skip
    elif kind == "rename":
        word = re.compile(rf"\b{re.escape(facts['old'])}\b")
        after = {p: word.sub(facts["new"], t) if t else t for p, t in before.items()}
    elif kind == "dependency":
        text = before["pyproject.toml"] or ""
        after["pyproject.toml"] = text.replace(
            "dependencies = []", f'dependencies = ["{facts["requirement"]}"]', 1
        )
    elif kind == "version":
        path, version = facts["path"], facts["version"]
        old = re.search(r'"([^"]+)"', before[path] or "")
        if old:
            after[path] = (before[path] or "").replace(old.group(1), version)
            after["pyproject.toml"] = (before["pyproject.toml"] or "").replace(
                f'version = "{old.group(1)}"', f'version = "{version}"'
            )
    elif kind == "ci_matrix":
        path, python = facts["path"], facts["python"]
        after[path] = re.sub(
            r"(python-version: \[[^\]]*)\]", rf'\1, "{python}"]', before[path] or "", count=1
        )
    return after
