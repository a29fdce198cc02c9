"""Incorporation: a discussion message (or a summary item) put into the document.

In DocuTeam the snippet is rewritten to fit the target block and its neighbours (the
``incorporate`` step); in Baseline it is pasted as it is. The result is an ordinary edit,
placed after the target block or replacing it, and an ``application`` event. A
replaced text is never lost: the edit keeps it (``before``), so it stays in the block's
history (:meth:`~hasbench.docuteam.document.Document.block_history`), and the
``application`` event names it (``replaced``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from hasbench.docuteam import schemas as s
from hasbench.docuteam.document import EditOp
from hasbench.docuteam.session.state import SessionState

Placement = Literal["after", "replace"]


class Incorporation:
    """Applies discussion messages to the document.

    Args:
        state: The session's shared state.
        edited: Called with each edit it makes (so the edit is logged and can trigger
            the agents, like one the user typed).
    """

    def __init__(self, state: SessionState, edited: Callable[[EditOp], EditOp]) -> None:
        self.state = state
        self.edited = edited
        self.applications = 0

    async def apply(
        self,
        discussion_id: str,
        message_id: str,
        target: str,
        placement: Placement,
        text: str | None,
    ) -> EditOp | None:
        """Put a message into the document (see :meth:`Session.apply_message`)."""
        state = self.state
        d = state.discussion(discussion_id)
        message = d.message(message_id)
        snippet = text or message.text
        block = state.document.block(target)
        application = f"a{self.applications + 1}"
        if state.baseline:
            written, adapted = " ".join(snippet.split()), False
        else:
            before, after = state.document.neighbours(target, 1)
            out = await state.steps.run(
                "incorporate",
                s.IncorporateInput(
                    snippet=snippet,
                    author_name=message.author_name,
                    speakers=[
                        state.agents[a].profile.name
                        for a in dict.fromkeys([*d.participants, *d.speakers()])
                        if a in state.agents
                    ],
                    focus=d.focus,
                    target=block,
                    before=before[0] if before else None,
                    after=after[0] if after else None,
                    placement=placement,
                ),
                d.id,
            )
            if out is None:
                return None
            written, adapted = out.text, True
        self.applications += 1
        if placement == "replace":
            op = state.document.update(
                target, written, source="application", application=application
            )
        else:
            kind = "paragraph" if block.type == "heading" else block.type
            op = state.document.insert(
                written,
                kind,
                target,
                level=block.level if kind == "heading" else 0,
                source="application",
                application=application,
            )
        self.edited(op)
        payload = {
            "id": application,
            "message_id": message_id,
            "target": target,
            "placement": placement,
            "snippet": snippet,
            "text": written,
            "replaced": op.before if placement == "replace" else None,
            "adapted": adapted,
            "edit": op.id,
        }
        state.record("application", "user", payload, d.id)
        return op
