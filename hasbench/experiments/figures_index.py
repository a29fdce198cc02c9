"""Every figure notebook in one go, and ``figures/index.html`` showing what they wrote.

:func:`run_all` executes the figure notebooks (RQ1–RQ4, the user-simulator study, the
DocuTeam study and the simulated DocuTeam study) with papermill, each writing into
``<figures>/<folder>``, then :func:`write_index` writes ``<figures>/index.html``: per
notebook a link to its HTML report (the executed notebook's export, which opens without a
kernel or a network), its notes, every figure at the page's width, every table inline with
its notes, links to every file (CSV, Markdown, LaTeX, PNG, PDF), and what produced them:
the parameters, the backends, the package version, the episodes, model calls and cache
hits (read from the ``manifest.json`` each experiment writes, or the DocuTeam study's
``analysis.json``: a simulated study names who played each part). The page has no
timestamps, so the same outputs give the same page.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hasbench.paths import FIGURES_DIR
from hasbench.runner.notebooks import (
    MANIFEST,
    FigureNotebook,
    figure_notebooks,
    find_notebook,
    notebook_parameters,
)

INDEX = "index.html"
SIMULATED_ROLES = ("user", "engine", "raters", "respondent")
"""Who played each part of a simulated DocuTeam study (its data's metadata)."""
TABLE_SUFFIXES = (".csv", ".md", ".tex")
FIGURE_SUFFIXES = (".png", ".pdf")


class NotebookRunError(RuntimeError):
    """One or more figure notebooks failed; the index was written with their errors."""


def run_all(
    parameters: Mapping[str, Any] | None = None,
    executed_dir: str | Path | None = None,
    *,
    figures_dir: str | Path | None = None,
    per_notebook: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool = True,
) -> Path:
    """Execute every figure notebook, then write the index; return the index path.

    Args:
        parameters: parameters passed to every notebook (e.g. ``seed``).
        executed_dir: where the executed copies go (default ``RUNS_DIR/notebooks``).
        figures_dir: the figures directory (default ``FIGURES_DIR``); each notebook's
            ``output_dir`` is its folder in it.
        per_notebook: extra parameters by notebook name (``{"rq3": {...}}``).
        progress: say which notebooks run (each one's seconds and CPU-s are printed as it
            ends; the notebooks run side by side, so without their cell progress).

    Raises:
        NotebookRunError: a notebook failed (the others still ran and the index lists the
            failure).
    """
    from hasbench.runner.notebooks import run_side_by_side

    figures = Path(figures_dir) if figures_dir is not None else FIGURES_DIR
    notebooks = sorted(figure_notebooks(), key=_queue_place)
    runs = [
        (notebook.name, {**(parameters or {}), **(per_notebook or {}).get(notebook.name, {}),
                         "output_dir": str(figures / notebook.folder)})
        for notebook in notebooks
    ]  # fmt: skip
    if progress:
        print(f"running {', '.join(name for name, _ in runs)}, side by side ...", flush=True)
    executed: dict[str, Path] = {}
    errors: dict[str, str] = {}
    for done in run_side_by_side(runs, executed_dir):
        executed[done.name] = done.executed
        if done.error is not None:
            errors[done.name] = done.error
        print(f"{done.name} {'failed' if done.error else 'done'} in {done.seconds:.1f} s "
              f"({done.cpu:.1f} CPU-s)", flush=True)  # fmt: skip
    index = write_index(figures, executed, errors)
    if errors:
        failed = "; ".join(f"{name}: {message}" for name, message in errors.items())
        raise NotebookRunError(f"{len(errors)} notebook(s) failed ({failed}); see {index}")
    return index


def _queue_place(notebook: FigureNotebook) -> tuple[bool, bool]:
    """Where a notebook waits in ``run_all``'s queue (declared order within each place).

    The long notebook first, beside the others; then those that run no episodes (a core
    each); last those that run episodes (they take ``benchmark``), which spread over
    worker processes, so the last of them can use every core the others leave.
    """
    runs_episodes = "benchmark" in notebook_parameters(find_notebook(notebook.name))
    return (not notebook.runs_long, runs_episodes)


def describe(folder: Path) -> dict[str, Any] | None:
    """What produced a folder's outputs, from its manifest (None when it has none).

    Returns ``parameters``, ``backends``, ``package_version``, ``model_calls``,
    ``cache_hits``, ``episodes`` and ``notes`` (the last four None where not applicable).
    """
    manifest = folder / MANIFEST
    if manifest.exists():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        return {
            "parameters": data["parameters"],
            "backends": data["backends"],
            "package_version": data["package_version"],
            "model_calls": data["model_calls"],
            "cache_hits": data["cache_hits"],
            "episodes": data["episodes"],
            "notes": data["notes"],
        }
    study = folder / "analysis.json"  # the DocuTeam study analysis
    if study.exists():
        data = json.loads(study.read_text(encoding="utf-8"))
        meta = data.get("metadata", {})
        simulated = meta.get("participants") == "simulated"
        if simulated:
            source = f"simulated participants ({data['source']})"
        else:
            source = "synthetic example data" if data["synthetic"] else data["source"]
        backends = {"none": [f"statistical analysis of study data ({source})"]}
        if simulated:
            backends = {role: [meta[role]] for role in SIMULATED_ROLES if meta.get(role)}
        return {
            "parameters": {"data": source, "alpha": data["alpha"], "seed": data["seed"]},
            "backends": backends,
            "package_version": data["versions"]["hasbench"],
            "model_calls": None,
            "cache_hits": None,
            "episodes": None,
            "notes": [data["note"]] if data.get("note") else [],
        }
    return None


STYLE = (
    "body{font-family:sans-serif;max-width:80em;margin:auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;"
    "padding:2px 6px;text-align:left;vertical-align:top;font-size:0.9em}"
    "td.num{text-align:right}figure{margin:1em 0}figure img{max-width:100%;height:auto;"
    "display:block;border:1px solid #eee}figcaption{font-size:0.9em;color:#444}"
    ".note{color:#333;font-size:0.9em}details{margin:0.5em 0}"
    ".scroll{overflow-x:auto}"
)


def write_index(
    figures_dir: Path, executed: Mapping[str, Path], errors: Mapping[str, str] | None = None
) -> Path:
    """Write ``figures_dir/index.html`` for every figure notebook; return its path."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>hasbench figures</title>',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{STYLE}</style>",
        "</head><body>",
        "<h1>hasbench: paper tables and figures</h1>",
    ]
    for notebook in figure_notebooks():
        parts += _section(notebook, figures_dir, executed.get(notebook.name), (errors or {}))
    parts.append("</body></html>")
    figures_dir.mkdir(parents=True, exist_ok=True)
    index = figures_dir / INDEX
    index.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return index


def _section(
    notebook: FigureNotebook, figures_dir: Path, executed: Path | None, errors: Mapping[str, str]
) -> list[str]:
    e = html.escape
    folder = figures_dir / notebook.folder
    out = [f'<h2 id="{e(notebook.name)}">{e(notebook.title)}</h2>']
    run = f"notebook <code>{e(notebook.name)}</code>"
    if executed is not None:
        report = executed.with_suffix(".html")
        run += f' · <a href="{e(_rel(report, figures_dir))}">its report (HTML)</a>'
        run += f' · <a href="{e(_rel(executed, figures_dir))}">executed notebook</a>'
    out.append(f"<p>{run}</p>")
    if notebook.name in errors:
        out.append(f"<p><strong>Failed:</strong> {e(errors[notebook.name])}</p>")
    info = describe(folder)
    if info is None:
        out.append("<p>No outputs yet.</p>")
        return out
    out += [f'<p class="note"><em>Note.</em> {e(note)}</p>' for note in info["notes"]]
    files = sorted(p for p in folder.iterdir() if p.is_file())
    for stem in sorted({p.stem for p in files if p.suffix in FIGURE_SUFFIXES}):
        shown = [p for p in files if p.stem == stem and p.suffix in FIGURE_SUFFIXES]
        links = " · ".join(_link(p, figures_dir) for p in shown)
        png = folder / f"{stem}.png"
        image = f'<img src="{e(_rel(png, figures_dir))}" alt="{e(stem)}">' if png.exists() else ""
        out.append(f"<figure>{image}<figcaption>{e(stem)}: {links}</figcaption></figure>")
    for stem in sorted({p.stem for p in files if p.suffix in TABLE_SUFFIXES}):
        mine = [p for p in files if p.stem == stem and p.suffix in TABLE_SUFFIXES]
        links = [_link(p, figures_dir) for p in mine]
        out.append(f"<h3>{e(stem)}</h3><p>{' · '.join(links)}</p>")
        markdown = folder / f"{stem}.md"
        if markdown.exists():
            out += _table(markdown.read_text(encoding="utf-8"))
    others = [p for p in files if p.suffix not in (*TABLE_SUFFIXES, *FIGURE_SUFFIXES)]
    if others:
        out.append(f"<p>Other files: {' · '.join(_link(p, figures_dir) for p in others)}</p>")
    out += _provenance(info)
    return out


def _provenance(info: dict[str, Any]) -> list[str]:
    """What produced a folder's outputs, as a folded table."""
    e = html.escape
    rows = [("package version", info["package_version"])]
    rows += [(f"backend: {role}", ", ".join(names)) for role, names in info["backends"].items()]
    rows += [(f"parameter: {k}", json.dumps(v)) for k, v in info["parameters"].items()]
    if info["episodes"] is not None:
        rows.append(("episodes", str(info["episodes"])))
        rows.append(("model calls this run", str(info["model_calls"])))
        rows.append(("cache hits this run", str(info["cache_hits"])))
    out = ["<details><summary>What produced these outputs</summary><table>"]
    out += [f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in rows]
    return [*out, "</table></details>"]


CELL_SPLIT = re.compile(r"(?<!\\)\|")
"""A Markdown table's cell boundary (an escaped ``\\|`` is part of a cell)."""
NUMBER = re.compile(r"^(?:\*\*)?[+-]?[\d.]+(?: \[|$| \()")
"""A cell that starts with a number (right-aligned)."""


def _table(markdown: str) -> list[str]:
    """A table written by ``write_table`` (a Markdown pipe table, then its notes) as HTML."""
    e = html.escape
    lines = markdown.splitlines()
    rows = [
        [cell.strip().replace("\\|", "|") for cell in CELL_SPLIT.split(line.strip())[1:-1]]
        for line in lines
        if line.startswith("|")
    ]
    if len(rows) < 2:
        return []
    header, body = rows[0], rows[2:]  # rows[1] is the alignment row

    def cell(text: str, tag: str) -> str:
        shown = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", e(text))
        numeric = ' class="num"' if tag == "td" and NUMBER.match(text) else ""
        return f"<{tag}{numeric}>{shown}</{tag}>"

    out = ['<div class="scroll"><table>', "<tr>" + "".join(cell(h, "th") for h in header) + "</tr>"]
    out += ["<tr>" + "".join(cell(c, "td") for c in row) + "</tr>" for row in body]
    out.append("</table></div>")
    notes = [line.removeprefix("Note: ") for line in lines if line.startswith("Note: ")]
    return out + [f'<p class="note"><em>Note.</em> {e(note)}</p>' for note in notes]


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


def _link(path: Path, figures_dir: Path) -> str:
    return f'<a href="{html.escape(_rel(path, figures_dir))}">{html.escape(path.suffix[1:])}</a>'
