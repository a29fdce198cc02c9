"""The warm worker's prepared pytest configuration, outside any sandbox: which sessions take
it, and that the sessions hasbench starts are among them (warm runs against cold ones are in
test_coding_warm.py, which needs bubblewrap)."""

import subprocess
import sys
import textwrap

from hasbench.envs.coding import warm as warm_workers


def test_a_session_with_hasbench_s_arguments_starts_from_the_prepared_configuration(tmp_path):
    """The hidden-test runner's and run_tests' sessions name the plugins it was built for."""
    probe = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(warm_workers.WORKER_SOURCE.parent)!r})
        import _pytest.config as pytest_config
        import hidden_runner
        import warm_worker
        from hasbench.envs.coding.environment import PYTEST_FLAGS

        sessions = [hidden_runner.pytest_arguments("/hidden/test_hidden.py"), PYTEST_FLAGS]
        print(all(warm_worker._plugin_args(args) == warm_worker.PREPARED_PLUGIN_ARGS
                  for args in sessions))
        warm_worker._prepare_pytest_config()
        prepared = dict(warm_worker.PREPARED)
        args = ["-q", "-p", "no:cacheprovider", "tests"]
        first = pytest_config.get_config(list(args), None, prog="pytest.main()")
        again = pytest_config.get_config(list(args), None, prog="pytest.main()")
        warm_worker._prepare_pytest_config()
        other = pytest_config.get_config(["-p", "no:warnings", "x"], None, prog="pytest.main()")
        print(first is prepared[(("prog", "pytest.main()"),)],
              first.invocation_params.args == tuple(args),
              first.invocation_params.dir == Path.cwd(),
              first.pluginmanager.is_blocked("cacheprovider"),
              all(again is not config for config in prepared.values()),
              all(other is not config for config in warm_worker.PREPARED.values()),
              other.pluginmanager.is_blocked("warnings"))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.stdout.split() == ["True"] * 8, run.stderr[-2000:]
