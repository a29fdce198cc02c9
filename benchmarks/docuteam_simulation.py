"""The simulated DocuTeam study offline: seconds per participant session and analysis.

Runs ``simulate_study`` with the offline defaults (scripted personas, ``scripted:docuteam``
agents, the rule rater and scripted questionnaires) for ``--participants`` participants,
best of ``--repeat`` runs (the machine may be shared), then the study analysis
(tests, agreement, power, tables and figures) on its CSV. Prints sessions per second,
milliseconds per session and per participant step, and the analysis seconds; the target
of issue 17 is that the offline default study finishes in minutes.

Run: ``.venv/bin/python benchmarks/docuteam_simulation.py [--participants N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from hasbench.docuteam.simulation import SimulationConfig, simulate_study
from hasbench.docuteam.simulation.user import UserLog
from hasbench.docuteam.study import run_study_analysis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=8, help="simulated participants")
    parser.add_argument("--budget", type=int, default=12, help="steps per session")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = parser.parse_args()
    config = SimulationConfig(participants=args.participants, budget=args.budget)
    best = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.repeat):
            out = Path(tmp) / f"run{run}"
            start = time.perf_counter()
            study = asyncio.run(simulate_study(config, out))
            best = min(best, time.perf_counter() - start)
        sessions = len(study.sessions)
        steps = sum(len(UserLog.read(s.user_log).steps) for s in study.sessions)
        start = time.perf_counter()
        _, paths = run_study_analysis(study.csv, Path(tmp) / "figures", seed=0)
        analysis = time.perf_counter() - start
    print(f"participants: {args.participants}, sessions: {sessions}, participant steps: {steps}")
    print(
        f"simulation: {best:.2f} s (best of {args.repeat}), {sessions / best:.1f} sessions/s, "
        f"{1000 * best / sessions:.0f} ms/session, {1000 * best / steps:.1f} ms/step"
    )
    print(f"analysis: {analysis:.2f} s for {len(paths)} files")
    print(f"total: {best + analysis:.1f} s")


if __name__ == "__main__":
    main()
