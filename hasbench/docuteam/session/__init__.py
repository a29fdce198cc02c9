"""The DocuTeam session engine, one module per concept.

- :mod:`~hasbench.docuteam.session.front`: :class:`Session`, the public face (editing,
  discussions, steering, incorporation) that hands each call to its part;
- :mod:`~hasbench.docuteam.session.config`: :class:`SessionConfig`, the condition and
  :class:`ConditionError`;
- :mod:`~hasbench.docuteam.session.state`: what the parts share (document, agents,
  step runner, log, discussions) and the acts they all perform (record, add a message,
  set a status, render a scope);
- :mod:`~hasbench.docuteam.session.trigger`: the edit debounce and the proactive trigger;
- :mod:`~hasbench.docuteam.session.loop`: opening discussions and the moderator loop,
  with summaries and bubbles;
- :mod:`~hasbench.docuteam.session.memory`: the agents' memory updates;
- :mod:`~hasbench.docuteam.session.steering`: the user's actions on a discussion;
- :mod:`~hasbench.docuteam.session.incorporation`: messages applied to the document.
"""

from hasbench.docuteam.session.config import Condition, ConditionError, SessionConfig
from hasbench.docuteam.session.front import Session

__all__ = ["Condition", "ConditionError", "Session", "SessionConfig"]
