"""Point 1: typed blocks with stable ids, edit operations, recent-edit diffs, Markdown/JSON."""

import pytest
from docuteam_helpers import WORKSHOP

from hasbench.docuteam.document import (
    Block,
    Document,
    DocumentError,
    render_edits,
    word_changes,
)

MARKDOWN = """# Plan

Intro paragraph.

- first item
- [ ] open task
- [x] done task

| Time | Session |
|---|---|
| 10:00 | Talk |
"""


def test_markdown_gives_typed_blocks_with_fresh_ids():
    doc = Document.from_markdown(MARKDOWN)
    assert [(b.id, b.type) for b in doc.blocks] == [
        ("b1", "heading"),
        ("b2", "paragraph"),
        ("b3", "list_item"),
        ("b4", "todo"),
        ("b5", "todo"),
        ("b6", "table_row"),
        ("b7", "table_row"),
    ]
    assert doc.block("b1").level == 1
    assert doc.block("b4").checked is False and doc.block("b5").checked is True
    assert doc.block("b7").text == "10:00 | Talk"


def test_markdown_and_json_round_trip_keep_ids_and_history(tmp_path):
    doc = Document.load(WORKSHOP / "plan.md")
    doc.update("b22", "Networking: small tables")
    doc.insert("Speed rounds after lunch", "list_item", after="b22")
    doc.delete("b21")
    md = doc.save(tmp_path / "plan.md")
    again = Document.load(md)
    assert again.ids() == doc.ids()
    assert [(b.type, b.text, b.level, b.checked) for b in again.blocks] == [
        (b.type, b.text, b.level, b.checked) for b in doc.blocks
    ]
    js = Document.load(doc.save(tmp_path / "plan.json"))
    assert js.blocks == doc.blocks and js.history == doc.history
    # ids are never reused: a block added after loading gets a fresh number
    assert again.insert("New", after="b22").block_id == "b27"


def test_edits_record_before_and_after_and_replay_rebuilds_the_document():
    doc = Document.load(WORKSHOP / "plan.md")
    start = doc.copy()
    update = doc.update("b22", "Networking: small tables")
    insert = doc.insert("Speed rounds after lunch", "list_item", after="b22")
    delete = doc.delete("b20")
    assert (update.kind, update.before, update.after) == (
        "update",
        "Networking: TBD",
        "Networking: small tables",
    )
    assert (insert.kind, insert.before, insert.after, insert.anchor) == (
        "insert",
        None,
        "Speed rounds after lunch",
        "b22",
    )
    assert (delete.kind, delete.before, delete.after) == (
        "delete",
        "Lightning talks: five minutes each, about twelve speakers",
        None,
    )
    for op in doc.history:
        start.replay(op)
    assert start.to_json() == doc.to_json()


def test_replay_refuses_an_edit_that_does_not_fit():
    doc = Document.load(WORKSHOP / "plan.md")
    op = doc.copy().update("b22", "changed")
    doc.update("b22", "something else")
    with pytest.raises(DocumentError, match="b22"):
        doc.replay(op)


def test_edit_views_merge_a_batch_per_block_with_neighbouring_context():
    doc = Document.load(WORKSHOP / "plan.md")
    ops = [
        doc.update("b22", "Networking: TBD?"),
        doc.update("b22", "Networking: tables of five"),
        doc.insert("Tmp", after="b22"),
        doc.update("b13", "09:30 | Registraton and coffee"),  # no net change
    ]
    ops.append(doc.delete(ops[2].block_id))  # inserted and deleted again: left out
    views = doc.edit_views(ops, context=1)
    assert len(views) == 1
    view = views[0]
    assert (view.block_id, view.before, view.after) == (
        "b22",
        "Networking: TBD",
        "Networking: tables of five",
    )
    assert [b.id for b in view.context_before] == ["b21"] and [
        b.id for b in view.context_after
    ] == ["b23"]
    text = render_edits(views)
    assert "Before: Networking: TBD" in text and "[b21] (list_item) Poster corner" in text


def test_edit_view_of_a_deleted_block_shows_the_gap_it_left():
    doc = Document.load(WORKSHOP / "plan.md")
    views = doc.edit_views([doc.delete("b21")], context=1)
    assert views[0].kind == "delete" and views[0].after is None
    assert [b.id for b in views[0].context_before] == ["b20"]
    assert [b.id for b in views[0].context_after] == ["b22"]


@pytest.mark.parametrize(
    ("before", "after", "changes"),
    [
        ("Networking: TBD", "Networking: TBD", 0),
        ("Registraton and coffee", "Registration and coffee", 1),
        ("a b c", "a b c d e", 2),
        ("a b c d", "a d", 2),
        ("keep one two three", "keep four five", 3),
    ],
)
def test_word_changes(before, after, changes):
    assert word_changes(before, after) == changes


def test_bad_files_name_the_file_and_the_problem(tmp_path):
    repeated = tmp_path / "doc.md"
    repeated.write_text("one <!-- x1 -->\ntwo <!-- x1 -->\n")
    with pytest.raises(DocumentError, match=r"doc\.md: line 2: block id 'x1' repeats"):
        Document.load(repeated)
    bad = tmp_path / "doc.json"
    bad.write_text('{"blocks": [{"id": "b1", "type": "quote", "text": "x"}]}')
    with pytest.raises(DocumentError, match=r"doc\.json: blocks\[0\]\.type"):
        Document.load(bad)
    with pytest.raises(DocumentError, match="no block 'b99'"):
        Document([Block(id="b1", type="paragraph", text="x")]).update("b99", "y")
