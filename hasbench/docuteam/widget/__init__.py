"""The DocuTeam UI (DocuTeam paper §4.1), one implementation for a notebook and a browser.

- ``static/docuteam.js`` and ``docuteam.css``: the page. The document reads as a
  document (blocks grow with their text; headings, lists, to-dos and tables styled as
  such); discussion cards, the notices of discussions the agents open and the agents'
  reactions sit in a margin beside the block they concern, without moving the text; the
  side panel holds the team (add or edit an agent: name, role, stance, expertise), the
  form that starts a discussion on the ticked blocks (mode, agents, a request), the list
  of discussions (unread ones marked) and the open thread: messages with their acts and
  an Apply button each, the agents' question with quick replies and a free answer, the
  mode's summary (every item can be applied), Send, Stop and, in DocuTeam, the
  participants, focus and mode. Edits are sent while typing; the agents read them after
  the session's debounce counted from the last one. In Baseline the page is a side-panel
  chat about the whole document.
- :mod:`~hasbench.docuteam.widget.controller`: :class:`SessionController`, the Python
  half: the session as the page's JSON state, the page's JSON actions applied.
- :mod:`~hasbench.docuteam.widget.front`: :class:`DocuTeamWidget`, the page in JupyterLab
  and Voila (anywidget), and :func:`session_widget`.

The served study (:mod:`hasbench.serve.study`) shows the same page with the same
controller through the server's live channel.
"""

from hasbench.docuteam.widget.controller import SessionController
from hasbench.docuteam.widget.front import DocuTeamWidget, session_widget

__all__ = ["DocuTeamWidget", "SessionController", "session_widget"]
