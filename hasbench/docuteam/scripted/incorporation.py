"""The scripted incorporator: a discussion message rewritten as a block of the document.

It carries the message's substance whole (:func:`~.reading.substance`: the chat voice
goes, every plan term stays) and gives it the target block's form:

- a table row keeps its first cell when the row is replaced, and the substance fills
  the next cell;
- a labelled line ("Networking: ...") keeps its label when it is replaced;
- when a replaced block offered the user's own options and the message's idea takes up
  one of them (shares at least two and half of its plan terms) without restating it,
  that option stays, in the user's words, before the
  message's substance (the words replaced stay in the block's history either way);
- the text ends with a full stop when the block is a paragraph or its neighbours of the
  same type end with one.

Only a text longer than the step allows (400 characters) is cut, at a word boundary.
"""

from __future__ import annotations

from hasbench.docuteam import schemas as s
from hasbench.docuteam.scripted.reading import (
    clean,
    idea_of,
    options_in,
    shorten,
    split_label,
    substance,
)
from hasbench.docuteam.words import plan_terms

TEXT_CHARS = 400
"""The longest block text the step may write."""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _taken_up(content: str, data: s.IncorporateInput) -> str | None:
    """The user's option in the target that the message builds on without restating it."""
    options = options_in([data.target])
    if not options:
        return None
    said = plan_terms(content)
    shared = [(len(plan_terms(o) & said), o) for o in options]
    best = max(count for count, _ in shared)
    chosen = [o for count, o in shared if count == best]
    if len(chosen) != 1 or plan_terms(chosen[0]) <= said:
        return None
    if best < 2 or best * 2 < len(plan_terms(chosen[0])):
        return None
    return chosen[0]


def incorporate(data: s.IncorporateInput) -> s.IncorporateOutput:
    """The message's substance in the target block's form (see the module docstring)."""
    names = {n.lower() for n in [data.author_name, *data.speakers]}
    content = substance(data.snippet, names) or clean(data.snippet)
    target = data.target
    replace = data.placement == "replace"
    if replace:
        kept = _taken_up(idea_of(data.snippet, names), data)
        if kept is not None and len(kept) + len(content) + 60 <= TEXT_CHARS:
            content = f"{kept}; {content}"
    if target.type == "table_row":
        cells = [c.strip() for c in target.text.split("|")]
        first = cells[0] if replace else ""
        rest = [""] * max(0, len(cells) - 2)
        return s.IncorporateOutput(text=" | ".join([first, _capital(content), *rest]))
    label, _ = split_label(target.text)
    text = f"{label}: {content}" if replace and label else _capital(content)
    neighbours = [b for b in (data.before, data.after) if b is not None and b.type == target.type]
    punctuated = target.type == "paragraph" or any(b.text.endswith(".") for b in neighbours)
    if punctuated and not text.endswith(("?", ".")):
        text += "."
    return s.IncorporateOutput(text=shorten(text, TEXT_CHARS))
