"""Episodes a grid shares with other results stores, taken from there instead of run again.

An episode's key is a hash of everything that determines it (its task's content, setting,
backends, seed, whether its process is judged, the code and the prompts; see
:mod:`hasbench.runner.experiment`), so an intact record without an error under the same key
in another store *is* the episode the grid would run: its record and trace are copied, byte
for byte. The figure notebooks share many episodes (RQ2's A1 and A3 episodes are RQ1's with
the sweep agent), and :func:`adopt` lets each run only what no other store holds.

An episode whose process is not judged plays exactly as the same episode with its process
judged (judging reads the finished trace and changes nothing before it): its trace is the
same text, its outcome and trace metrics the same numbers. So a judged record also serves
the unjudged episode: the copy carries the unjudged episode's identity and key and no
process scores, as running it would have written. (The other way round a judge would have
to run, so an unjudged record never serves a judged episode.)

A source is read as a resumed run reads its own store: a damaged record or a trace whose
SHA-256 differs from its record's is never taken, and the episode runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hasbench.runner import store as results
from hasbench.runner.experiment import Cell, episode_key


def adopt(
    store: Path, cells: Sequence[Cell], done: dict[str, dict[str, Any]], sources: Sequence[Path]
) -> int:
    """Copy into ``store`` the episodes of ``cells`` not done there that a source holds.

    Args:
        store: the results store being run.
        cells: the grid's episodes.
        done: the store's intact records by key; the adopted ones are added.
        sources: other results stores to take episodes from (``store`` itself is skipped).

    Returns:
        How many episodes were adopted.
    """
    wanted: dict[str, tuple[Cell, bool]] = {}  # source key -> (cell, judged record for it)
    for cell in cells:
        if cell.key in done and done[cell.key]["error"] is None:
            continue
        wanted.setdefault(cell.key, (cell, False))
        if not cell.identity["judge_process"]:
            judged = episode_key({**cell.identity, "judge_process": True})
            wanted.setdefault(judged, (cell, True))
    adopted = 0
    for source in sources:
        if not wanted or Path(source).resolve() == Path(store).resolve():
            continue
        try:
            names = set(os.listdir(Path(source) / "episodes"))
        except OSError:
            continue
        there = [key for key in wanted if f"{key}.json" in names]
        found, _ = results.scan_store(source, there, verify=True)  # intact ones, summarized
        for key, summary in found.items():
            cell, judged = wanted[key]
            if summary["error"] is not None or cell.key in done:
                continue
            text = (Path(source) / "episodes" / f"{key}.json").read_text(encoding="utf-8")
            record = json.loads(text)
            trace = (Path(source) / record["trace"]).read_text(encoding="utf-8")
            if judged:
                record = {**record, **cell.identity, "key": cell.key, "process": None}
                text = None  # encoded anew
            record["trace"] = results.write_trace(store, cell.key, trace)
            results.write_record(store, cell.key, record, text=text)
            done[cell.key] = summary  # what a run reads of it: no error
            adopted += 1
            wanted.pop(cell.key, None)
            if not cell.identity["judge_process"]:
                wanted.pop(episode_key({**cell.identity, "judge_process": True}), None)
    return adopted


def neighbour_stores(root: Path) -> list[Path]:
    """The results stores in ``root`` and one level below it (``runs/rq1``, ``runs/rq4/coding``).

    A store is a folder with ``episodes/`` and ``experiments/`` (a store's ``quarantine/``
    is not one).
    """
    found = [
        folder.parent
        for pattern in ("*/episodes", "*/*/episodes")
        for folder in sorted(Path(root).glob(pattern))
        if (folder.parent / results.EXPERIMENTS).is_dir()
    ]
    return found
