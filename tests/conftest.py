"""Suite-wide rules: with HASBENCH_REQUIRE_ALL=1 (CI), a skipped test fails the run.

A skip means a piece is missing (tests/pieces.py); CI installs every piece, so there a skip
is a broken installation, not a reason to test less.
"""

import os

import pytest

_SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        _SKIPPED.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("HASBENCH_REQUIRE_ALL") == "1" and _SKIPPED:
        lines = "\n".join(f"  {line}" for line in _SKIPPED)
        print(f"\nHASBENCH_REQUIRE_ALL=1 but {len(_SKIPPED)} test(s) skipped:\n{lines}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
