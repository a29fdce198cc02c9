"""Research: a local literature service and a shared research-proposal document.

The literature service searches a corpus the project ships (``data/research/corpus.json``,
written by :mod:`hasbench.build.research_corpus`): search by keyword (BM25 ranking from
the ``bm25s`` library over titles, keywords, methods, datasets and abstracts), by author,
for papers related to a paper (citation links plus textual similarity), and for recent
papers on a topic; fetch a paper; search the dataset registry. Every ranking breaks ties
by paper id, so results are deterministic.

The proposal document has the five sections of the "five questions" template — the
problem, why it matters, why it is hard, why it is not solved yet, and the approach with
its expected results — plus the datasets it evaluates on and its references (each cited
paper with a role: baseline, related, method or dataset). Agents draft and edit sections,
cite papers and choose datasets with write tools; ``submit_proposal`` submits the current
version (every section must answer its question), and any later edit makes it a revised,
unsubmitted draft again until it is resubmitted. The state holds only the document; the
corpus is an immutable, per-process cached base (the environment stays small to copy and
to pickle).

Hidden assertions check the submitted document against a task's criteria: required
elements of a section, cited papers and roles, required and forbidden datasets.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from hasbench.envs.base import (
    Environment,
    EnvironmentDataError,
    ToolError,
    assertion,
    project_domain,
    tool,
)
from hasbench.envs.service import domain_policy, load_policy, resolve_data_path
from hasbench.paths import DATA_DIR

if TYPE_CHECKING:
    from hasbench.scenario import Scenario

DEFAULT_CORPUS = "research/corpus.json"
"""The corpus path (relative to DATA_DIR) used when a task names none."""
SECTIONS = ("problem", "importance", "difficulty", "unsolved", "approach")
SECTION_QUESTIONS: dict[str, str] = {
    "problem": "What is the problem?",
    "importance": "Why is it interesting and important?",
    "difficulty": "Why is it hard?",
    "unsolved": "Why hasn't it been solved before?",
    "approach": "What are the key components of the approach and the expected results?",
}
MIN_SECTION_WORDS = 12
"""A section answers its question only with at least this many words."""
MAX_RESULTS = 25
Section = Literal["problem", "importance", "difficulty", "unsolved", "approach"]
CitationRole = Literal["baseline", "related", "method", "dataset"]
_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has in is it its of on or that the this to we with "
    "our which their these those than into over".split()
)


class _Paper(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper_id: str
    title: str
    authors: list[str]
    year: int
    venue: str
    topic: str
    keywords: list[str]
    method: str
    datasets: list[str]
    abstract: str
    references: list[str]
    citation_count: int


class _Dataset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    topic: str
    description: str
    license: str
    first_used_by: str | None


class _CorpusFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    seed: int
    topics: dict[str, str]
    datasets: list[_Dataset]
    papers: list[_Paper]


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens; a hyphenated word also yields its parts."""
    tokens = []
    for token in _TOKEN.findall(text.lower()):
        if token in _STOPWORDS:
            continue
        tokens.append(token)
        if "-" in token:
            tokens += [part for part in token.split("-") if part and part not in _STOPWORDS]
    return tokens


@dataclass(frozen=True)
class Corpus:
    """The papers, the dataset registry and their search indexes (read-only, shared)."""

    source: str
    digest: str
    topics: dict[str, str]
    papers: dict[str, dict[str, Any]]
    datasets: dict[str, dict[str, Any]]
    order: tuple[str, ...]
    index: Any
    cited_by: dict[str, tuple[str, ...]]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every paper (in :attr:`order`) for a free-text query."""
        tokens = [t for t in tokenize(query) if t in self.index.vocab_dict]
        if not tokens:
            return np.zeros(len(self.order))
        return np.asarray(self.index.get_scores(tokens), dtype=float)

    def ranked(self, scores: np.ndarray, limit: int) -> list[str]:
        """Paper ids with a positive score, best first, ties broken by id."""
        if len(scores) != len(self.order):
            raise ValueError(f"{len(scores)} scores for {len(self.order)} papers")
        hits = [(round(float(scores[i]), 6), self.order[i]) for i in np.flatnonzero(scores > 0)]
        hits = [h for h in hits if h[0] > 0]
        hits.sort(key=lambda h: (-h[0], h[1]))
        return [pid for _, pid in hits[:limit]]


@lru_cache(maxsize=4)
def load_corpus(path: Path) -> Corpus:
    """Load, validate and index a corpus file (cached per process).

    Raises:
        EnvironmentDataError: naming the file and what is wrong with it.
    """
    import bm25s

    if not path.is_file():
        raise EnvironmentDataError(f"{path}: corpus file not found")
    text = path.read_text(encoding="utf-8")
    try:
        data = _CorpusFile.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise EnvironmentDataError(f"{path}: not valid JSON: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise EnvironmentDataError(f"{path}: invalid corpus at {where}: {first['msg']}") from None
    papers = {p.paper_id: p.model_dump() for p in data.papers}
    datasets = {d.name: d.model_dump() for d in data.datasets}
    cited_by: dict[str, list[str]] = {pid: [] for pid in papers}
    for paper in papers.values():
        for ref in paper["references"]:
            if ref not in papers:
                raise EnvironmentDataError(
                    f"{path}: paper {paper['paper_id']} cites unknown paper {ref}"
                )
            cited_by[ref].append(paper["paper_id"])
        for name in paper["datasets"]:
            if name not in datasets:
                raise EnvironmentDataError(
                    f"{path}: paper {paper['paper_id']} uses unregistered dataset {name}"
                )
    order = tuple(sorted(papers))
    documents = [_document(papers[pid]) for pid in order]
    index = bm25s.BM25()
    index.index(documents, show_progress=False)
    return Corpus(
        source=str(path),
        digest=hashlib.sha256(text.encode()).hexdigest()[:16],
        topics=dict(data.topics),
        papers=papers,
        datasets=datasets,
        order=order,
        index=index,
        cited_by={pid: tuple(sorted(ids)) for pid, ids in cited_by.items()},
    )


@lru_cache(maxsize=4)
def _dataset_words(path: Path) -> dict[str, frozenset[str]]:
    """Each dataset's words (name, topic, description) that a search matches, by name.

    Cached per process like :func:`load_corpus`, whose corpus is read-only.
    """
    corpus = load_corpus(path)
    return {
        name: frozenset(tokenize(f"{d['name']} {corpus.topics[d['topic']]} {d['description']}"))
        for name, d in corpus.datasets.items()
    }


def _document(paper: dict[str, Any]) -> list[str]:
    """The tokens a paper is indexed by (the title counts twice)."""
    text = " ".join(
        [paper["title"], paper["title"], paper["method"], " ".join(paper["keywords"]),
         " ".join(paper["datasets"]), paper["abstract"]]
    )  # fmt: skip
    return tokenize(text)


def empty_proposal(title: str = "") -> dict[str, Any]:
    """A proposal with no content."""
    return {
        "title": title,
        "sections": {name: "" for name in SECTIONS},
        "revisions": {name: 0 for name in SECTIONS},
        "references": [],
        "datasets": [],
        "status": "draft",
        "submissions": [],
    }


def contains_element(text: str, element: str) -> bool:
    """Whether ``text`` states an element: any of its ``|``-separated variants, as words."""
    for variant in element.split("|"):
        words = variant.strip().lower()
        if words and re.search(rf"(?<![\w-]){re.escape(words)}(?![\w-])", text.lower()):
            return True
    return False


class ResearchEnvironment(Environment):
    """A literature service over a shipped corpus and the team's proposal document."""

    domain: ClassVar[str] = "research"

    def __init__(self, db: dict[str, Any], corpus_path: Path) -> None:
        super().__init__(db)
        self.corpus_path = corpus_path

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> ResearchEnvironment:
        """The corpus of ``environment.db_path`` (default: the shipped one), empty proposal."""
        settings = scenario.environment
        path = resolve_data_path(settings.db_path or str(DATA_DIR / DEFAULT_CORPUS))
        corpus = load_corpus(path)
        env = cls({"corpus": corpus.digest, "proposal": empty_proposal()}, path)
        env.policy = (
            load_policy(settings.policy_path) if settings.policy_path else domain_policy(cls.domain)
        )
        env.initialize(scenario)
        return env

    @property
    def corpus(self) -> Corpus:
        """The (cached) corpus this environment searches."""
        return load_corpus(self.corpus_path)

    # -- helpers ------------------------------------------------------------------------

    def _paper(self, paper_id: str) -> dict[str, Any]:
        paper = self.corpus.papers.get(paper_id)
        if paper is None:
            raise ToolError("not_found", f"No paper with id {paper_id!r}")
        return paper

    def _summaries(self, paper_ids: list[str]) -> list[dict[str, Any]]:
        keys = ("paper_id", "title", "authors", "year", "venue", "keywords", "citation_count")
        papers = self.corpus.papers
        return [{k: papers[pid][k] for k in keys} for pid in paper_ids]

    @staticmethod
    def _limit(max_results: int) -> int:
        if not 1 <= max_results <= MAX_RESULTS:
            raise ToolError("invalid_arguments", f"max_results must be between 1 and {MAX_RESULTS}")
        return max_results

    def _edited(self) -> dict[str, Any]:
        """The proposal, marked revised when it had been submitted."""
        proposal = self.db["proposal"]
        if proposal["status"] == "submitted":
            proposal["status"] = "revised"
        return proposal

    # -- literature tools ---------------------------------------------------------------

    @tool(kind="read")
    def search_papers(
        self, query: str, max_results: int = 10, year_from: int | None = None
    ) -> list[dict[str, Any]]:
        """Search the literature by keywords (BM25 ranking over titles, keywords, abstracts).

        Args:
            query: Words to search for, e.g. "graph sampling large graphs".
            max_results: How many papers to return (1-25).
            year_from: Only papers published in this year or later.
        """
        limit = self._limit(max_results)
        if not query.strip():
            raise ToolError("invalid_arguments", "query must not be empty")
        corpus = self.corpus
        scores = corpus.scores(query)
        if year_from is not None:
            years = np.array([corpus.papers[pid]["year"] for pid in corpus.order])
            scores = np.where(years >= year_from, scores, 0.0)
        return self._summaries(corpus.ranked(scores, limit))

    @tool(kind="read")
    def search_by_author(self, author: str, max_results: int = 10) -> list[dict[str, Any]]:
        """Papers by an author (full or last name, any case), newest first.

        Args:
            author: The name, e.g. "Okafor" or "Mei Okafor".
            max_results: How many papers to return (1-25).
        """
        limit = self._limit(max_results)
        wanted = author.strip().lower()
        if len(wanted) < 2:
            raise ToolError("invalid_arguments", "author must have at least two characters")
        found = [
            p
            for p in self.corpus.papers.values()
            if any(wanted == a.lower() or wanted == a.lower().split()[-1] for a in p["authors"])
        ]
        found.sort(key=lambda p: (-p["year"], p["paper_id"]))
        return self._summaries([p["paper_id"] for p in found[:limit]])

    @tool(kind="read")
    def get_related_papers(self, paper_id: str, max_results: int = 5) -> list[dict[str, Any]]:
        """Papers related to a paper: those it cites or that cite it, then similar ones.

        Args:
            paper_id: The paper, e.g. "P0123".
            max_results: How many papers to return (1-25).
        """
        limit = self._limit(max_results)
        paper = self._paper(paper_id)
        linked = set(paper["references"]) | set(self.corpus.cited_by[paper_id])
        scores = self.corpus.scores(" ".join([paper["title"], *paper["keywords"]]))
        lead = float(scores.max()) + 1.0  # linked papers rank above every unlinked one
        boost = np.array([lead * (pid in linked) for pid in self.corpus.order])
        scores = np.where(np.array(self.corpus.order) == paper_id, 0.0, scores + boost)
        return self._summaries(self.corpus.ranked(scores, limit))

    @tool(kind="read")
    def get_recent_papers(
        self, topic: str, max_results: int = 10, since_year: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest papers on a topic (matching its words), newest first.

        Args:
            topic: A topic or keywords, e.g. "federated learning".
            max_results: How many papers to return (1-25).
            since_year: Only papers published in this year or later.
        """
        limit = self._limit(max_results)
        if not topic.strip():
            raise ToolError("invalid_arguments", "topic must not be empty")
        scores = self.corpus.scores(topic)
        threshold = max(0.5 * float(scores.max()), 1e-9)
        papers = [
            self.corpus.papers[pid]
            for pid, score in zip(self.corpus.order, scores, strict=True)
            if score >= threshold
        ]
        if since_year is not None:
            papers = [p for p in papers if p["year"] >= since_year]
        papers.sort(key=lambda p: (-p["year"], p["paper_id"]))
        return self._summaries([p["paper_id"] for p in papers[:limit]])

    @tool(kind="read")
    def get_paper(self, paper_id: str) -> dict[str, Any]:
        """A paper's full record: abstract, method, datasets, references, citations.

        Args:
            paper_id: The paper id, e.g. "P0123".
        """
        return dict(self._paper(paper_id))

    @tool(kind="read")
    def search_datasets(self, query: str) -> list[dict[str, Any]]:
        """Datasets in the registry whose name, topic or description matches the words.

        Args:
            query: Words to search for, e.g. "brain MRI".
        """
        words = tokenize(query)
        if not words:
            raise ToolError("invalid_arguments", "query must contain a word")
        haystacks = _dataset_words(self.corpus_path)
        found = [
            dataset
            for name, dataset in self.corpus.datasets.items()
            if any(w in haystacks[name] for w in words)
        ]
        return sorted(found, key=lambda d: d["name"])

    # -- the proposal -------------------------------------------------------------------

    @tool(kind="read")
    def read_proposal(self) -> dict[str, Any]:
        """The shared proposal: sections, datasets, references and submission status."""
        return self.db["proposal"]

    @tool(kind="write", risk="low")
    def write_section(self, section: Section, text: str) -> dict[str, Any]:
        """Write (or rewrite) one section of the proposal.

        Sections answer: problem = what is the problem; importance = why it matters;
        difficulty = why it is hard; unsolved = why it has not been solved before;
        approach = the key components of the approach and the expected results.

        Args:
            section: Which section.
            text: The full new text of the section (replaces the old text).
        """
        if not text.strip():
            raise ToolError("invalid_arguments", "text must not be empty")
        proposal = self._edited()
        proposal["sections"][section] = text.strip()
        proposal["revisions"][section] += 1
        return {
            "section": section,
            "revision": proposal["revisions"][section],
            "words": len(text.split()),
            "status": proposal["status"],
        }

    @tool(kind="write", risk="low")
    def cite_paper(self, paper_id: str, role: CitationRole) -> dict[str, Any]:
        """Add a paper to the proposal's references (or change its role).

        Args:
            paper_id: The paper id, e.g. "P0123".
            role: baseline (compared against), related (prior work), method (built on),
                or dataset (source of a dataset used).
        """
        self._paper(paper_id)
        proposal = self._edited()
        refs = [r for r in proposal["references"] if r["paper_id"] != paper_id]
        refs.append({"paper_id": paper_id, "role": role})
        proposal["references"] = sorted(refs, key=lambda r: r["paper_id"])
        return {"references": len(refs), "status": proposal["status"]}

    @tool(kind="write", risk="low")
    def remove_citation(self, paper_id: str) -> dict[str, Any]:
        """Remove a paper from the proposal's references.

        Args:
            paper_id: The paper id.
        """
        proposal = self.db["proposal"]
        if all(r["paper_id"] != paper_id for r in proposal["references"]):
            raise ToolError("not_found", f"{paper_id} is not cited")
        proposal = self._edited()
        proposal["references"] = [r for r in proposal["references"] if r["paper_id"] != paper_id]
        return {"references": len(proposal["references"]), "status": proposal["status"]}

    @tool(kind="write", risk="low")
    def set_datasets(self, names: list[str]) -> dict[str, Any]:
        """Set the datasets the proposal evaluates on (replaces the current list).

        Args:
            names: Dataset names from the registry, e.g. ["LiverCT-Open"].
        """
        unknown = [n for n in names if n not in self.corpus.datasets]
        if unknown:
            raise ToolError("not_found", f"Unknown datasets: {', '.join(unknown)}")
        if len(set(names)) != len(names):
            raise ToolError("invalid_arguments", "a dataset is listed twice")
        proposal = self._edited()
        proposal["datasets"] = list(names)
        return {"datasets": list(names), "status": proposal["status"]}

    @tool(kind="write", risk="low")
    def submit_proposal(self) -> dict[str, Any]:
        """Submit the current version of the proposal.

        Every section must answer its question (at least a few sentences), and something
        must have changed since the last submission.
        """
        proposal = self.db["proposal"]
        short = [s for s in SECTIONS if not self._answers(s)]
        if short:
            raise ToolError(
                "precondition_failed",
                f"Sections that do not yet answer their question: {', '.join(short)}",
            )
        if proposal["status"] == "submitted":
            raise ToolError("precondition_failed", "Nothing changed since the last submission")
        proposal["status"] = "submitted"
        proposal["submissions"].append({"round": len(proposal["submissions"]) + 1,
                                        "digest": _digest(proposal)})  # fmt: skip
        return {"status": "submitted", "round": len(proposal["submissions"])}

    def _answers(self, section: str) -> bool:
        return len(self.db["proposal"]["sections"][section].split()) >= MIN_SECTION_WORDS

    # -- outcome ------------------------------------------------------------------------

    def delivered(self) -> bool:
        """A submitted proposal (no unsubmitted edits) whose five sections all answer."""
        proposal = self.db["proposal"]
        return proposal["status"] == "submitted" and all(self._answers(s) for s in SECTIONS)

    # -- hidden assertions --------------------------------------------------------------

    @assertion
    def assert_submitted(self) -> bool:
        """The proposal is submitted and every section answers its question."""
        return self.delivered()

    @assertion
    def assert_section_covers(self, section: str, required: list[str]) -> bool:
        """The section states every required element (``a | b`` lists accepted variants)."""
        text = self.db["proposal"]["sections"].get(section, "")
        return bool(text) and all(contains_element(text, element) for element in required)

    @assertion
    def assert_cites(self, paper_id: str, role: str | None = None) -> bool:
        """The paper is among the references (with this role when given)."""
        return any(
            r["paper_id"] == paper_id and (role is None or r["role"] == role)
            for r in self.db["proposal"]["references"]
        )

    @assertion
    def assert_baselines(self, required: list[str], forbidden: list[str] | None = None) -> bool:
        """Every required paper is cited as a baseline and no forbidden one is."""
        baselines = {r["paper_id"] for r in self.db["proposal"]["references"]
                     if r["role"] == "baseline"}  # fmt: skip
        return set(required) <= baselines and not (set(forbidden or []) & baselines)

    @assertion
    def assert_datasets(self, required: list[str], forbidden: list[str] | None = None) -> bool:
        """Every required dataset is chosen and no forbidden one is."""
        chosen = set(self.db["proposal"]["datasets"])
        return set(required) <= chosen and not (set(forbidden or []) & chosen)


def _digest(proposal: dict[str, Any]) -> str:
    content = {k: proposal[k] for k in ("sections", "references", "datasets")}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


DOMAIN = project_domain(
    name="research",
    environment=ResearchEnvironment,
    deliverable="A submitted research proposal that answers all five questions.",
)
