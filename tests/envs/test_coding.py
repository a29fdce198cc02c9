"""The Coding environment: workspace tools, risk rules, typed errors, state, hidden tests."""

import pickle

import pytest

from hasbench.envs import make_environment
from hasbench.envs.coding import CodingEnvironment
from hasbench.envs.coding import sandbox as sb
from hasbench.envs.coding.changes import ChangeRules, sensitive_changes
from hasbench.envs.coding.patch import PatchError, apply_file_patch, parse_patch, unified_diff
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks

needs_bwrap = pytest.mark.skipif(
    sb.bubblewrap_problem() is not None,
    reason=f"bubblewrap cannot sandbox here: {sb.bubblewrap_problem()}",
)

REPO = {
    "pkg/__init__.py": 'from pkg.core import add, scale\n\n__all__ = ["add", "scale"]\n',
    "pkg/core.py": (
        "def add(a, b):\n    return a + b\n\n\n"
        "def scale(values, factor=2):\n    return [v * factor for v in values]\n"
    ),
    "pkg/_version.py": '__version__ = "1.0.0"\n',
    "tests/test_core.py": "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "1.0.0"\ndependencies = []\n',
    ".github/workflows/ci.yml": "name: tests\n",
    ".github/CODEOWNERS": "/pkg/_version.py @release\n",
    "README.md": "# pkg\n",
}
HIDDEN = """\
from pkg.core import add


def test_strings():
    assert add("a", "b") == "ab"


def test_sub():
    from pkg.core import sub

    assert sub(3, 1) == 2
"""
SUB = "\n".join(
    [
        "--- a/pkg/core.py",
        "+++ b/pkg/core.py",
        "@@ -2,5 +2,9 @@",
        "     return a + b",
        " ",
        " ",
        "+def sub(a, b):",
        "+    return a - b",
        "+",
        "+",
        " def scale(values, factor=2):",
        "     return [v * factor for v in values]",
        "",
    ]
)


@pytest.fixture
def env():
    return CodingEnvironment({p: t.encode() for p, t in REPO.items()}, HIDDEN)


def patch_of(before: dict[str, str], after: dict[str, str]) -> str:
    return unified_diff(before, after)


# -- reading ------------------------------------------------------------------------


def test_list_read_and_search(env):
    listing = env.call("list_files", {}).output
    assert listing.splitlines() == sorted(REPO)
    assert env.call("list_files", {"directory": "pkg"}).output.count("\n") == 2
    assert env.call(
        "read_file", {"path": "pkg/core.py", "start_line": 5, "end_line": 5}
    ).output == ("def scale(values, factor=2):\n")
    hits = env.call("search_code", {"pattern": r"def \w+\("}).output.splitlines()
    assert hits == ["pkg/core.py:1: def add(a, b):", "pkg/core.py:5: def scale(values, factor=2):",
                    "tests/test_core.py:4: def test_add():"]  # fmt: skip


@pytest.mark.parametrize(
    "name, arguments, error_type",
    [
        ("read_file", {"path": "nope.py"}, "not_found"),
        ("read_file", {"path": "../etc/passwd"}, "invalid_arguments"),
        ("read_file", {"path": "/etc/passwd"}, "invalid_arguments"),
        ("search_code", {"pattern": "("}, "invalid_arguments"),
        ("list_files", {"directory": "missing"}, "not_found"),
        ("write_file", {"path": "pkg", "content": "x"}, "invalid_arguments"),
        ("delete_file", {"path": "nope.py"}, "not_found"),
        ("apply_patch", {"patch": "not a diff"}, "invalid_arguments"),
        ("apply_patch", {"patch": SUB.replace("a + b", "a * b")}, "precondition_failed"),
        ("submit", {"summary": "nothing"}, "precondition_failed"),
        ("run_command", {"command": "rm -rf /"}, "permission_denied"),
        ("run_command", {"command": "python -c 'unterminated"}, "invalid_arguments"),
    ],
)  # fmt: skip
def test_refused_calls_are_typed_and_change_nothing(env, name, arguments, error_type):
    before = env.state_hash()
    result = env.call(name, arguments)
    assert result.error and result.error_type == error_type, result.message
    assert env.state_hash() == before


# -- writing and risk ---------------------------------------------------------------


def test_an_ordinary_patch_applies_and_changes_the_tree_hash(env):
    before = env.state_hash()
    result = env.call("apply_patch", {"patch": SUB})
    assert not result.error, result.message
    assert result.output == "Applied the patch: pkg/core.py (+4 -0)."
    assert [d["path"] for d in result.diff] == ["files.pkg/core.py"]
    assert env.state_hash() != before
    assert "def sub(a, b):" in env.call("read_file", {"path": "pkg/core.py"}).output
    assert env.call("show_diff", {}).output.startswith("--- a/pkg/core.py\n+++ b/pkg/core.py\n")


def test_the_garbled_patch_of_a_guessing_oracle_never_applies(env):
    result = env.call("apply_patch", {"patch": SUB + "-x"})
    assert result.error_type == "invalid_arguments"
    assert "outside a hunk" in result.message


def test_a_hunk_with_stale_line_numbers_still_applies_where_it_matches(env):
    shifted = SUB.replace("@@ -2,5 +2,9 @@", "@@ -40,5 +40,9 @@")
    assert not env.call("apply_patch", {"patch": shifted}).error


@pytest.mark.parametrize(
    "path, text, reason",
    [
        ("pkg/core.py", REPO["pkg/core.py"].replace("def add(a, b)", "def add(a, c)"),
         "changes the signature of pkg.core.add"),
        ("pkg/core.py", REPO["pkg/core.py"].replace("def add(a, b)", "def plus(a, b)"),
         "removes pkg.core.add from the public interface"),
        ("pkg/core.py", REPO["pkg/core.py"].replace("factor=2", "factor"),
         "parameter 'factor' lost its default"),
        ("pyproject.toml", REPO["pyproject.toml"].replace("[]", '["requests"]'),
         "changes the dependencies declared in pyproject.toml"),
        (".github/workflows/ci.yml", "name: ci\n", "changes CI configuration"),
        ("pkg/_version.py", '__version__ = "2.0.0"\n', "protected by CODEOWNERS (@release)"),
    ],
)  # fmt: skip
def test_sensitive_changes_are_refused_by_the_low_risk_tools(env, path, text, reason):
    before = env.state_hash()
    for name, arguments in (
        ("apply_patch", {"patch": patch_of({path: REPO[path]}, {path: text})}),
        ("write_file", {"path": path, "content": text}),
    ):
        result = env.call(name, arguments)
        assert result.error_type == "permission_denied", (name, result.message)
        assert reason in result.message
        assert "apply_protected_patch" in result.message
        assert env.state_hash() == before
    protected = env.call(
        "apply_protected_patch", {"patch": patch_of({path: REPO[path]}, {path: text})}
    )
    assert not protected.error and reason in protected.output


def test_compatible_interface_changes_are_ordinary(env):
    text = REPO["pkg/core.py"].replace("factor=2)", "factor=2, *, round_to=None)")
    text += "\n\ndef mean(values):\n    return sum(values) / len(values)\n"
    assert not env.call("write_file", {"path": "pkg/core.py", "content": text}).error
    pyproject = REPO["pyproject.toml"].replace('version = "1.0.0"', 'version = "1.0.1"')
    assert not env.call("write_file", {"path": "pyproject.toml", "content": pyproject}).error


def test_deleting_is_high_risk(env):
    assert env.tool_spec("delete_file").risk == "high"
    assert env.tool_spec("apply_protected_patch").risk == "high"
    assert {
        env.tool_spec(n).risk for n in ("write_file", "apply_patch", "run_command", "submit")
    } == {"low"}
    deleting = patch_of({"README.md": REPO["README.md"]}, {})
    assert env.call("apply_patch", {"patch": deleting}).error_type == "permission_denied"
    assert not env.call("delete_file", {"path": "README.md"}).error
    assert "README.md" not in env.state()["files"]


def test_codeowners_rules_come_from_the_original_repository():
    rules = ChangeRules.from_repo(REPO)
    assert rules.packages == ("pkg",)
    edited = {**REPO, ".github/CODEOWNERS": ""}
    reasons = sensitive_changes(edited, {**edited, "pkg/_version.py": "x = 1\n"}, rules)
    assert any("CODEOWNERS" in r for r in reasons)


# -- state ----------------------------------------------------------------------------


def test_snapshot_restore_and_pickle(env):
    start = env.snapshot()
    env.call("apply_patch", {"patch": SUB})
    changed = env.state_hash()
    copy = pickle.loads(pickle.dumps(env))
    assert copy.state_hash() == changed
    assert copy.call("read_file", {"path": "pkg/core.py"}).output == env.workspace.text(
        "pkg/core.py"
    )
    env.restore(start)
    assert env.workspace.text("pkg/core.py") == REPO["pkg/core.py"]
    assert copy.state_hash() == changed


def test_submit_marks_delivery(env):
    initial = CodingEnvironment({p: t.encode() for p, t in REPO.items()}, HIDDEN)
    assert env.delivered() is False
    env.call("apply_patch", {"patch": SUB})
    assert env.delivered() is False
    result = env.call("submit", {"summary": "add sub"})
    assert result.output == "Submitted a change to 1 file(s): pkg/core.py."
    assert env.delivered() is True
    assert "+def sub(a, b):" in env.judge_artifact(initial)


def test_patch_round_trip_creates_and_deletes_files():
    before = {"a.txt": "one\ntwo\n", "gone.txt": "bye\n"}
    after = {"a.txt": "one\n2\n", "new/b.txt": "fresh"}
    patches = parse_patch(unified_diff(before, after))
    results = {p.path: apply_file_patch(before.get(p.path), p) for p in patches}
    assert results == {"a.txt": "one\n2\n", "gone.txt": None, "new/b.txt": "fresh"}
    with pytest.raises(PatchError, match="outside a hunk"):
        parse_patch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n")


# -- running --------------------------------------------------------------------------


@needs_bwrap
def test_runs_tests_and_commands_in_the_sandbox(env):
    first = env.call("run_tests", {})
    assert first.output.strip().endswith("1 passed")
    assert " in 0." not in first.output  # durations are stripped: traces are deterministic
    assert env.call("run_tests", {"target": "tests/test_core.py::test_add"}).output == first.output
    made = env.call("run_command", {"command": "python -c \"open('notes.txt', 'w').write('hi')\""})
    assert made.output.startswith("$ python -c") and "exit code 0" in made.output
    assert env.workspace.text("notes.txt") == "hi"
    before = env.state_hash()
    removed = env.call(
        "run_command", {"command": "python -c \"import os; os.remove('README.md')\""}
    )
    assert removed.error_type == "permission_denied" and "deletes README.md" in removed.message
    assert env.state_hash() == before
    assert "README.md" in env.call("run_command", {"command": "ls"}).output


@needs_bwrap
def test_a_runaway_test_is_a_typed_error(env):
    env.sandbox.limits = sb.Limits(cpu_seconds=1, wall_seconds=3)
    env.call(
        "write_file",
        {
            "path": "tests/test_loop.py",
            "content": "def test_loop():\n    while True:\n        pass\n",
        },
    )
    result = env.call("run_tests", {})
    assert result.error_type in ("cpu_limit", "timeout")
    assert "the sandbox stopped the run" in result.message


@needs_bwrap
def test_hidden_tests_run_once_per_workspace_and_keep_their_lines(env):
    assert env.run_assertion("hidden_test_passes", {"test": "test_sub"}) is False
    assert env.evaluation_details(scenario=None)["hidden_tests"]["passed"] == 1
    env.call("apply_patch", {"patch": SUB})
    assert env.run_assertion("hidden_test_passes", {"test": "test_sub"}) is True
    assert env.run_assertion("hidden_test_passes", {"test": "test_strings"}) is True
    evidence = env.evaluation_details(scenario=None)["hidden_tests"]
    assert evidence["status"] == "ran" and (evidence["passed"], evidence["total"]) == (2, 2)
    assert [line.split()[0] for line in evidence["lines"]] == ["PASSED", "PASSED"]
    with pytest.raises(KeyError):
        env.run_assertion("hidden_test_passes", {"test": "test_nope"})


def test_without_a_sandbox_running_code_is_refused(monkeypatch, env):
    monkeypatch.setattr(sb, "bubblewrap_problem", lambda: "bwrap not found on PATH")
    monkeypatch.delenv(sb.UNSAFE_ENV, raising=False)
    with pytest.raises(sb.SandboxUnavailable):
        env.call("run_command", {"command": "true"})
    assert env.describe() == {"sandbox": "unavailable: bwrap not found on PATH"}


def test_a_task_builds_its_environment_from_the_data_directory():
    scenario = load_tasks(TASKS_DIR / "coding.yaml")[0]
    env = make_environment(scenario)
    assert isinstance(env, CodingEnvironment)
    assert env.hidden_tests and "def test_" in env.hidden_tests
    assert not any("hidden" in path for path in env.workspace.tree)
    assert env.policy.startswith("# Engineering policy")
