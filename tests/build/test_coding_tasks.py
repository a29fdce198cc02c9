"""The committed Coding tasks: counts, reproducibility, real patterns, working references."""

import importlib
import sys
from collections import Counter
from pathlib import Path

import pytest

from hasbench.build import coding_tasks
from hasbench.build.checks import check_task
from hasbench.build.coding_tasks import REPOSITORIES, feature_tests
from hasbench.envs.coding import sandbox as sb
from hasbench.paths import DATA_DIR
from hasbench.personas import domain_personas
from hasbench.scenario import leak_pattern, load_tasks, validate_file


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(coding_tasks.OUTPUT)


def test_pattern_mix_modes_and_personas(tasks):
    assert validate_file(coding_tasks.OUTPUT) == []
    assert Counter(t.adaptation_pattern for t in tasks) == {
        "A": 9,
        "B": 31,
        "C": 7,
        "D": 31,
        "E": 37,
    }
    assert {t.coordination_mode for t in tasks} == {"star", "chain", "tree", "graph"}
    assert {u.persona for t in tasks for u in t.users} == {
        p.persona_id for p in domain_personas("coding")
    }
    assert len({t.metadata["template"] for t in tasks}) >= 30
    assert {t.metadata["repository"] for t in tasks} == {r.name for r in REPOSITORIES}
    assert {t.metadata["difficulty"] for t in tasks} == {"easy", "medium", "hard"}


def test_the_build_is_byte_identical(tmp_path):
    written = coding_tasks.write(tmp_path / "coding.yaml", data_dir=tmp_path)
    assert written.read_bytes() == coding_tasks.OUTPUT.read_bytes()
    fresh, committed = tmp_path / "coding", DATA_DIR / "coding"
    files = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
    assert all((fresh / f).read_bytes() == (committed / f).read_bytes() for f in files)


def _gold_patch(task):
    return next(a for a in task.evaluation_criteria.actions if "patch" in a.name)


def _hidden_names(task):
    return [a.arguments["test"] for a in task.evaluation_criteria.env_assertions
            if a.func_name == "hidden_test_passes"]  # fmt: skip


def test_patterns_are_real(tasks):
    for task in tasks:
        patch = _gold_patch(task)
        users = task.users
        names = _hidden_names(task)
        pattern = task.adaptation_pattern
        if pattern == "A":
            (user,) = users
            assert len(user.known_info) == 1, task.task_id
            assert patch.depends_on == [f"user_0.{next(iter(user.known_info))}"]
            assert all(n.startswith("test_default_behaviour") for n in names)
        elif pattern == "B":
            (owner,) = users
            assert owner.role == "product owner" and len(owner.known_info) == 2
            assert sorted(patch.depends_on) == sorted(f"user_0.{k}" for k in owner.known_info)
            assert "test_option_value_1" in names and "test_unknown_value_is_rejected" in names
        elif pattern == "C":
            assert patch.name == "apply_protected_patch" and patch.protected, task.task_id
            assert any("control" in _channels(task, u.user_id) for u in users)
            assert not any(u.known_info for u in users)
        elif pattern == "D":
            first, second = users
            assert first.known_info.keys() == second.known_info.keys()
            assert first.known_info != second.known_info
            assert f"the {first.role}'s choice is the default" in task.task
            assert len(patch.depends_on) == 2
        elif pattern == "E":
            (reviewer,) = users
            assert _channels(task, reviewer.user_id) == {"feedback"}
            option, message = (
                reviewer.known_info["option_name"],
                reviewer.known_info["error_message"],
            )
            assert f"{option}=" in patch.arguments["patch"] and message in patch.arguments["patch"]
            assert option.replace("_", " ") not in message
            assert not leak_pattern(option).search(task.task)
            assert not leak_pattern(message).search(task.task)
            assert "test_unknown_value_is_rejected" in names
        if pattern != "C":
            assert patch.name == "apply_patch" and not patch.protected


def _channels(task, user_id):
    from hasbench.graph import RELATIONS

    return {
        channel
        for rel in task.relationships
        if rel.source == user_id
        for channel in RELATIONS[rel.label].channels
    }


def _load(files: dict[str, str], package: str, root: Path) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _run_suite(files, package, source, root):
    _load(files, package, root)
    sys.path.insert(0, str(root))
    namespace: dict = {}
    try:
        exec(compile(source, "hidden", "exec"), namespace)
        verdicts = {}
        for name, test in namespace.items():
            if name.startswith("test_"):
                try:
                    test()
                    verdicts[name] = True
                except Exception:  # noqa: BLE001 - a failing example is the finding
                    verdicts[name] = False
        return verdicts
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


def test_every_mode_holds_on_its_rendering_and_fails_on_the_original(tmp_path):
    """The repositories' own code (trusted, ours) runs in-process here."""
    count = 0
    for repo in REPOSITORIES:
        for feature in repo.features:
            names = [m.name for m in feature.modes]
            assert len(names) >= 2 and len(feature.option_names) >= 3, feature.key
            for mode in names:
                others = tuple(n for n in names if n != mode)
                source = feature.render(repo.files[feature.module], mode, others, feature.option,
                                        feature.default_message)  # fmt: skip
                suite = feature_tests(
                    feature, mode, others[0], feature.option, feature.default_message
                )
                code = suite.source("t")
                count += 1
                new = _run_suite({**repo.files, feature.module: source}, repo.name, code,
                                 tmp_path / f"new{count}")  # fmt: skip
                old = _run_suite(repo.files, repo.name, code, tmp_path / f"old{count}")
                assert all(new.values()), (feature.key, mode, new)
                assert not any(old.values()), (feature.key, mode, old)
                assert len(new) == len(suite.names) == 5
    assert count >= 90


@pytest.mark.skipif(sb.bubblewrap_problem() is not None, reason="bubblewrap cannot sandbox here")
@pytest.mark.slow
def test_automatic_checks_pass_on_one_task_per_pattern_and_mode(tasks):
    chosen, seen = [], set()
    for task in tasks:
        key = (task.adaptation_pattern, task.coordination_mode)
        if task.adaptation_pattern not in {p for p, _ in seen} or (
            task.coordination_mode not in {m for _, m in seen}
        ):
            chosen.append(task)
        seen.add(key)
    assert {t.adaptation_pattern for t in chosen} == set("ABCDE")
    assert {t.coordination_mode for t in chosen} == {"star", "chain", "tree", "graph"}
    for task in chosen:
        row = check_task(task)
        assert row.passed, (task.task_id, row.results)
