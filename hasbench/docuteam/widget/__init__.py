"""DocuTeamWidget: a DocuTeam session in JupyterLab or Voila (ipywidgets).

The widget is the face of :class:`~hasbench.docuteam.session.Session` (DocuTeam paper
§4.1). In the DocuTeam condition the document pane shows every block as an editable line
with a checkbox to select it; each discussion is a card beside the first block it is
anchored to (participants, mode, status and the one-line bubble summary), and the agents'
short reactions appear next to the block they are reading. The side panel starts a
discussion on the selected blocks (mode, agents, an optional request), lists the
discussions, and shows the open one: its messages with their acts, the mode's summary
with links to the messages, the agents' question with its two quick replies and a text
box, steering (post, add or remove agents, focus, mode, stop) and Apply buttons that put a
message or a summary item into a chosen block. Discussions the agents open announce
themselves in a notice with the agents' reactions. In the Baseline condition the same
widget is a side-panel chat: whole-document threads, no anchors, no proactive agents,
no in-document steering.

Everything that waits for a model runs as a task on the kernel's event loop, so the
notebook stays responsive: a running discussion shows a "thinking" line naming the next
speaker, and its Stop button ends it after the current step. The widget redraws from the
session log (:meth:`Session.subscribe`), so what it shows is what the log records.

One module per part: :mod:`~hasbench.docuteam.widget.front` (the widget: its tasks, the
errors line, following the log), :mod:`~hasbench.docuteam.widget.document_pane` (the
blocks), :mod:`~hasbench.docuteam.widget.cards` (discussion cards and notices),
:mod:`~hasbench.docuteam.widget.side_panel` (agents, start form, discussion list),
:mod:`~hasbench.docuteam.widget.thread` (the open discussion and its steering) and
:mod:`~hasbench.docuteam.widget.common` (labels, style sheet, the parts' context).
"""

from hasbench.docuteam.widget.front import DocuTeamWidget, session_widget

__all__ = ["DocuTeamWidget", "session_widget"]
