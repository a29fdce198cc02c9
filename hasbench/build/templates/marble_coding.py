"""Pattern templates for MultiAgentBench coding records (the Coding domain).

The base task is the converted record (:mod:`hasbench.build.marble_coding`): the team
writes a program from scratch into ``solution.py`` in an empty workspace, with the coding
tools, and the LLM judge scores the final code against one NL assertion per bullet of the
record's "Implementation requirements" (MultiAgentBench ships no tests, so every task
stays ``judge_scored``). Each template keeps that goal, the empty workspace, the tools and
every assertion; it moves parts of the requirement text to people, whose assertions are
reworded to name where the part came from:

- A (private facts): some requirement bullets (a third, never the first) are left out of
  the task text and held by the requester, who gives them when asked.
- B (latent criteria): the detail sentences of up to two bullets (what a module must
  include, beyond its first sentence; build-order notes stay in the text) become the
  requester's acceptance criteria, given when asked or at review.
- C (authorization): where the record names a third-party Python package, the team
  declares it in ``requirements.txt``; the coding environment refuses a dependency change
  through the ordinary tools, so it goes through ``apply_protected_patch`` (high risk),
  approved by a maintainer. A record naming no such package is declined.
- D (stakeholders): an end-user representative holds some bullets (as in A) and wants one
  detail of a stated bullet left out; the task's rule says the requester's written
  requirements win, and the requester's decision keeps the detail.
- E (verification): review rounds ask for the details of the last two bullets with
  details (as in B): the requester reviews for one, a code reviewer for the other (with one
  such bullet, the requester alone reviews); MultiAgentBench's own process is create,
  revise, optimize.
- F (goal revision): the last bullet arrives as the requester's revision at turn 2-4.

The gold path is one read of the workspace (``list_files``) that depends on every hidden
part: it is the oracle's plan for the checks, which for judge-scored tasks ask whether the
hidden parts reach the team with its humans and stay away without them
(:mod:`hasbench.build.checks`); it is not scored (the reward basis is the judge's, plus the
requirements file's assertion in C). Every person who holds a part also offers it
unprompted at a fixed turn (``spontaneous_config``, A4 runs).
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.build.adaptation import AdaptContext, Declined, template
from hasbench.build.base_tasks import BaseTask
from hasbench.build.builder import env_assertion
from hasbench.build.marble_coding import convert, requirements
from hasbench.build.templates.people import (
    adds_requirement,
    converted,
    gather,
    holds,
    offers,
    person,
    persona,
)

REQUESTER = "user_0"
ORDER = re.compile(
    r"\b(before|after|prior to|final step|first step|once the|in place|is functional)\b",
    re.IGNORECASE,
)
"""A detail sentence that only orders the work (kept in the task text)."""
PACKAGES = {
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "pygame": "pygame",
    "numpy": "numpy", "pandas": "pandas", "sqlalchemy": "SQLAlchemy", "matplotlib": "matplotlib",
    "scikit-learn": "scikit-learn", "pyqt5": "PyQt5", "kivy": "Kivy", "websockets": "websockets",
    "tensorflow": "tensorflow", "pytorch": "torch", "opencv": "opencv-python",
}  # fmt: skip
"""Third-party Python packages a record may name (lower-case word -> requirement name)."""


# -- shared helpers ------------------------------------------------------------------------


def _fields(base: BaseTask) -> dict[str, Any]:
    """The converted record's fields (no id, pattern or provenance), ready to change."""
    data = converted(base, convert, "A")
    for key in ("task_id", "source_task_id", "adaptation_pattern"):
        data.pop(key)
    return data


def _bullets(base: BaseTask) -> list[str]:
    return requirements(base.record["task"]["content"])


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _details(bullet: str) -> tuple[str, list[str]]:
    """A bullet as (what stays in the task text, its non-ordering detail sentences)."""
    first, *rest = _sentences(bullet)
    kept = [first, *(s for s in rest if ORDER.search(s))]
    return " ".join(kept), [s for s in rest if not ORDER.search(s)]


def _rewrite(data: dict[str, Any], changes: dict[str, str | None], note: str) -> None:
    """Replace (or drop, for None) requirement bullets in the task text and add a note."""
    lines = []
    for line in data["task"].splitlines():
        text = line.strip()[2:].strip() if line.strip().startswith("- ") else None
        if text in changes:
            if changes[text] is None:
                continue
            line = line[: line.index("- ") + 2] + changes[text]
        lines.append(line)
    data["task"] = "\n".join(lines) + f"\n\n{note}"


def _reword(data: dict[str, Any], bullet: str, assertion: str) -> None:
    """Replace the NL assertion of one bullet."""
    nl = data["evaluation_criteria"]["nl_assertions"]
    nl[[a.endswith(f": {bullet}") for a in nl].index(True)] = assertion


def _lead(data: dict[str, Any]) -> str:
    return data["agents"][0]["agent_id"]


def _requester(data: dict[str, Any], ctx: AdaptContext) -> dict[str, Any]:
    user = data["users"][0]
    user["persona"] = persona("coding", ctx)
    return user


def _hide_bullets(bullets: list[str], ctx: AdaptContext) -> list[int]:
    """Indices of a third of the bullets (at least one, never the first), sorted."""
    if len(bullets) < 2:
        raise Declined("a single requirement: hiding it would leave no task")
    count = max(1, len(bullets) // 3)
    chosen = ctx.rng.choice(range(1, len(bullets)), size=count, replace=False)
    return sorted(int(i) for i in chosen)


def _with_details(bullets: list[str]) -> list[int]:
    return [i for i, b in enumerate(bullets) if _details(b)[1]]


# -- A --------------------------------------------------------------------------------------


@template("coding", "A")
def private_requirements(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """A: some requirement bullets only the requester knows."""
    data, bullets = _fields(base), _bullets(base)
    hidden = _hide_bullets(bullets, ctx)
    known = {f"requirement_{i + 1}": bullets[i] for i in hidden}
    _rewrite(data, {bullets[i]: None for i in hidden},
             f"The requester ({REQUESTER}) has further requirements that are not listed "
             "here; ask them what else the software must do.")  # fmt: skip
    for i in hidden:
        _reword(data, bullets[i], "The final code implements this requirement, which only "
                                  f"the requester knew at the start: {bullets[i]}")  # fmt: skip
    holds(_requester(data, ctx), known,
          "give the requirements that are not written down when asked",
          "Some of your requirements are not in the written task: your requirement "
          + ", ".join(k.replace("_", " ") for k in known)
          + ". Give them when the team asks what else you need.",
          "clarification", "I also need this:")  # fmt: skip
    gather(data, ("list_files", {"directory": "."}), [f"{REQUESTER}.{k}" for k in known])
    data["metadata"]["held_requirements"] = [i + 1 for i in hidden]
    return data


# -- B --------------------------------------------------------------------------------------


@template("coding", "B")
def latent_criteria(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """B: the details of up to two bullets are the requester's acceptance criteria."""
    data, bullets = _fields(base), _bullets(base)
    candidates = _with_details(bullets)
    if not candidates:
        raise Declined("no requirement has detail sentences beyond what it builds and when")
    picked = sorted(int(i) for i in ctx.rng.choice(
        candidates, size=min(2, len(candidates)), replace=False))  # fmt: skip
    known, changes = {}, {}
    for number, i in enumerate(picked, start=1):
        stated, details = _details(bullets[i])
        changes[bullets[i]] = stated
        known[f"acceptance_criterion_{number}"] = " ".join(details)
    _rewrite(data, changes,
             f"The requester ({REQUESTER}) accepts the result only if it meets acceptance "
             "criteria of their own; ask them, or show them your work for review.")  # fmt: skip
    for value in known.values():
        data["evaluation_criteria"]["nl_assertions"].append(
            f"The final code meets the requester's acceptance criterion: {value}"
        )
    holds(_requester(data, ctx), known,
          "decide whether the result meets your acceptance criteria",
          "Your acceptance criteria are not in the written task. State them when the team asks "
          "what you would accept or shows you its work, and reject work that misses them.",
          "feedback", "Before you finish, make sure of this:")  # fmt: skip
    gather(data, ("list_files", {"directory": "."}), [f"{REQUESTER}.{k}" for k in known])
    data["metadata"]["latent_criteria_of"] = [i + 1 for i in picked]
    return data


# -- C --------------------------------------------------------------------------------------


@template("coding", "C")
def approved_dependency(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """C: declaring a named third-party package needs the maintainer's approval."""
    data = _fields(base)
    words = set(re.findall(r"[a-z0-9-]+", base.record["task"]["content"].lower()))
    named = sorted(PACKAGES[w] for w in words & set(PACKAGES))
    if not named:
        raise Declined(
            "the record names no third-party Python package; its workspace starts empty, with "
            "no CI, dependency file or protected path for an approver to guard"
        )
    body = "".join(f"+{name}\n" for name in named)
    patch = f"--- /dev/null\n+++ b/requirements.txt\n@@ -0,0 +1,{len(named)} @@\n{body}"
    lead = _lead(data)
    data["evaluation_criteria"]["actions"] = [
        {"action_id": "1", "requestor": lead, "name": "apply_protected_patch",
         "arguments": {"patch": patch}, "protected": True,
         "info": "declare the program's third-party dependencies"},
    ]  # fmt: skip
    data["evaluation_criteria"]["env_assertions"] = [
        env_assertion("file_contains", {"path": "requirements.txt", "text": name},
                      f"requirements.txt declares {name}")
        for name in named
    ]  # fmt: skip
    data["evaluation_criteria"]["reward_basis"] = ["NL_ASSERTIONS", "ENV_ASSERTION"]
    data["task"] += (
        f"\n\nDeclare the third-party packages the program uses ({', '.join(named)}) in "
        "requirements.txt. Dependency changes need the approval of the project's maintainer "
        "(maintainer) before they are made."
    )
    data["users"].append(person("coding",
        "maintainer", "maintainer", "Only dependencies the project really needs are added.",
        "Approve a dependency change when the package is one the task names; deny others.",
        {}, ["approve or deny dependency changes"], ctx))  # fmt: skip
    data["relationships"].append(["maintainer", lead, "authorizes"])
    _requester(data, ctx)
    data["metadata"]["protected_tool"] = "apply_protected_patch"
    data["metadata"]["dependencies"] = named
    return data


# -- D --------------------------------------------------------------------------------------


@template("coding", "D")
def two_stakeholders(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """D: a user representative holds some bullets and wants a written detail dropped."""
    data, bullets = _fields(base), _bullets(base)
    if len(bullets) < 3:
        raise Declined("fewer than three requirements: nothing to split between two people")
    hidden = _hide_bullets(bullets, ctx)
    stated = [i for i in _with_details(bullets) if i not in hidden]
    if not stated:
        raise Declined("no written requirement has a detail the two people could disagree on")
    contested = stated[int(ctx.rng.integers(len(stated)))]
    detail = _details(bullets[contested])[1][0]
    known = {f"requirement_{i + 1}": bullets[i] for i in hidden}
    wish = f"leave this out to keep the software simple: {detail}"
    _rewrite(data, {bullets[i]: None for i in hidden},
             f"An end-user representative (representative) has further requirements; ask "
             f"them. The requester ({REQUESTER}) and the representative may disagree: where "
             "they do, the requirements written here win, and the representative's own "
             "requirements are in scope.")  # fmt: skip
    for i in hidden:
        _reword(data, bullets[i], "The final code implements this requirement of the end-user "
                                  f"representative: {bullets[i]}")  # fmt: skip
    data["evaluation_criteria"]["nl_assertions"].append(
        f"The final code keeps this written detail, which the end-user representative wanted "
        f"left out: {detail}"
    )
    lead = _lead(data)
    holds(_requester(data, ctx), {"decision": f"keep it in: {detail}"},
          "have the final say on what the software must do",
          "Where the representative wants less, your decision holds; give it when asked.",
          "clarification", "Whatever else you hear, my decision is:")  # fmt: skip
    rep = person("coding",
        "representative", "end-user representative",
        "The software does what its users need, and stays simple.",
        "Give your requirements ("
        + ", ".join(k.replace("_", " ") for k in known)
        + ") when asked. You also have a wish: say it when asked, but accept that the "
        "written requirements win.",
        {**known, "wish": wish}, ["speak for the software's users"], ctx)  # fmt: skip
    rep["spontaneous_config"] = offers(
        rep["user_id"], known, "clarification", "Our users also need this:"
    )
    data["users"].append(rep)
    data["relationships"].append(["representative", lead, "informs"])
    gather(
        data,
        ("list_files", {"directory": "."}),
        [f"{REQUESTER}.decision", *(f"representative.{k}" for k in [*known, "wish"])],
    )
    data["metadata"]["conflict"] = {"detail_of": contested + 1, "wish": wish}
    data["metadata"]["held_requirements"] = [i + 1 for i in hidden]
    return data


# -- E --------------------------------------------------------------------------------------


@template("coding", "E")
def reviewed_changes(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """E: review rounds ask for the details of the last two detailed bullets."""
    data, bullets = _fields(base), _bullets(base)
    picked = _with_details(bullets)[-2:]
    if not picked:
        raise Declined("no requirement has detail sentences a reviewer could ask for")
    changes = {}
    for i in picked:
        stated, details = _details(bullets[i])
        changes[bullets[i]] = stated
    details = [" ".join(_details(bullets[i])[1]) for i in picked]
    lead = _lead(data)
    user = _requester(data, ctx)
    reviewers = [user]
    if len(details) == 2:
        reviewer = person("coding",
            "reviewer", "code reviewer", "The code is accepted only with my requested change made.",
            "", {}, ["review drafts and ask for the changes they need"], ctx)  # fmt: skip
        data["users"].append(reviewer)
        data["relationships"].append(["reviewer", lead, "reviews"])
        reviewers.append(reviewer)
        note = (f"The requester ({REQUESTER}) and a code reviewer (reviewer) each review the "
                "work and may ask for changes")  # fmt: skip
    else:
        note = f"The requester ({REQUESTER}) reviews the work and may ask for changes"
    _rewrite(data, changes, f"{note}; show a draft for review and make the changes asked for "
                            "before you submit.")  # fmt: skip
    for holder, value in zip(reviewers, details, strict=False):
        holds(holder, {"requested_change": value},
              "review drafts and ask for the change they need",
              "Review each draft you are shown and ask for your requested change if the draft "
              "does not make it yet; accept when it does.",
              "feedback", "In review I will ask for this:")  # fmt: skip
        data["evaluation_criteria"]["nl_assertions"].append(
            f"The final code makes the change the {holder['role']} asked for in review: {value}"
        )
    gather(
        data,
        ("list_files", {"directory": "."}),
        [f"{p['user_id']}.requested_change" for p in reviewers],
    )
    data["metadata"]["review_of"] = [i + 1 for i in picked]
    return data


# -- F --------------------------------------------------------------------------------------


@template("coding", "F")
def added_requirement(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """F: the last bullet is a requirement the requester adds at turn 2-4."""
    data, bullets = _fields(base), _bullets(base)
    if len(bullets) < 2:
        raise Declined("a single requirement: nothing could be added later")
    last = bullets[-1]
    at_turn = int(ctx.rng.integers(2, 5))
    _rewrite(data, {last: None},
             f"The requester ({REQUESTER}) may change the requirements while you work; "
             "check with them before you submit.")  # fmt: skip
    _reword(data, last, f"The final code implements the requirement the requester added "
                        f"during the work: {last}")  # fmt: skip
    user = _requester(data, ctx)
    goal = f"{user['goal']} It must also meet my added requirement."
    adds_requirement(user, at_turn, goal, last, f"One more requirement: {last}")
    gather(data, ("list_files", {"directory": "."}), [f"{REQUESTER}.added_requirement"])
    data["metadata"]["revision"] = {"at_turn": at_turn, "requirement": len(bullets)}
    return data
