"""Every study's tables are a function of its grid, whatever else its results folder holds.

Each RQ study runs a first grid, then a second one (fewer tasks, another user simulator,
another seed) into the same results folder: the second run's tables and manifest are
those of the second grid alone (byte for byte the tables of the same grid run into an
empty folder). Running the first grid again reuses its episodes (not one new) and gives
its tables back byte for byte.
"""

import json

import pytest

from hasbench.experiments import robustness, rq1, rq2, rq3, rq4
from hasbench.experiments.defaults import OFFLINE_AGENTS
from hasbench.experiments.study import Study
from hasbench.runner import load_results
from hasbench.runner.store import stored_experiments

GUARDED = "scripted:user-guarded"
FIRST = {"domains": ["mock"], "max_tasks_per_domain": 4, "seed": 0}
SECOND = {"domains": ["mock"], "max_tasks_per_domain": 2, "seed": 1}
STUDIES = {
    "rq1": (rq1, {"user_model": "scripted:user"}, {"user_model": GUARDED}),
    "rq2": (rq2, {"user_model": "scripted:user"}, {"user_model": GUARDED}),
    "rq3": (rq3, {"user_model": "scripted:user"}, {"user_model": GUARDED}),
    "rq4": (rq4, {"user_model": "scripted:user"}, {"user_model": GUARDED}),
    "robustness": (
        robustness,
        {"user_models": ["scripted:user", GUARDED]},
        {"user_models": [GUARDED]},
    ),
}


def tables(folder):
    """Every table file of an output folder, by name, as bytes."""
    kinds = (".csv", ".md", ".tex")
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in kinds}


def manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def run(module, parameters, output_dir, results_dir):
    return module.run(**parameters, output_dir=output_dir, results_dir=results_dir,
                      progress=False)  # fmt: skip


@pytest.mark.parametrize("name", list(STUDIES))
def test_tables_count_exactly_the_grid_asked_for(name, tmp_path):
    module, first_users, second_users = STUDIES[name]
    first, second = {**FIRST, **first_users}, {**SECOND, **second_users}
    shared = tmp_path / "runs"
    one = run(module, first, tmp_path / "one", shared)
    two = run(module, second, tmp_path / "two", shared)
    alone = run(module, second, tmp_path / "alone", tmp_path / "fresh" / "runs")
    assert sum(s.reused for s in alone["summaries"]) == 0  # no store beside it to copy from

    # the second run's results, tables and manifest are those of the second grid alone
    results = two["results"]
    assert set(results["seed"]) == {1} and set(results["user_model"]) == {GUARDED}
    assert results["task_id"].nunique() == 2
    assert sorted(results["key"]) == sorted(alone["results"]["key"])
    assert tables(tmp_path / "two") == tables(tmp_path / "alone")
    shown = manifest(tmp_path / "two")
    assert shown["episodes"] == len(results) == len(alone["results"])
    assert shown["episode_keys"] == sorted(results["key"])
    assert shown["backends"]["user"] == [GUARDED]
    assert shown["parameters"]["seed"] == 1 and shown["parameters"]["max_tasks_per_domain"] == 2
    assert [e["grid_episodes"] for e in shown["experiments"]] == [s.total for s in two["summaries"]]
    assert sum(e["grid_episodes"] for e in shown["experiments"]) == shown["episodes"]
    # both experiments are kept side by side, neither overwrote the other
    stores = {s.directory for s in one["summaries"]}
    for store in stores:
        assert len(stored_experiments(store)) == 2

    # the first grid again: every episode reused, its tables back byte for byte
    episodes = sum(len(list((s / "episodes").glob("*.json"))) for s in stores)
    again = run(module, first, tmp_path / "again", shared)
    assert sum(s.ran for s in again["summaries"]) == 0
    assert sum(len(list((s / "episodes").glob("*.json"))) for s in stores) == episodes
    assert tables(tmp_path / "again") == tables(tmp_path / "one")
    assert (
        manifest(tmp_path / "again")["episode_keys"] == manifest(tmp_path / "one")["episode_keys"]
    )
    assert manifest(tmp_path / "again")["episodes_run"] == 0
    # load_results without a key means the experiment run last: the first one again
    if len(stores) == 1:
        (store,) = stores
        assert sorted(load_results(store)["key"]) == sorted(one["results"]["key"])


def test_a_study_copies_the_episodes_another_study_beside_it_ran_and_tables_stay_the_same(
    tmp_path,
):
    grid = {"domains": ["mock"], "max_tasks_per_domain": 3}
    rq1.run(**grid, output_dir=tmp_path / "rq1", results_dir=tmp_path / "runs" / "rq1",
            progress=False)  # fmt: skip
    beside = rq2.run(**grid, output_dir=tmp_path / "rq2", results_dir=tmp_path / "runs" / "rq2",
                     progress=False)  # fmt: skip
    alone = rq2.run(**grid, output_dir=tmp_path / "alone", progress=False,
                    results_dir=tmp_path / "elsewhere" / "rq2")  # fmt: skip
    # RQ2's A1 and A3 episodes of the sweep agent are RQ1's: copied; its A4 ones run
    assert (beside["summary"].reused, beside["summary"].ran) == (2 * 3, 3)
    assert (alone["summary"].reused, alone["summary"].ran) == (0, 3 * 3)
    assert tables(tmp_path / "rq2") == tables(tmp_path / "alone")
    assert (
        manifest(tmp_path / "rq2")["episode_keys"] == manifest(tmp_path / "alone")["episode_keys"]
    )
    # a plan beside them copies before it counts: nothing left to time
    (plan,) = rq2.plan(**grid, results_dir=tmp_path / "runs" / "rq2-again")
    assert plan.stored == plan.total == 3 * 3 and sum(plan.timed.values()) == 0


def test_each_study_declares_its_grid_and_tables_not_the_loop():
    for module in (rq1, rq2, rq3, rq4, robustness):
        assert isinstance(module.STUDY, Study)
        assert module.STUDY.analyse.__module__ == module.__name__
    assert rq4.STUDY.grid(["scripted:strong"], ["scripted:user"], "rule", ["mock"]).name == (
        "rq4_mock"
    )


@pytest.mark.parametrize(
    ("module", "given", "message"),
    [
        (rq1, {"max_tasks_per_domain": 0}, "rq1: parameter max_tasks_per_domain = 0: expected"),
        (rq2, {"seed": -1}, "rq2: parameter seed = -1: expected a whole number of at least 0"),
        (rq3, {"domains": "retail"}, "rq3: parameter domains = 'retail': expected a list"),
        (rq4, {"domains": ["retial"]}, "rq4: parameter domains = ['retial']: no such domain"),
        (rq1, {"agent_models": "openai/x"}, "rq1: parameter agent_models = 'openai/x'"),
        (robustness, {"user_models": "scripted:user"}, "robustness: parameter user_models ="),
    ],
)
def test_a_bad_parameter_is_refused_before_anything_runs(module, given, message, tmp_path):
    from hasbench.experiments.study import ParameterError

    with pytest.raises(ParameterError, match=message.replace("[", r"\[").replace("(", r"\(")):
        module.plan(**given, results_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def built_benchmark(folder, task_ids):
    """A built HAS-Bench folder holding some mock tasks, with its manifest."""
    from hasbench.benchmark import write_manifest
    from hasbench.build.builder import dump_tasks
    from hasbench.paths import TASKS_DIR
    from hasbench.scenario import load_tasks

    (folder / "tasks").mkdir(parents=True)
    tasks = [t for t in load_tasks(TASKS_DIR / "examples.yaml") if t.task_id in task_ids]
    (folder / "tasks" / "mock.yaml").write_text(dump_tasks(tasks), encoding="utf-8")
    sources = {"tau2-bench": {"release": "τ²-bench v0.1.3", "origin": "a test", "files": {}}}
    write_manifest(folder, [folder / "tasks" / "mock.yaml"], sources, {"hasbench": "test"})
    return folder


def test_a_study_runs_the_tasks_of_a_built_benchmark_and_says_so(tmp_path):
    built = built_benchmark(tmp_path / "has-bench", {"mock_A_001", "mock_C_001"})
    label = "HAS-Bench (τ²-bench v0.1.3 from a test)"
    done = rq1.run(domains=["mock"], output_dir=tmp_path / "out", results_dir=tmp_path / "runs",
                   progress=False, benchmark=str(built))  # fmt: skip
    assert sorted(done["results"]["task_id"].unique()) == ["mock_A_001", "mock_C_001"]
    shown = manifest(tmp_path / "out")
    assert shown["parameters"]["benchmark"] == str(built)
    assert shown["benchmark"]["name"] == "HAS-Bench" and shown["benchmark"]["label"] == label
    assert shown["benchmark"]["sources"] == {"tau2-bench": "τ²-bench v0.1.3"}
    assert shown["benchmark"]["modified"] == []
    assert [e["benchmark"]["name"] for e in shown["experiments"]] == ["HAS-Bench"]
    for name in ("table4", "macro_deltas", "safety_c", "rescue"):
        note = f"Tasks: {label}, read from {built.resolve()}."
        assert note in (tmp_path / "out" / f"{name}.md").read_text(), name
    # the same grid on the generated tasks names them instead, in a store of its own key
    generated = rq1.run(domains=["mock"], max_tasks_per_domain=2, output_dir=tmp_path / "gen",
                        results_dir=tmp_path / "runs", progress=False)  # fmt: skip
    assert manifest(tmp_path / "gen")["benchmark"]["name"] == "hasbench-generated"
    assert (
        "Tasks: hasbench-generated (the project's own tasks"
        in (tmp_path / "gen" / "table4.md").read_text()
    )
    assert len(stored_experiments(tmp_path / "runs")) == 2
    assert len(generated["results"]) == 2 * 2 * len(OFFLINE_AGENTS)  # tasks × A1, A3 × agents


def test_a_benchmark_edited_after_its_build_is_named_so(tmp_path):
    built = built_benchmark(tmp_path / "has-bench", {"mock_A_001"})
    with (built / "tasks" / "mock.yaml").open("a", encoding="utf-8") as handle:
        handle.write("\n# edited by hand\n")
    rq3.run(domains=["mock"], output_dir=tmp_path / "out", results_dir=tmp_path / "runs",
            progress=False, benchmark=built)  # fmt: skip
    assert manifest(tmp_path / "out")["benchmark"]["modified"] == ["tasks/mock.yaml"]
    assert (
        "Its task files tasks/mock.yaml were edited after the build"
        in (tmp_path / "out" / "table5.md").read_text()
    )


@pytest.mark.parametrize("module", [rq1, rq2, rq3, rq4, robustness])
def test_a_bad_benchmark_is_one_line_naming_notebook_parameter_and_value(module, tmp_path):
    from hasbench.experiments.study import ParameterError

    name = module.STUDY.name
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "mine.yaml").write_text("[]\n")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "benchmark.json").write_text("{")
    cases = {
        str(tmp_path / "missing"): "no such folder",
        str(tmp_path / "loose"): "is not a built benchmark (no benchmark.json; hasbench build "
        "has-bench writes one)",
        str(tmp_path / "broken"): "benchmark.json: not a benchmark manifest",
        3: "expected the folder of a built HAS-Bench (hasbench build has-bench writes one), "
        "or None for the generated tasks",
    }
    for value, reason in cases.items():
        with pytest.raises(ParameterError) as raised:
            module.plan(domains=["mock"], results_dir=tmp_path / "runs", benchmark=value)
        message = str(raised.value)
        assert message.startswith(f"{name}: parameter benchmark = {value!r}: ")
        assert "\n" not in message
        assert reason in message
    assert not (tmp_path / "runs").exists()
