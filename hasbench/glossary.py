"""Definitions of the metrics and words the workbench shows, read from ``docs/metrics.md``.

``docs/metrics.md`` has one ``##`` section per metric; the names in backticks in a
heading are the column names it defines, and the section's first paragraph is the short
definition. Widgets show that definition as a tooltip and notebooks link to the section,
so a metric is explained in one place only::

    ## Human Intervention Rate (`hir`, `hir_a3`)

    The share of an episode's steps that humans took ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from hasbench.paths import REPO_ROOT

METRICS_DOC = REPO_ROOT / "docs" / "metrics.md"


@dataclass(frozen=True)
class Term:
    """One section of the metrics document.

    Attributes:
        title: the heading without its column names (``Human Intervention Rate``).
        names: the column names it defines (``("hir", "hir_a3")``).
        definition: the section's first paragraph, on one line.
        anchor: the heading's anchor in the rendered Markdown (GitHub and JupyterLab).
    """

    title: str
    names: tuple[str, ...]
    definition: str
    anchor: str


def parse(text: str, source: str = "<metrics>") -> list[Term]:
    """The terms of a metrics document, in order.

    Raises:
        ValueError: a section without column names or without a definition, or a name
            defined twice (the message names the source and the heading).
    """
    terms: list[Term] = []
    seen: dict[str, str] = {}
    sections = re.split(r"^## +", text, flags=re.MULTILINE)[1:]
    for section in sections:
        heading, _, body = section.partition("\n")
        heading = heading.strip()
        names = tuple(re.findall(r"`([^`]+)`", heading))
        title = re.sub(r"\s*\(`.*$", "", heading).strip()
        paragraph = body.strip().split("\n\n", 1)[0]
        definition = " ".join(line.strip() for line in paragraph.splitlines())
        if not names or not definition:
            raise ValueError(f"{source}: section {heading!r}: needs `names` and a definition")
        for name in names:
            if name in seen:
                raise ValueError(f"{source}: {name!r} is defined in {seen[name]!r} and {title!r}")
            seen[name] = title
        terms.append(Term(title, names, definition, _anchor(heading)))
    return terms


@cache
def terms(path: Path = METRICS_DOC) -> dict[str, Term]:
    """Every defined column name -> its term (read once per process)."""
    found = parse(path.read_text(encoding="utf-8"), str(path))
    return {name: term for term in found for name in term.names}


def define(name: str) -> str | None:
    """``"Title: definition"`` for a column name, or None when it is not defined."""
    term = terms().get(name)
    return f"{term.title}: {term.definition}" if term is not None else None


def title(name: str) -> str:
    """The readable name of a column (its term's title), or the name itself."""
    term = terms().get(name)
    return term.title if term is not None else name


def link(name: str, document: str = "docs/metrics.md") -> str:
    """The address of a column's section, relative to where ``document`` is reached from."""
    return f"{document}#{terms()[name].anchor}"


def glossary_markdown(names: list[str], document: str = "../docs/metrics.md") -> str:
    """A Markdown list of the given columns' terms, each linked to its section.

    Args:
        names: column names; each term is listed once, in the order first named.
        document: the metrics document as reached from the notebook (``notebooks/``).

    Raises:
        KeyError: a name that ``docs/metrics.md`` does not define.
    """
    undefined = [n for n in names if n not in terms()]
    if undefined:
        raise KeyError(f"{METRICS_DOC}: no definition of {undefined}")
    listed = list(dict.fromkeys(terms()[n] for n in names))
    lines = [f"- **[{t.title}]({document}#{t.anchor})** — {t.definition}" for t in listed]
    return "**Glossary**\n\n" + "\n".join(lines)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")
