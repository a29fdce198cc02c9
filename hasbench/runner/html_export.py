"""HTML exports of executed notebooks that show their widgets without a kernel or a network.

An export holds each widget's saved state; a browser draws them with the Jupyter widgets'
HTML manager (``@jupyter-widgets/html-manager``, loaded through require.js). nbconvert
points both at a CDN; here they come from a local copy beside the export
(``hasbench-widgets/``), so a report opens offline, years later, from a USB stick. The
export's template (``templates/offline.html.j2``) is nbconvert's lab template without
MathJax, which the notebooks do not use and which would be its one request to a CDN.

The two scripts are not part of any Python package, so ``make setup`` fetches the pinned
npm packages once with npm (:func:`main`) into :data:`SCRIPTS_DIR` (inside the virtual
environment, never committed). Where they are
missing (no npm), exports fall back to the CDN and say so.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import warnings
from pathlib import Path

EMBED, REQUIRE = "embed-amd.js", "require.js"
PACKAGES = {"@jupyter-widgets/html-manager@1.0.15": EMBED, "requirejs@2.3.7": REQUIRE}
"""npm package -> the script of it an export loads (html-manager 1.0 draws ipywidgets 8)."""
SCRIPTS_DIR = Path(sys.prefix) / "share" / "hasbench" / "widget-scripts"
"""Where ``make setup`` puts the scripts (with their licence notices and icon fonts)."""
FOLDER = "hasbench-widgets"
"""The folder beside an export that holds its copy of the scripts."""
TEMPLATES = Path(__file__).with_name("templates")
"""The export's template (``offline.html.j2``)."""


def load_jsonschema() -> None:
    """Import jsonschema (papermill and nbconvert use it) without rfc3987-syntax's IRI grammar.

    When rfc3987-syntax is installed (jupyterlab brings it), jsonschema imports it to check
    the "iri" format, and it builds an Earley parser at import: about 3 CPU-seconds in every
    process that runs or exports a notebook, for a format no notebook file uses. The
    grammar is kept out only while jsonschema loads; later imports of it work as usual.
    """
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # import: ImportError
    try:
        import jsonschema  # noqa: F401
    finally:
        del sys.modules["rfc3987_syntax"]


def scripts_available(directory: Path = SCRIPTS_DIR) -> bool:
    """Whether the widget scripts have been fetched."""
    return all((directory / script).is_file() for script in PACKAGES.values())


def fetch_scripts(directory: Path = SCRIPTS_DIR) -> None:
    """Fetch the pinned npm packages with npm and keep their scripts in ``directory``.

    Raises:
        RuntimeError: npm is missing or failed (the message says which and how to fix it).
    """
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (apt-get install npm), so HTML exports will "
                           "load their widget scripts from a CDN")  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for package, script in PACKAGES.items():
            done = subprocess.run(
                [npm, "pack", package, "--pack-destination", tmp, "--silent"],
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"npm pack {package} failed: {done.stderr.strip()[-400:]}")
            archive = Path(tmp) / done.stdout.strip().splitlines()[-1]
            with tarfile.open(archive) as tar:
                members = [m for m in tar.getmembers() if m.isfile() and _kept(m.name, script)]
                tar.extractall(tmp, members=members, filter="data")
            for member in members:
                shutil.copyfile(Path(tmp) / member.name, directory / Path(member.name).name)


def _kept(name: str, script: str) -> bool:
    """Whether a file of an npm package is one an export needs.

    Its script, the licence notices of what the script bundles, and the icon fonts its
    styles name (the formats browsers take first).
    """
    path = Path(name)
    if path.name == script:
        return True
    extras = path.suffix in (".woff2", ".woff") or path.name.endswith(".LICENSE.txt")
    return path.parent.name == "dist" and extras


def export_html(notebook: Path) -> Path:
    """Write an executed notebook as HTML beside it, with its saved widget state.

    The widgets render in a browser without a kernel, from the local copy of the widget
    scripts in ``hasbench-widgets/`` beside the export (copied there once per folder); the
    other outputs are plain HTML. Without fetched scripts the export loads them from a CDN
    and a warning says so.
    """
    load_jsonschema()
    import nbformat
    from nbconvert import HTMLExporter

    options = {"extra_template_paths": [str(TEMPLATES)], "template_file": "offline.html.j2"}
    if scripts_available():
        local = notebook.parent / FOLDER
        if not scripts_available(local):
            shutil.copytree(SCRIPTS_DIR, local, dirs_exist_ok=True)
        options["widget_renderer_url"] = f"{FOLDER}/{EMBED}"
        options["require_js_url"] = f"{FOLDER}/{REQUIRE}"
    else:
        warnings.warn(
            f"{notebook.with_suffix('.html')}: its widgets load their scripts from a CDN (no "
            f"local copy in {SCRIPTS_DIR}: run `make setup` with npm installed)",
            stacklevel=2,
        )
    node = nbformat.read(notebook, as_version=4)
    body, _ = HTMLExporter(template_name="lab", **options).from_notebook_node(node)
    path = notebook.with_suffix(".html")
    path.write_text(body, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Fetch the widget scripts if missing (``make setup`` runs it); setup goes on without."""
    parser = argparse.ArgumentParser(description=fetch_scripts.__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="fetch even if present")
    args = parser.parse_args(argv)
    if scripts_available() and not args.force:
        return 0
    try:
        fetch_scripts()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        print(f"hasbench: widget scripts not fetched: {error}", file=sys.stderr)
        return 0  # setup goes on; exports fall back to the CDN and say so
    print(f"hasbench: widget scripts for offline HTML exports in {SCRIPTS_DIR}")
    return 0
