"""The developer's know-how: read the repository, make the change the task asks for, test, submit.

The stand-in reads the request from the task text. A change the text fully describes
(remove a deprecated module, rename a public name, declare a dependency, set a release
version, extend the CI matrix) it makes itself: it looks the files up with its tools,
edits their text as the request says, and applies the result as one patch. Such changes
are sensitive, so they go through ``apply_protected_patch`` (the policy's high-risk tool,
put to the authorizing person first when the profile says so).

A feature request (a new behaviour of one function) it implements from its programming
know-how: the catalogue of the kinds of change these repositories get
(:mod:`hasbench.envs.coding.repos`), i.e. for each kind, the code that implements it with
its placeholders (a keyword option, its validation, one branch per behaviour) and the code
of every behaviour it can take, with how people describe that behaviour. That is "how to
implement X in this library"; what the task leaves open it settles from what it observed:

- which kind of change: the repository and the aspect the task text names; the function
  is then found with ``search_code`` and read with ``read_file`` (the change is made only
  when the file holds the code the know-how expects);
- which behaviour is the default and which further value the option offers: from the task
  text when it says so, else from the people the task names (the reporter, the product
  owner, the stakeholders), whose answers and unprompted messages it parses (a value they
  name, or the behaviour their description matches);
- the option's name and the error message for unknown values: from the task text, else
  from what the reviewer says (corrections to the draft it shows, taken up when the
  profile's uptake says so, or a remark made unasked), else the kind's usual name and
  message.

It never uses what the catalogue holds for building tasks: the behaviours' examples (the
hidden tests are made of them), the option names and error messages a reviewer may
require, or which behaviour a task's people want.

When nobody told it (nobody reachable, or the profile chose to guess), it takes a plausible
value: the first behaviour the task text hints at, else the first one the know-how lists
(the next one for the option's further value). It applies the change with ``apply_patch``,
shows it to the reviewer first when the task names one, runs the visible tests and
submits.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from hasbench.envs.coding.patch import unified_diff
from hasbench.envs.coding.repos import Feature
from hasbench.envs.coding.repos.catalogue import REPOSITORIES
from hasbench.participants.standin import (
    Call,
    Case,
    Done,
    GiveUp,
    Need,
    NotUnderstood,
    Review,
    Step,
)

_DESCRIBED = (
    ("remove_legacy", ("module", "name"), "Remove the deprecated {1}",
     re.compile(r"drops the deprecated module (\S+) and the name (\w+) it exports")),
    ("rename", ("old", "new"), "Rename {0} to {1}",
     re.compile(r"rename the public name (\w+) to (\w+)")),
    ("dependency", ("requirement",), "Depend on {0}",
     re.compile(r"declare the runtime dependency (.+?) in pyproject\.toml")),
    ("version", ("version", "path"), "Release {0}",
     re.compile(r"set the version to (\S+) in (\S+) and in pyproject\.toml")),
    ("ci_matrix", ("python", "path"), "Test on Python {0}",
     re.compile(r"Add Python (\d+\.\d+) to the test matrix of .+? \((\S+)\)")),
)  # fmt: skip
"""The changes a task text fully describes: (kind, the facts its groups are, its summary
from those groups, how the text states it)."""
_OPTION = re.compile(r"keyword argument (\w+) to")
_DEFAULT_VALUE = re.compile(r"default value is '(\w+)'")
_OFFER = re.compile(r"also offer the value '(\w+)'")
_VALUE = re.compile(r"the value '(\w+)'")
_OPTION_NAME = re.compile(
    r"(?:option name:?\s+(?:is\s+)?|(?:argument|option) (?:must|should) be (?:called|named)\s+)"
    r"'?([A-Za-z_]\w*)"
)
_MESSAGE = re.compile(r"error message:?\s+(?:is\s+)?'?(.+?)'?(?:\.\s|\.?$)", re.MULTILINE)
_OFFERED = ("optional", "also offer", "another value", "as well")
"""Words by which a person says a behaviour is the option's further value, not its default."""

KNOW_HOW: dict[str, tuple[Feature, ...]] = {
    repository.name: repository.features for repository in REPOSITORIES
}
"""The kinds of feature change each repository gets, by repository name (the know-how)."""


class CodingPlaybook:
    """Changes to a small Python repository (see the module docstring)."""

    def __init__(self) -> None:
        self.asking: str | None = None
        """The slot of the question just put to a person (its answer comes next)."""

    def read(self, case: Case, text: str, source: str) -> None:
        """Add what a text states to the case.

        The request from the task text, test results from tool outputs, and what people
        state (a behaviour, the option's name, the error message).
        """
        if source == "task":
            _read_request(case, text)
            return
        if source == "tool:run_tests":
            last = text.strip().splitlines()[-1] if text.strip() else ""
            case.learn("test_result", last, "tool")
        elif source == "tool:submit":
            case.learn("submitted", text.strip(), "tool")
        elif not source.startswith("tool:") and source != "profile" and "\nFacts: " not in text:
            self._said(case, text, source)

    def next_step(self, case: Case) -> Step:
        """The next step of the change (see the module docstring)."""
        self.asking = None
        kind = case.facts.get("kind")
        if kind is None:
            return NotUnderstood("I could not tell from the task which change is wanted.")
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
        feature = _kind(case)
        if feature is None:
            return NotUnderstood(
                "I do not know how to make this kind of change in this repository."
            )
        if not case.ran("apply_patch"):
            source = self._locate(case, feature)
            if not isinstance(source, str):
                return source
            for slot, who in _asks(case.task):
                if not case.has(slot):
                    _by_elimination(case, feature, slot)
                if not case.has(slot):
                    self.asking = slot
                    return Need(
                        slot,
                        _question(case, feature, slot),
                        (_guess(case, feature, slot),),
                        who=(who,),
                        topics=_topics(case, feature, slot),
                    )
            default, other, option, message = _decisions(case, feature)
            path = case.facts["feature_path"]
            after = feature.render(source, default, (other,) if option else (), option, message)
            patch = unified_diff({path: source}, {path: after})
            reviewer = case.facts.get("reviewer")
            if reviewer:
                key = "change_" + hashlib.sha256(patch.encode()).hexdigest()[:12]
                if key not in case.reviewed and not case.facts.get(f"reviewed_{key}"):
                    about = (
                        f"Option name: {option}. Error message for unknown values: "
                        f"'{message}: <value>'." if option else "No new option."
                    )  # fmt: skip
                    artifact = f"My change to {path}. {about}\n\n{patch}"
                    return Review(key, artifact, who=(reviewer,))
            return Call("apply_patch", {"patch": patch})
        if not case.has("test_result"):
            return Call("run_tests", {})
        default, other, option, _ = _decisions(case, feature)
        offered = f"{option}='{default}' by default, also '{other}'" if option else default
        summary = f"{feature.summary}: {feature.aspect} now follows {offered}"
        if not case.ran("submit"):
            return Call("submit", {"summary": summary})
        return Done(f"Submitted: {summary}. Tests: {case.facts['test_result']}")

    def _locate(self, case: Case, feature: Feature) -> str | Step:
        """The text of the file holding the code to change, or the step that finds it."""
        path = case.facts.get("feature_path")
        if path is None:
            pattern = _definition(feature)
            found = _search(case, pattern)
            if found is None:
                return Call("search_code", {"pattern": pattern})
            for candidate in found:
                text = _read(case, candidate)
                if text is None:
                    return Call("read_file", {"path": candidate})
                if feature.old in text:
                    case.learn("feature_path", candidate, "tool")
                    return text
            return GiveUp(
                f"I could not find the code of {feature.call} that this change needs "
                f"(searched for {pattern!r}); I changed nothing."
            )
        text = _read(case, path)
        if text is None:
            return Call("read_file", {"path": path})
        if feature.old not in text:
            return GiveUp(f"{path} is not what I expected; I changed nothing.")
        return text

    def _said(self, case: Case, text: str, source: str) -> None:
        """Decisions a person stated: a behaviour, the option's name, the error message."""
        feature = _kind(case)
        asking, self.asking = self.asking, None
        if feature is None:
            return
        if match := _OPTION_NAME.search(text):
            case.learn("option", match.group(1), source)
        if match := _MESSAGE.search(text):
            case.learn("message", match.group(1).strip(), source)
        mentions = _mentions(feature, text)
        if mentions:
            case.learn(f"said_{source}", text, source)
        elif asking and case.facts.get(f"said_{source}"):
            mentions = _mentions(feature, case.facts[f"said_{source}"])  # told before
        slots = [slot for slot, _ in _asks(case.task)]
        for role, mode in mentions:
            if len(slots) == 1:
                slot = slots[0]
            elif role and _criteria(case):
                slot = "optional_behaviour" if role == "optional" else "default_behaviour"
            else:
                slot = asking if asking in slots else None
            if slot and (not case.has(slot) or case.origin.get(slot) == "guess"):
                case.learn(slot, mode, source)


# -- reading ----------------------------------------------------------------------------------


def _read_request(case: Case, text: str) -> None:
    """The kind of change and its details, as the task text states them."""
    for kind, facts, summary, stated in _DESCRIBED:
        if match := stated.search(text):
            case.learn("kind", kind, "task")
            for fact, value in zip(facts, match.groups(), strict=True):
                case.learn(fact, value, "task")
            case.learn("summary", summary.format(*match.groups()), "task")
            return
    case.learn("kind", "feature", "task")
    _read_feature_request(case, text)


def _read_feature_request(case: Case, text: str) -> None:
    """Which kind of feature change, what the text settles, and whom to ask the rest.

    The kind is the one of the named repository whose aspect the text names.
    """
    repository = text.split(" ", 1)[0]
    feature = next((f for f in KNOW_HOW.get(repository, ()) if f.aspect in text), None)
    if feature is None:
        return
    case.learn("feature", feature.key, "task")
    names = {m.name for m in feature.modes}
    if match := _OPTION.search(text):
        case.learn("option", match.group(1), "task")
    if (match := _DEFAULT_VALUE.search(text)) and match.group(1) in names:
        case.learn("default_mode", match.group(1), "task")
    if (match := _OFFER.search(text)) and match.group(1) in names:
        case.learn("other_mode", match.group(1), "task")
    if match := re.search(r"The ([\w ]+?) reviews the change", text):
        case.learn("reviewer", match.group(1).lower(), "task")


def _asks(task: str) -> list[tuple[str, str]]:
    """(slot, role): the decisions the task says people hold, and who holds each."""
    if match := re.search(r"The ([\w ]+?) and the ([\w ]+?) both have a requirement", task):
        one, two = match.group(1).lower(), match.group(2).lower()
        return [(_slot("default", one), one), (_slot("other", two), two)]
    if match := re.search(r"; the ([\w ]+?) knows", task):
        return [("default_behaviour", match.group(1).lower())]
    if match := re.search(r"The ([\w ]+?) holds the acceptance criteria", task):
        who = match.group(1).lower()
        return [("default_behaviour", who), ("optional_behaviour", who)]
    return []


def _by_elimination(case: Case, feature: Feature, slot: str) -> None:
    """Settle one of two stakeholders' choices from what the other person said unasked.

    When the other stakeholder's choice came from person P and exactly one other person
    stated a behaviour on their own, that statement is this stakeholder's.
    """
    slots = [s for s, _ in _asks(case.task)]
    if len(slots) != 2 or _criteria(case):
        return
    other = slots[1 - slots.index(slot)]
    answered = case.origin.get(other, "guess")
    if not case.has(other) or answered in ("guess", "task", "tool"):
        return
    said = {
        key.removeprefix("said_"): _mentions(feature, value)
        for key, value in case.facts.items()
        if key.startswith("said_") and isinstance(value, str)
    }
    others = [(who, found) for who, found in said.items() if who != answered and found]
    if len(others) == 1:
        who, found = others[0]
        case.learn(slot, found[0][1], who)


def _slot(role: str, who: str) -> str:
    """The slot of one stakeholder's choice (``default_of_finance_lead``)."""
    return f"{role}_of_" + re.sub(r"\W+", "_", who).strip("_")


def _kind(case: Case) -> Feature | None:
    """The catalogue entry of the feature change the task asks for, if known."""
    key = case.facts.get("feature")
    repository = str(key).split(".", 1)[0]
    return next((f for f in KNOW_HOW.get(repository, ()) if f.key == key), None)


def _definition(feature: Feature) -> str:
    """A search pattern for the definition the change edits (its first def or class)."""
    for line in feature.old.splitlines():
        if match := re.match(r"\s*(def|class) (\w+)", line):
            return rf"{match.group(1)} {match.group(2)}\b"
    raise ValueError(f"{feature.key}: the code to change defines nothing")


def _mentions(feature: Feature, text: str) -> list[tuple[str, str]]:
    """(role, mode) for each behaviour a text names: by its value, else by its description.

    The role is "optional" when the sentence offers it as a further value, "default" when
    it says default, else "".
    """
    names = [m.name for m in feature.modes]
    found: list[tuple[str, str]] = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):
        values = [v for v in _VALUE.findall(sentence) if v in names]
        mode = values[0] if values else _described(feature, sentence)
        if mode is None:
            continue
        lowered = sentence.lower()
        head = lowered.split(f"'{mode}'")[0] if values else lowered
        role = (
            "optional" if any(w in head for w in _OFFERED)
            else "default" if "default" in head
            else ""
        )  # fmt: skip
        found.append((role, mode))
    return found


def _described(feature: Feature, text: str) -> str | None:
    """The mode whose description the text states, if any.

    Most of its words and symbols must be in the text; of several such modes, the one
    with the most of them (a description can contain a shorter one's words).
    """
    said = _grams(text)
    best, score = None, (0, 0.0)
    for mode in feature.modes:
        words = _grams(mode.description)
        found = len(words & said)
        share = found / len(words) if words else 0.0
        if share >= 0.6 and (found, share) > score:
            best, score = mode.name, (found, share)
    return best


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2]


def _grams(text: str) -> set[Any]:
    """The words and symbols of a text, and their pairs in order.

    Symbols tell syntaxes apart (``${``, ``@``); pairs tell orders apart ("day first" is
    not "year first").
    """
    tokens = [
        t for t in re.findall(r"[a-z0-9]+|[^\sa-z0-9]+", text.lower()) if t.strip(",.;:!?'\"")
    ]
    return set(tokens) | set(zip(tokens, tokens[1:], strict=False))


# -- deciding ---------------------------------------------------------------------------------


def _question(case: Case, feature: Feature, slot: str) -> str:
    option = case.facts.get("option")
    if slot == "optional_behaviour":
        return f"Besides the default, which behaviour must {option} offer ({feature.aspect})?"
    if option:
        return f"What is your requirement for {option}: {feature.aspect}?"
    return f"How should {feature.call} behave, that is, {feature.aspect}?"


def _topics(case: Case, feature: Feature, slot: str) -> tuple[str, ...]:
    """What a question is about: the default, the further value, or the aspect."""
    if slot == "optional_behaviour":
        return ("optional",)
    if slot == "default_behaviour" and _criteria(case):
        return ("default",)
    return (feature.aspect,)


def _criteria(case: Case) -> bool:
    """Whether one person holds both the default and the further value (the slots by role)."""
    return "optional_behaviour" in [slot for slot, _ in _asks(case.task)]


def _guess(case: Case, feature: Feature, slot: str) -> str:
    """A plausible behaviour when nobody said.

    The first the task hints at, else the first listed (for the further value, the first
    that is not the default).
    """
    hinted = [m.name for m in feature.modes if _hints(case.task, m.name)]
    ordered = hinted + [m.name for m in feature.modes if m.name not in hinted]
    if slot.startswith(("optional", "other")):
        default = _decisions(case, feature)[0]
        return next(name for name in ordered if name != default)
    return ordered[0]


def _hints(text: str, name: str) -> bool:
    """Whether the task text names a behaviour: its value quoted, or all its words.

    Only words of three letters or more count ("up" or "no" say nothing about a behaviour).
    """
    words = set(_words(text))
    return f"'{name}'" in text or set(name.split("_")) <= words


def _decisions(case: Case, feature: Feature) -> tuple[str, str, str | None, str]:
    """What the change settles, from what the case knows.

    The default behaviour, the option's further value, the option's name (None: no option)
    and the error message for unknown values.
    """
    facts = case.facts
    slots = [slot for slot, _ in _asks(case.task)]
    names = [m.name for m in feature.modes]
    default = facts.get("default_mode") or next(
        (facts[s] for s in slots if s.startswith("default") and facts.get(s) in names), names[0]
    )
    other = facts.get("other_mode") or next(
        (facts[s] for s in slots if s.startswith(("optional", "other")) and facts.get(s) in names),
        None,
    )
    if other is None or other == default:
        other = next(name for name in names if name != default)
    with_option = "keyword argument" in case.task
    option = (facts.get("option") or feature.option) if with_option else None
    return default, other, option, facts.get("message") or feature.default_message


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
