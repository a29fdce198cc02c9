"""Runs a task's hidden tests in the sandbox and reports their verdicts on a private channel.

This file is a script, never imported by hasbench: the hidden test run binds it read-only
into the sandbox and starts it as ``python -s -P hidden_runner.py WORKSPACE TESTS``, with
an environment the host sets whole (no ``PYTHONPATH``, no user site). It imports only the
standard library and pytest, both found before the workspace on ``sys.path``:

1. it reads the run's key from its standard input, and takes the pipe named by
   ``HASBENCH_RESULTS_FD`` (not passed on to processes the tests start);
2. it runs pytest on the hidden test file with the hidden tests' folder as the root, its
   own configuration file, no ``conftest.py`` and no plugins found by entry point;
3. the workspace joins ``sys.path`` at the end, when the session starts, so the package
   under test imports, but never in place of the standard library or the test runner;
4. at the end it writes one JSON line to the pipe: the key, pytest's exit code and each
   test's verdict (``passed`` only when its call passed and no phase failed).

Nothing the tests print is read for verdicts: the output is only for people.
"""

import json
import os
import sys

CHANNEL_VARIABLE = "HASBENCH_RESULTS_FD"


def main() -> int:
    """Run the hidden tests; report on the channel; exit with pytest's code."""
    key = sys.stdin.read().strip()
    channel = int(os.environ.pop(CHANNEL_VARIABLE))
    os.set_inheritable(channel, False)
    workspace, tests = sys.argv[1], sys.argv[2]

    import pytest

    verdicts: dict[str, dict[str, str]] = {}

    class Reporter:
        """Collects each test's verdict from pytest's reports."""

        def pytest_sessionstart(self, session: object) -> None:
            """Let the tests import the package under test (after everything else)."""
            sys.path.append(workspace)

        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            """Keep the worst outcome of a test's phases."""
            name = report.nodeid.split("::")[-1]
            verdict = verdicts.setdefault(name, {"outcome": "failed", "detail": ""})
            if report.failed:
                verdict["outcome"] = "error" if report.when != "call" else "failed"
                crash = getattr(report.longrepr, "reprcrash", None)
                detail = getattr(crash, "message", None) or str(report.longrepr)
                verdict["detail"] = detail.strip().splitlines()[0] if detail.strip() else ""
            elif report.when == "call" and report.passed:
                verdict["outcome"] = "passed"
            elif report.when == "call" and report.skipped:
                verdict["outcome"] = "skipped"

    code = pytest.main(pytest_arguments(tests), plugins=[Reporter()])
    report = {"key": key, "exit": int(code), "tests": verdicts}
    os.write(channel, (json.dumps(report, sort_keys=True) + "\n").encode("utf-8"))
    os.close(channel)
    return int(code)


def pytest_arguments(tests: str) -> list[str]:
    """The arguments of the hidden tests' pytest session: their folder as the root, its file."""
    root = os.path.dirname(tests)
    return ["-c", os.path.join(root, "pytest.ini"), "--rootdir", root, "--noconftest",
            "-p", "no:cacheprovider", "--no-header", "--color=no", "-q", "--tb=line",
            tests]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
