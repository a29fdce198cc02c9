"""The Research environment: literature service, proposal document, assertions."""

import json
import pickle

import pytest

from hasbench.envs.base import EnvironmentDataError
from hasbench.envs.research import (
    MIN_SECTION_WORDS,
    SECTIONS,
    ResearchEnvironment,
    contains_element,
    empty_proposal,
    load_corpus,
    tokenize,
)
from hasbench.paths import DATA_DIR

CORPUS = DATA_DIR / "research" / "corpus.json"
TEXT = "This section answers its question in a handful of plain and complete words here."


@pytest.fixture
def env():
    corpus = load_corpus(CORPUS)
    return ResearchEnvironment({"corpus": corpus.digest, "proposal": empty_proposal()}, CORPUS)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(CORPUS)


def ok(env, name, **arguments):
    result = env.call(name, arguments)
    assert not result.error, result.message
    return result.output


def write_all(env):
    for section in SECTIONS:
        ok(env, "write_section", section=section, text=TEXT)


def test_the_corpus_is_large_and_consistent(corpus):
    assert len(corpus.papers) == 480
    assert len({p["topic"] for p in corpus.papers.values()}) == 8
    assert len(TEXT.split()) >= MIN_SECTION_WORDS
    for paper in corpus.papers.values():
        assert all(ref < paper["paper_id"] for ref in paper["references"])  # earlier papers
        assert paper["citation_count"] == len(corpus.cited_by[paper["paper_id"]])


def test_keyword_search_ranks_the_paper_of_a_method_first(env, corpus):
    paper = corpus.papers["P0301"]
    hits = ok(env, "search_papers", query=paper["method"], max_results=3)
    assert hits[0]["paper_id"] == "P0301"
    assert "abstract" not in hits[0]  # summaries only; get_paper has the full record


def test_search_is_deterministic_and_respects_year_and_limit(env):
    first = ok(env, "search_papers", query="federated learning client drift", max_results=10)
    again = ok(env, "search_papers", query="federated learning client drift", max_results=10)
    assert first == again and len(first) == 10
    recent = ok(env, "search_papers", query="federated learning", max_results=25, year_from=2023)
    assert recent and all(p["year"] >= 2023 for p in recent)
    assert ok(env, "search_papers", query="zzzz qqqq") == []


def test_author_related_and_recent_papers(env, corpus):
    paper = corpus.papers["P0301"]
    last = paper["authors"][0].split()[-1]
    by_author = ok(env, "search_by_author", author=last.upper(), max_results=25)
    assert "P0301" in [p["paper_id"] for p in by_author]
    years = [p["year"] for p in by_author]
    assert years == sorted(years, reverse=True)
    related = ok(env, "get_related_papers", paper_id="P0301", max_results=5)
    ids = [p["paper_id"] for p in related]
    assert "P0301" not in ids
    assert set(ids[:2]) <= set(paper["references"]) | set(corpus.cited_by["P0301"])
    newest = ok(env, "get_recent_papers", topic="medical image segmentation", max_results=5)
    assert [p["year"] for p in newest] == sorted((p["year"] for p in newest), reverse=True)
    assert all("medical image segmentation" in p["keywords"] for p in newest)


def test_fetching_a_paper_and_the_dataset_registry(env):
    paper = ok(env, "get_paper", paper_id="P0301")
    assert {"abstract", "references", "datasets", "citation_count"} <= set(paper)
    missing = env.call("get_paper", {"paper_id": "P9999"})
    assert missing.error and missing.error_type == "not_found"
    found = ok(env, "search_datasets", query="brain MRI")
    assert "BrainTumour-3D" in [d["name"] for d in found]
    assert all("license" in d for d in found)


def test_refused_calls_leave_the_state_unchanged(env):
    before = env.state_hash()
    for name, args in [
        ("search_papers", {"query": "x", "max_results": 0}),
        ("write_section", {"section": "methods", "text": TEXT}),
        ("write_section", {"section": "problem", "text": "   "}),
        ("cite_paper", {"paper_id": "P9999", "role": "baseline"}),
        ("cite_paper", {"paper_id": "P0001", "role": "favourite"}),
        ("set_datasets", {"names": ["NoSuchSet"]}),
        ("remove_citation", {"paper_id": "P0001"}),
        ("submit_proposal", {}),
    ]:
        assert env.call(name, args).error, name
    assert env.state_hash() == before


def test_submission_needs_five_answering_sections_and_edits_reopen_it(env):
    ok(env, "write_section", section="problem", text="Too short to answer.")
    result = env.call("submit_proposal", {})
    assert result.error and "problem, importance" in result.message
    write_all(env)
    assert env.delivered() is False
    assert ok(env, "submit_proposal") == {"status": "submitted", "round": 1}
    assert env.delivered() and env.run_assertion("assert_submitted", {})
    again = env.call("submit_proposal", {})
    assert again.error and "Nothing changed" in again.message
    ok(env, "cite_paper", paper_id="P0010", role="related")
    assert env.db["proposal"]["status"] == "revised" and not env.delivered()
    assert ok(env, "submit_proposal")["round"] == 2


def test_write_tools_do_not_echo_the_text(env):
    output = ok(env, "write_section", section="approach", text=TEXT)
    assert output == {"section": "approach", "revision": 1, "words": 14, "status": "draft"}


def test_assertions_check_elements_citations_and_datasets(env):
    text = "We run on one GPU and compare to KestrelGNN."
    ok(env, "write_section", section="approach", text=text)
    ok(env, "cite_paper", paper_id="P0010", role="baseline")
    ok(env, "cite_paper", paper_id="P0011", role="related")
    ok(env, "set_datasets", names=["OpenCitationGraph"])
    check = env.run_assertion
    assert check(
        "assert_section_covers",
        {"section": "approach", "required": ["single GPU | one GPU", "KestrelGNN"]},
    )
    assert not check("assert_section_covers", {"section": "approach", "required": ["Kestrel"]})
    assert check("assert_cites", {"paper_id": "P0010", "role": "baseline"})
    assert not check("assert_cites", {"paper_id": "P0011", "role": "baseline"})
    assert check("assert_baselines", {"required": ["P0010"], "forbidden": ["P0011"]})
    assert not check("assert_baselines", {"required": ["P0011"], "forbidden": []})
    assert check("assert_datasets", {"required": ["OpenCitationGraph"], "forbidden": ["X"]})
    assert not check("assert_datasets", {"required": [], "forbidden": ["OpenCitationGraph"]})


def test_elements_match_whole_words_and_variants():
    assert contains_element("Runs on a Single GPU.", "single GPU | one GPU")
    assert not contains_element("multi-GPU training", "GPU-x")
    assert not contains_element("KestrelGNN-x", "KestrelGNN")
    assert tokenize("Retrieval-augmented generation of the") == [
        "retrieval-augmented", "retrieval", "augmented", "generation"
    ]  # fmt: skip


def test_the_environment_pickles_without_the_index(env):
    ok(env, "write_section", section="problem", text=TEXT)
    blob = pickle.dumps(env)
    assert len(blob) < 5000
    copy = pickle.loads(blob)
    assert copy.state_hash() == env.state_hash()
    assert (
        copy.call("search_papers", {"query": "graph"}).output
        == env.call("search_papers", {"query": "graph"}).output
    )


def test_a_broken_corpus_file_is_named(tmp_path):
    data = json.loads(CORPUS.read_text())
    data["papers"][3]["references"] = ["P9999"]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EnvironmentDataError, match=r"corpus.json: paper P0004 cites unknown"):
        load_corpus(path)
    del data["papers"][0]["title"]
    path.write_text(json.dumps(data))
    with pytest.raises(EnvironmentDataError, match=r"invalid corpus at papers.0.title"):
        load_corpus(path)


def test_dataset_search_finds_what_matching_every_dataset_text_finds(env, corpus):
    """The words kept per dataset give the datasets a scan of each one's text gives."""
    queries = ["brain MRI", "graph", "speech recognition benchmark", "zzz unknown", "x-ray"]
    for dataset in corpus.datasets.values():
        queries += [dataset["name"], corpus.topics[dataset["topic"]], dataset["description"][:30]]
    for query in queries:
        words = tokenize(query)
        if not words:
            continue
        scanned = sorted(
            (
                d
                for d in corpus.datasets.values()
                if set(words)
                & set(tokenize(f"{d['name']} {corpus.topics[d['topic']]} {d['description']}"))
            ),
            key=lambda d: d["name"],
        )
        assert ok(env, "search_datasets", query=query) == scanned
