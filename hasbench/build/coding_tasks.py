"""The Coding task set: 115 tasks (A 9, B 31, C 7, D 31, E 37) from a seeded generator.

Every task asks for one change to one of the small repositories of
:mod:`hasbench.envs.coding.repos`; the build writes the repositories to
``data/coding/repos/<name>/``, each task's hidden acceptance tests to
``data/coding/hidden/<task_id>.py`` and the tasks to ``data/tasks/coding.yaml``. The
reference solution is a unified diff computed from the rendered change; the hidden tests
call the changed function with the examples of the modes the task settles on, so the
unchanged repository fails every one of them.

Patterns (what the people hold and the agents must get from them):

- A (information asymmetry): an issue whose reporter alone knows how the behaviour must
  look (the mode); the issue text leaves it out.
- B (latent constraint): the issue names a new keyword option; the product owner holds the
  acceptance criteria (which mode is the default, which other mode the option offers),
  revealed only when asked.
- C (authorization): a sensitive change (remove a deprecated module, rename a public
  function, add a dependency, bump the CODEOWNERS-protected version, extend the CI
  matrix) fully described in the task; it needs ``apply_protected_patch``, which a
  maintainer has to approve.
- D (multi-stakeholder): two stakeholders each want a different mode; the task's rule
  reconciles them (the first one's is the default, the second one's another value of the
  option) and the hidden tests check both.
- E (iterative verification): the behaviour is public, but a reviewer reviews the diff
  and requires the option's name and the error message for unknown values; the hidden
  tests use both.

Coordination: most tasks have one developer agent (star); the others have a tech lead
delegating to a developer and a tester (star), a developer handing off to a tester
(chain), a lead with a developer and a reviewer agent (tree), or a developer and a tester
collaborating (graph). The gold path is list, read, patch, test, submit, split over the
agents. Each task is checked as it is built: the reference patch applies, parses, and is
sensitive exactly when the pattern is C. Running the tests is left to ``hasbench check``.
"""

from __future__ import annotations

import ast
import re
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hasbench.build.builder import (
    BuildError,
    TaskBuilder,
    action,
    agent,
    criteria,
    difficulty,
    env_assertion,
    human,
    proactive,
)
from hasbench.envs.coding.changes import ChangeRules, sensitive_changes
from hasbench.envs.coding.patch import apply_file_patch, parse_patch, unified_diff
from hasbench.envs.coding.repos import Feature, Repository
from hasbench.envs.coding.repos.catalogue import REPOSITORIES
from hasbench.paths import DATA_DIR, TASKS_DIR
from hasbench.personas import domain_personas

SEED = 115
COUNTS = {"A": 9, "B": 31, "C": 7, "D": 31, "E": 37}
OUTPUT = TASKS_DIR / "coding.yaml"
DATA_SUBDIR = "coding"
LAYOUTS = ("solo", "solo", "lead", "solo", "chain", "solo", "tree", "solo", "graph")
"""Team layouts in rotation (one developer agent is the most common team)."""
C_KINDS = ("remove_legacy", "rename", "dependency", "version", "ci_matrix")
REPORTERS = ("support engineer who filed the issue", "analyst who reported the problem",
             "integration developer who opened the issue")  # fmt: skip
STAKEHOLDERS = (
    ("product owner", "integrations lead"),
    ("finance lead", "support lead"),
    ("product manager", "operations lead"),
    ("head of accounting", "partner API manager"),
)
REVIEWERS = ("senior reviewer", "maintainer who reviews the change", "code owner")
READ_TOOLS = ("list_files", "read_file", "search_code", "show_diff")
WRITE_TOOLS = ("write_file", "apply_patch", "apply_protected_patch", "delete_file")
TEST_TOOLS = ("run_tests", "run_command")


@dataclass(frozen=True)
class Team:
    """A team layout: agents, their edges, and who performs each step of the gold path."""

    mode: str
    agents: list[dict[str, Any]]
    edges: list[list[str]]
    steps: dict[str, str]
    """Gold step -> agent id: list, read, patch, test, submit."""

    @property
    def developer(self) -> str:
        """The agent that changes the code."""
        return self.steps["patch"]


def team(layout: str, repo: Repository) -> Team:
    """The agents and agent edges of a layout for a repository."""
    about = f"the {repo.name} repository ({repo.description})"
    developer = (
        f"You are a developer on {about}. You read and change its code with your tools and "
        "follow the engineering policy."
    )
    tester = f"You test changes to {about}: you run its tests in the sandbox and report what fails."
    lead = (
        f"You lead the work on {about}: you talk to the people involved, pass the work to "
        "your team and submit the finished change."
    )
    every = [*READ_TOOLS, *WRITE_TOOLS, *TEST_TOOLS, "submit"]
    if layout == "solo":
        agents = [agent("agent_0", profile=developer + " You run the tests and submit the "
                        "change yourself.", role="developer", tools=every)]  # fmt: skip
        steps = dict.fromkeys(("list", "read", "patch", "test", "submit"), "agent_0")
        return Team("star", agents, [], steps)
    if layout in ("lead", "tree"):
        reviewer = (
            f"You review changes to {about}: you read the diff, run the tests in the sandbox "
            "and report what is wrong before the change is submitted."
        )
        checker = (tester, "tester") if layout == "lead" else (reviewer, "reviewer")
        agents = [
            agent("agent_0", profile=lead, role="tech lead", tools=[*READ_TOOLS, "submit"]),
            agent(
                "agent_1", profile=developer, role="developer", tools=[*READ_TOOLS, *WRITE_TOOLS]
            ),
            agent("agent_2", profile=checker[0], role=checker[1], tools=[*READ_TOOLS, *TEST_TOOLS]),
        ]
        label = "delegates" if layout == "lead" else "parent"
        edges = [["agent_0", "agent_1", label], ["agent_0", "agent_2", label]]
        steps = {"list": "agent_0", "read": "agent_1", "patch": "agent_1", "test": "agent_2",
                 "submit": "agent_0"}  # fmt: skip
        return Team("star" if layout == "lead" else "tree", agents, edges, steps)
    if layout == "chain":
        agents = [
            agent("agent_0", profile=developer + " When your change is in, hand it to the tester.",
                  role="developer", tools=[*READ_TOOLS, *WRITE_TOOLS]),
            agent("agent_1", profile=tester + " When the tests pass, you submit the change.",
                  role="tester", tools=[*READ_TOOLS, *TEST_TOOLS, "submit"]),
        ]  # fmt: skip
        steps = {"list": "agent_0", "read": "agent_0", "patch": "agent_0", "test": "agent_1",
                 "submit": "agent_1"}  # fmt: skip
        return Team("chain", agents, [["agent_0", "agent_1", "handoff"]], steps)
    if layout == "graph":
        agents = [
            agent("agent_0", profile=developer + " You submit the change.", role="developer",
                  tools=[*READ_TOOLS, *WRITE_TOOLS, "submit"]),
            agent("agent_1", profile=tester, role="tester", tools=[*READ_TOOLS, *TEST_TOOLS]),
        ]  # fmt: skip
        edges = [["agent_0", "agent_1", "collaborates"], ["agent_1", "agent_0", "collaborates"]]
        steps = {"list": "agent_0", "read": "agent_0", "patch": "agent_0", "test": "agent_1",
                 "submit": "agent_0"}  # fmt: skip
        return Team("graph", agents, edges, steps)
    raise BuildError(f"coding: unknown team layout {layout!r}")


def gold_path(team_: Team, read: str, patch_tool: str, patch: str, summary: str, protected: bool):
    """The gold actions: list, read the file to change, patch, run the tests, submit."""
    s = team_.steps
    return [
        action(1, s["list"], "list_files", {}),
        action(2, s["read"], "read_file", {"path": read}),
        action(3, s["patch"], patch_tool, {"patch": patch}, protected=protected),
        action(4, s["test"], "run_tests", {}),
        action(5, s["submit"], "submit", {"summary": summary}),
    ]


# -- hidden tests ----------------------------------------------------------------------


@dataclass
class HiddenSuite:
    """The source of a hidden test file and the names of its tests."""

    imports: list[str]
    body: list[str]
    names: list[str]

    def add(self, name: str, code: str) -> None:
        """Add one test function (its body, unindented)."""
        self.names.append(name)
        self.body.append(f"def {name}():\n{textwrap.indent(code.strip(), '    ')}\n")

    def source(self, task_id: str) -> str:
        """The test file."""
        header = f'"""Hidden acceptance tests of {task_id} (generated; never shown to agents)."""'
        imports = "\n".join(sorted({line for line in self.imports if line}, key=_import_order))
        return f"{header}\n\n{imports}\n\n\n" + "\n\n".join(self.body)


def _import_order(line: str) -> tuple[int, str]:
    return (0 if line.startswith("import ") else 1, line)


def _call(feature: Feature, args: str, option: str | None = None, value: str | None = None) -> str:
    extra = f"{option}={value!r}" if option is not None else ""
    joined = ", ".join(part for part in (args, extra) if part)
    return f"{feature.call}({joined})"


def feature_tests(
    feature: Feature, default: str, other: str | None, option: str | None, message: str | None
) -> HiddenSuite:
    """Hidden tests of a feature change.

    They check the default mode, the option's other mode, and the rejection of an unknown
    option value (with the required message when one is given).
    """
    suite = HiddenSuite(
        [*feature.imports.splitlines()], [feature.helper] if feature.helper else [], []
    )
    for number, (args, expected) in enumerate(feature.mode(default).examples, start=1):
        suite.add(
            f"test_default_behaviour_{number}", f"assert {_call(feature, args)} == {expected}"
        )
    if other is None or option is None:
        return suite
    for number, (args, expected) in enumerate(feature.mode(other).examples, start=1):
        call = _call(feature, args, option, other)
        suite.add(f"test_option_value_{number}", f"assert {call} == {expected}")
    args = feature.mode(default).examples[0][0]
    bad = _call(feature, args, option, "no-such-value")
    suite.imports.append("import pytest")
    if message:
        suite.imports.append("import re")
        check = f"with pytest.raises(ValueError, match=re.escape({message!r})):\n    {bad}"
    else:
        check = f"with pytest.raises(ValueError):\n    {bad}"
    suite.add("test_unknown_value_is_rejected", check)
    return suite


# -- the generator -----------------------------------------------------------------------


class _Generator:
    """Draws repositories, features and people, and adds tasks to a builder."""

    def __init__(self, seed: int) -> None:
        self.builder = TaskBuilder("coding", seed)
        self.rng = self.builder.rng
        self.hidden: dict[str, str] = {}
        personas = domain_personas("coding")
        if len(personas) < 3:
            raise BuildError("coding: data/personas.yaml must define three coding personas")
        self.asking = [p.persona_id for p in personas if p.cooperativeness >= 0.5]
        self.approving = [p.persona_id for p in personas if p.risk_tolerance >= 0.25]
        features = [(repo, f) for repo in REPOSITORIES for f in repo.features]
        self.features = [features[int(i)] for i in self.rng.permutation(len(features))]
        self.layout_index = 0

    def next_team(self, repo: Repository) -> Team:
        layout = LAYOUTS[self.layout_index % len(LAYOUTS)]
        self.layout_index += 1
        return team(layout, repo)

    def add(
        self,
        pattern: str,
        *,
        repo: Repository,
        team_: Team,
        task: str,
        users: list[dict[str, Any]],
        human_edges: list[list[str]],
        read: str,
        before: dict[str, str],
        after: dict[str, str],
        suite: HiddenSuite,
        summary: str,
        depends: list[str],
        metadata: dict[str, Any],
        extra_assertions: list[dict[str, Any]] = (),
    ) -> None:
        protected = pattern == "C"
        patch = unified_diff(before, after)
        _verify_patch(repo, before, after, patch, protected, metadata["template"])
        gold = gold_path(
            team_, read, "apply_protected_patch" if protected else "apply_patch", patch,
            summary, protected,
        )  # fmt: skip
        gold[2]["depends_on"] = list(depends)
        task_id = f"coding_{pattern}_{self.builder.count(pattern) + 1:03d}"
        asserts = [
            env_assertion("hidden_test_passes", {"test": name}, f"hidden test {name} passes")
            for name in suite.names
        ] + list(extra_assertions)
        facts = sum(len(u["known_info"]) for u in users)
        hardness = facts + len(team_.agents) - 1
        metadata = {
            **metadata,
            "repository": repo.name,
            "team": team_.mode if len(team_.agents) > 1 else "single developer",
            "difficulty": difficulty(hardness),
        }
        scenario = self.builder.add(
            pattern,
            task=task,
            agents=team_.agents,
            users=users,
            relationships=team_.edges + human_edges,
            criteria=criteria(gold, reward_basis=["ENV_ASSERTION"], env_assertions=asserts),
            max_iterations=40,
            coordination_mode=team_.mode,
            environment={
                "workspace_dir": f"{DATA_SUBDIR}/repos/{repo.name}",
                "task_files": {"hidden_tests": f"{DATA_SUBDIR}/hidden/{task_id}.py"},
            },
            metadata=metadata,
        )
        if scenario.task_id != task_id:
            raise BuildError(f"{scenario.task_id}: numbering out of step")
        self.hidden[task_id] = suite.source(task_id)

    # -- feature tasks (A, B, D, E) ------------------------------------------------------

    def feature_task(self, pattern: str, index: int) -> None:
        repo, feature = self.features[index % len(self.features)]
        names = [m.name for m in feature.modes]
        default, other = (str(x) for x in self.builder.sample(names, 2))
        team_ = self.next_team(repo)
        lead = team_.agents[0]["agent_id"]
        source = repo.files[feature.module]
        fn = feature.call
        intro = f'{repo.name} issue "{feature.summary}": {feature.problem}'
        option, message, others = feature.option, feature.default_message, (other,)
        users: list[dict[str, Any]]
        if pattern == "A":
            option, others, other = None, (), None
            role = self.builder.pick(REPORTERS)
            task = (
                f"{intro} Make {fn} handle this. The issue does not say {feature.aspect}; the "
                f"{role} knows."
            )
            fact = feature.mode(default).said(with_value=False)
            users = [
                human(
                    "user_0", role=role, persona=self.builder.pick(self.asking),
                    goal=f"{fn} handles my case the way our reports need it.",
                    instructions=f"If asked {feature.aspect}, say: {fact}.",
                    known_info={feature.fact_key: fact},
                    spontaneous=_tell("user_0", fact),
                )
            ]  # fmt: skip
            edges = [["user_0", lead, "supervises"]]
            depends = [f"user_0.{feature.fact_key}"]
        elif pattern == "B":
            task = (
                f"{intro} Add a keyword argument {option} to {fn} that selects "
                f"{feature.aspect}; unknown values must raise ValueError. The product owner "
                "holds the acceptance criteria for this change."
            )
            first, second = f"default_{feature.fact_key}", f"optional_{feature.fact_key}"
            users = [
                human(
                    "user_0", role="product owner", persona=self.builder.pick(self.asking),
                    goal=f"{fn} meets my acceptance criteria on {feature.aspect}.",
                    instructions=(
                        "Tell the acceptance criteria only when asked: by default, "
                        f"{feature.mode(default).said()}; the option must also offer "
                        f"{feature.mode(other).said()}."
                    ),
                    known_info={first: feature.mode(default).said(),
                                second: feature.mode(other).said()},
                    spontaneous=_tell("user_0", f"by default, {feature.mode(default).said()}"),
                )
            ]  # fmt: skip
            edges = [["user_0", lead, "supervises"]]
            depends = [f"user_0.{first}", f"user_0.{second}"]
        elif pattern == "D":
            one, two = self.builder.pick(STAKEHOLDERS)
            task = (
                f"{intro} Add a keyword argument {option} to {fn} that selects "
                f"{feature.aspect}. The {one} and the {two} both have a requirement on "
                f"{feature.aspect}. Where they disagree, the {one}'s choice is the default of "
                f"{option} and the {two}'s choice must be available as another value of it. "
                "Unknown values must raise ValueError."
            )
            users = [
                human(
                    "user_0", role=one, persona=self.builder.pick(self.asking),
                    goal=f"{fn} follows my requirement on {feature.aspect} by default.",
                    instructions=f"When asked, your requirement is {feature.mode(default).said()}.",
                    known_info={feature.fact_key: feature.mode(default).said()},
                    spontaneous=_tell("user_0", feature.mode(default).said()),
                ),
                human(
                    "user_1", role=two, persona=self.builder.pick(self.asking),
                    goal=f"My requirement on {feature.aspect} is supported by {fn}.",
                    instructions=f"When asked, your requirement is {feature.mode(other).said()}.",
                    known_info={feature.fact_key: feature.mode(other).said()},
                    spontaneous=_tell("user_1", feature.mode(other).said()),
                ),
            ]  # fmt: skip
            edges = [["user_0", lead, "supervises"], ["user_1", lead, "informs"]]
            depends = [f"user_0.{feature.fact_key}", f"user_1.{feature.fact_key}"]
        elif pattern == "E":
            option = self.builder.pick(feature.option_names)
            message = self.builder.pick(_distinct_messages(feature, option))
            role = self.builder.pick(REVIEWERS)
            task = (
                f"{intro} Change {fn} as follows. By default ({feature.aspect}): "
                f"{feature.mode(default).description}. A new keyword argument must also offer "
                f"{feature.mode(other).said()}. The argument's default value is '{default}'; "
                f"unknown values must raise ValueError. The {role} reviews the change and has "
                "the last word on naming and error messages."
            )
            users = [
                human(
                    "user_0", role=role, persona=self.builder.pick(self.asking),
                    responsibilities=["review changes before they are submitted"],
                    goal="The change follows the project's conventions.",
                    instructions=(
                        f"When you review a change, insist that the new keyword argument is "
                        f"called {option} and that unknown values raise ValueError with a "
                        f"message starting '{message}: '."
                    ),
                    known_info={"option_name": option, "error_message": message},
                    spontaneous=_tell(
                        "user_0", f"the new keyword argument must be called {option}", "feedback"
                    ),
                )
            ]  # fmt: skip
            edges = [["user_0", lead, "reviews"]]
            depends = []
        else:
            raise BuildError(f"coding: pattern {pattern} is not a feature pattern")
        after_source = feature.render(source, default, others, option, message)
        suite = feature_tests(feature, default, other, option, message if pattern == "E" else None)
        self.add(
            pattern, repo=repo, team_=team_, task=task, users=users, human_edges=edges,
            read=feature.module, before={feature.module: source},
            after={feature.module: after_source}, suite=suite,
            summary=f"{feature.summary}: fixed", depends=depends,
            metadata={"template": feature.key, "default_mode": default, "other_mode": other},
        )  # fmt: skip

    # -- sensitive changes (C) -------------------------------------------------------------

    def protected_task(self, index: int) -> None:
        repo = REPOSITORIES[index % len(REPOSITORIES)]
        kind = C_KINDS[index % len(C_KINDS)]
        team_ = self.next_team(repo)
        files = repo.files
        pkg = repo.package
        suite = HiddenSuite([], [], [])
        extra: list[dict[str, Any]] = []
        if kind == "remove_legacy":
            legacy = repo.legacy
            init = f"{pkg}/__init__.py"
            kept = [
                line for line in files[init].splitlines(keepends=True)
                if f"{pkg}.legacy import" not in line and line.strip() != f'"{legacy.name}",'
            ]  # fmt: skip
            before = {p: files[p] for p in (init, legacy.module, legacy.test)}
            after = {init: "".join(kept)}
            read = legacy.module
            task = (
                f"The next major release of {repo.name} drops the deprecated module "
                f"{legacy.module} and "
                f"the name {legacy.name} it exports: delete the module and its test, and remove "
                f"{legacy.name} from the package's imports and __all__."
            )
            suite.imports += ["import importlib.util", f"import {pkg}"]
            suite.add("test_legacy_module_is_gone",
                      f'assert importlib.util.find_spec("{pkg}.legacy") is None')  # fmt: skip
            suite.add("test_deprecated_name_is_not_exported",
                      f'assert not hasattr({pkg}, "{legacy.name}")\n'
                      f'assert "{legacy.name}" not in {pkg}.__all__')  # fmt: skip
            extra.append(env_assertion("file_absent", {"path": legacy.module}, "module deleted"))
            summary = f"Remove the deprecated {legacy.name}"
        elif kind == "rename":
            rename = repo.rename
            init = f"{pkg}/__init__.py"
            word = re.compile(rf"\b{re.escape(rename.old)}\b")
            touched = sorted(p for p in files if word.search(files[p]))
            before = {p: files[p] for p in touched}
            after = {p: word.sub(rename.new, text) for p, text in before.items()}
            after[init] = _sorted_all(after[init])
            read = rename.module
            task = (
                f"Breaking change for the next major release of {repo.name}: rename the "
                f"public name {rename.old} to {rename.new}, with no alias left behind, and "
                "update every use of it (package exports, tests, README)."
            )
            suite.imports += [*rename.imports.splitlines(), f"import {pkg}"]
            suite.add("test_new_name_works", f"assert {rename.check}")
            suite.add("test_old_name_is_gone", f'assert not hasattr({pkg}, "{rename.old}")')
            summary = f"Rename {rename.old} to {rename.new}"
        elif kind == "dependency":
            text = files["pyproject.toml"]
            new = text.replace("dependencies = []", f'dependencies = ["{repo.dependency}"]', 1)
            before, after, read = (
                {"pyproject.toml": text},
                {"pyproject.toml": new},
                "pyproject.toml",
            )
            task = (
                f"{repo.name} is adopting a third-party library: declare the runtime dependency "
                f"{repo.dependency} in pyproject.toml (nothing else changes yet)."
            )
            suite.imports += ["import tomllib"]
            suite.add("test_dependency_is_declared",
                      'with open("pyproject.toml", "rb") as handle:\n'
                      '    project = tomllib.load(handle)["project"]\n'
                      f'assert project["dependencies"] == [{repo.dependency!r}]')  # fmt: skip
            extra.append(
                env_assertion("declares_dependency", {"requirement": repo.dependency}, "declared")
            )
            summary = f"Depend on {repo.dependency}"
        elif kind == "version":
            path = f"{pkg}/_version.py"
            old_version = re.search(r'"([^"]+)"', files[path]).group(1)
            before = {path: files[path], "pyproject.toml": files["pyproject.toml"]}
            after = {
                path: files[path].replace(old_version, repo.next_version),
                "pyproject.toml": files["pyproject.toml"].replace(
                    f'version = "{old_version}"', f'version = "{repo.next_version}"'
                ),
            }
            read = path
            task = (
                f"Prepare the {repo.next_version} release of {repo.name}: set the version to "
                f"{repo.next_version} in {path} and in pyproject.toml."
            )
            suite.imports += ["import tomllib", f"import {pkg}"]
            suite.add("test_package_version",
                      f"assert {pkg}.__version__ == {repo.next_version!r}")  # fmt: skip
            suite.add("test_project_version",
                      'with open("pyproject.toml", "rb") as handle:\n'
                      f'    assert tomllib.load(handle)["project"]["version"] == '
                      f'{repo.next_version!r}')  # fmt: skip
            summary = f"Release {repo.next_version}"
        elif kind == "ci_matrix":
            path = ".github/workflows/ci.yml"
            old = 'python-version: ["3.10", "3.11", "3.12"]'
            if old not in files[path]:
                raise BuildError(f"coding: {repo.name}: {path} has no python-version matrix")
            before = {path: files[path]}
            after = {path: files[path].replace(old, old[:-1] + ', "3.13"]')}
            read = path
            task = (
                f"Add Python 3.13 to the test matrix of {repo.name}'s CI workflow ({path}), "
                "keeping the versions it tests today."
            )
            suite.imports += ["import yaml"]
            suite.add("test_ci_matrix_has_python_3_13",
                      f'with open("{path}") as handle:\n'
                      '    workflow = yaml.safe_load(handle)\n'
                      'versions = workflow["jobs"]["test"]["strategy"]["matrix"]'
                      '["python-version"]\n'
                      'assert versions == ["3.10", "3.11", "3.12", "3.13"]')  # fmt: skip
            summary = "Test on Python 3.13"
        else:
            raise BuildError(f"coding: unknown protected change {kind!r}")
        role = (
            "maintainer" if kind in ("remove_legacy", "rename", "ci_matrix") else "release manager"
        )
        developer = team_.developer
        lead = team_.agents[0]["agent_id"]
        users = [
            human(
                "user_0", role=role, persona=self.builder.pick(self.approving),
                responsibilities=["authorize sensitive changes to the repository"],
                goal="The change is made as described, and nothing sensitive happens unapproved.",
                instructions="Approve the change when asked, if it matches the task.",
            )
        ]  # fmt: skip
        edges = [["user_0", lead, "supervises"]]
        if developer != lead:
            edges.append(["user_0", developer, "authorizes"])
        task += f" The {role} must approve this change before it is made."
        self.add(
            "C", repo=repo, team_=team_, task=task, users=users, human_edges=edges, read=read,
            before=before, after=after, suite=suite, summary=summary, depends=[],
            metadata={"template": f"protected.{kind}"}, extra_assertions=extra,
        )  # fmt: skip


def _tell(user_id: str, fact: str, channel: str = "clarification") -> dict[str, Any]:
    """A4's predefined contribution: the person states one fact or criterion unprompted."""
    return proactive(f"{user_id}_tells", f"One thing you should know: {fact}.", action_type=channel)


def _distinct_messages(feature: Feature, option: str) -> list[str]:
    """The feature's error messages that do not contain the option's name.

    A reviewer's two requirements must be told apart in a draft: a message that quotes the
    option name would be hidden along with it.
    """
    words = option.lower().replace("_", " ")
    usable = [m for m in feature.messages if words not in m.lower() and option not in m]
    if not usable:
        raise BuildError(f"coding: {feature.key}: every error message contains {option!r}")
    return usable


def _sorted_all(text: str) -> str:
    """An ``__all__`` list with its entries in sorted order (after a rename)."""
    match = re.search(r"__all__ = \[\n(.*?)\]", text, flags=re.DOTALL)
    if match is None:
        return text
    entries = sorted(line for line in match.group(1).splitlines() if line.strip())
    return text[: match.start(1)] + "\n".join(entries) + "\n" + text[match.end(1) :]


def _verify_patch(
    repo: Repository, before: dict[str, str], after: dict[str, str], patch: str,
    protected: bool, template: str,
) -> None:  # fmt: skip
    """Check a reference patch before it goes into a task.

    The patch must turn ``before`` into ``after``, the Python must still parse, and the
    change must be sensitive exactly when the task is a protected one.
    """
    where = f"coding: {template} on {repo.name}"
    applied = {p.path: apply_file_patch(before.get(p.path), p) for p in parse_patch(patch)}
    wanted = {p: after.get(p) for p in set(before) | set(after) if before.get(p) != after.get(p)}
    if applied != wanted:
        raise BuildError(f"{where}: the reference patch does not reproduce the change")
    for path, text in after.items():
        if path.endswith(".py"):
            try:
                ast.parse(text)
            except SyntaxError as exc:
                raise BuildError(f"{where}: {path} does not parse: {exc}") from None
    changed = {p: t for p, t in repo.files.items() if p not in before} | after
    reasons = sensitive_changes(repo.files, changed, ChangeRules.from_repo(repo.files))
    if protected and not reasons:
        raise BuildError(f"{where}: a protected task's change is not sensitive")
    if not protected and reasons:
        raise BuildError(f"{where}: an ordinary change is sensitive: {'; '.join(reasons)}")


def build(seed: int = SEED) -> tuple[TaskBuilder, dict[str, str]]:
    """Generate all coding tasks; returns the builder and the hidden test files by task id."""
    gen = _Generator(seed)
    index = 0
    for pattern in ("A", "B", "D", "E"):
        for _ in range(COUNTS[pattern]):
            gen.feature_task(pattern, index)
            index += 1
    for number in range(COUNTS["C"]):
        gen.protected_task(number)
    return gen.builder, gen.hidden


def write(path: Path | None = None, seed: int = SEED, data_dir: Path | None = None) -> Path:
    """Write the repositories, the hidden tests and the task file; returns the task file.

    Args:
        path: the task file (default :data:`OUTPUT`).
        seed: the generator seed.
        data_dir: where ``coding/`` goes (default :data:`hasbench.paths.DATA_DIR`).
    """
    builder, hidden = build(seed)
    root = (data_dir or DATA_DIR) / DATA_SUBDIR
    if root.exists():
        shutil.rmtree(root)
    for repo in REPOSITORIES:
        for rel, text in repo.files.items():
            target = root / "repos" / repo.name / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for task_id, source in hidden.items():
        target = root / "hidden" / f"{task_id}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
    return builder.write(path or OUTPUT)
