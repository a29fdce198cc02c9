"""The metric definitions of docs/metrics.md, as widgets and notebooks read them."""

import pytest

from hasbench import glossary
from hasbench.runner import COLUMNS


def test_every_metric_column_of_the_results_table_is_defined():
    shown = set(COLUMNS) - {"task_id", "domain", "pattern", "agent_model", "user_model",
                            "judge_model", "agency", "channels", "persona", "spontaneous",
                            "setting", "seed", "key", "trace"}  # fmt: skip
    assert shown - set(glossary.terms()) == set()


def test_definitions_titles_and_links():
    assert glossary.title("hir") == "Human Intervention Rate"
    assert glossary.define("hir").startswith("Human Intervention Rate: The share of an episode's")
    assert glossary.define("no_such_column") is None and glossary.title("x_y") == "x_y"
    assert glossary.link("h_init") == "docs/metrics.md#initiative-entropy-h_init-h_init_judged"
    text = glossary.glossary_markdown(["hir", "hir_a3", "success"])
    assert text.count("\n- ") == 2  # one entry per term, in the order first named
    assert (
        "[Human Intervention Rate](../docs/metrics.md#human-intervention-rate-hir-hir_a3)" in text
    )
    with pytest.raises(KeyError, match="no definition of \\['nope'\\]"):
        glossary.glossary_markdown(["nope"])


def test_step_turn_and_event_have_one_meaning_each():
    assert glossary.terms()["steps"].title == "Step"
    assert glossary.terms()["turns"].title == "Turn"
    assert "trace field `step`" in glossary.define("turn")


def test_a_malformed_document_names_the_section():
    with pytest.raises(ValueError, match="doc.md: section 'Loose': needs `names`"):
        glossary.parse("## Loose\n\nNo names.\n", "doc.md")
    with pytest.raises(ValueError, match="'a' is defined in 'A' and 'B'"):
        glossary.parse("## A (`a`)\n\nx\n\n## B (`a`)\n\ny\n", "doc.md")
    (term,) = glossary.parse("## A b (`a`, `b`)\n\nFirst\nline.\n\nMore.\n")
    assert (term.title, term.names, term.definition, term.anchor) == (
        "A b", ("a", "b"), "First line.", "a-b-a-b",
    )  # fmt: skip
