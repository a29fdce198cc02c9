"""Serving a notebook with Voila, or pages with ``hasbench serve``, and driving them in
Debian's Chromium through Playwright.

Shared by the browser tests (``tests/widgets``, ``tests/docuteam``, ``tests/serve``); a test
that needs a missing piece (Chromium, Playwright, Voila) is skipped with the reason.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def _requirements(modules=("playwright", "voila")) -> str | None:
    """Why the test cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            return f"the Python package {module!r} is not installed (pip install -e '.[dev]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def voila(notebook: Path, tmp_path: Path):
    """Serve ``notebook`` with Voila (runs under ``tmp_path``); yield its address."""
    reason = _requirements()
    if reason is not None:
        pytest.skip(reason)
    port = _free_port()
    env = {**os.environ, "HASBENCH_RUNS": str(tmp_path / "runs")}
    log_path = tmp_path / f"voila-{notebook.stem}.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--VoilaConfiguration.show_tracebacks=True"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Voila did not start:\n{log_path.read_text()}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # Voila and the kernel it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


@contextlib.contextmanager
def served(args: list[str], tmp_path: Path):
    """Run ``hasbench serve ARGS --port 0`` (on 127.0.0.1); yield (links by seat, process).

    The links are read from the lines the command prints (``  user_0 (customer): URL``,
    ``  P01 (participant): URL``);
    the server is stopped with Ctrl-C (SIGINT) at the end, as a researcher would.
    """
    reason = _requirements(("playwright",))
    if reason is not None:
        pytest.skip(reason)
    log_path = tmp_path / "serve.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "hasbench.cli", "serve", *args, "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
    )  # fmt: skip
    links: dict[str, str] = {}
    try:
        deadline = time.monotonic() + 60
        for line in server.stdout:
            if "/join/" in line or "/watch/" in line:
                label, _, link = line.strip().rpartition(": ")
                links[label.split(" ")[0].rstrip(",")] = link
            if line.startswith(("trace ", "study folder")) or time.monotonic() > deadline:
                break
        if not links:
            pytest.fail(f"hasbench serve did not start:\n{log_path.read_text()}")
        yield links, server
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


@contextlib.contextmanager
def chromium():
    """A headless Chromium browser (screenshots go to ``ARTIFACTS``)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
