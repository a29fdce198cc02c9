"""``scripted:docuteam``: deterministic stand-ins for every DocuTeam role.

They read the same structured inputs a model is shown (never a prompt) and follow the
same rules, so a session runs offline, fast and reproducibly. ``reading`` is how they
read text (topics, the user's options and choices, a message's substance), and each
role's rules are documented in its module: ``discussion`` (focus, moderator, agents,
memory updates, summaries, bubbles), ``trigger`` (edit reading, agent selection, need
scores) and ``incorporation`` (a message rewritten as a block).

These are stand-ins for models, labelled as such wherever results are reported.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from hasbench.docuteam.scripted.discussion import (
    bubble,
    focus,
    memory_discussion,
    memory_user,
    moderator,
    summary,
    utterance,
)
from hasbench.docuteam.scripted.incorporation import incorporate
from hasbench.docuteam.scripted.trigger import need, read_edit, select_agents

SCRIPTED_STEPS: dict[str, Callable[[BaseModel], BaseModel]] = {
    "focus": focus,
    "moderator": moderator,
    "utterance": utterance,
    "memory_discussion": memory_discussion,
    "memory_user": memory_user,
    "summary": summary,
    "bubble": bubble,
    "read_edit": read_edit,
    "select_agents": select_agents,
    "need": need,
    "incorporate": incorporate,
}
"""Step name -> its stand-in."""
