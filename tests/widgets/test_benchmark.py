"""The widget benchmark script runs and reports the per-step render time."""

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "widgets.py"


def test_benchmark_reports_mean_and_max_ms_per_step():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--turns", "40"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "trace: 40 turns, 170 events" in done.stdout
    match = re.search(
        r"mean ([\d.]+) ms, median [\d.]+ ms, max ([\d.]+) ms over 169 moves", done.stdout
    )
    assert match and float(match.group(1)) <= float(match.group(2))
