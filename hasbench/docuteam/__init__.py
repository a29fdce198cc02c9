"""DocuTeam: mixed-initiative multi-agent discussions around an evolving document.

The engine (DocuTeam paper §4, App. C) and the user-study analysis (``study``)::

    from hasbench.docuteam import RoleModels, ManualClock, Session, SessionConfig

    session = Session.from_folder("data/docuteam/workshop", clock=ManualClock())
    session.edit("b22", "Networking: random tables of five, or speed rounds?")
    session.clock.advance(2.5)
    await session.tick()       # agents judge the edit; a discussion may open
    await session.settle()     # and runs until it converges or asks the user
    session_measures(session.log)

``document`` holds the block document, ``agents`` profiles and memory, ``session/`` the
engine (a front over its trigger, discussion loop, memory upkeep, steering and
incorporation; with ``discussion`` state and ``timing``: clocks and the edit debounce),
``steps``/``schemas`` the model steps (prompts in ``hasbench/prompts/docuteam/``),
``scripted`` the offline stand-ins, ``log`` the JSONL session log, ``failures`` lost
steps and failed sessions (infrastructure failures: errors, not measures), ``measures``
the process measures, ``demo`` a scripted user's session, ``widget/`` the UI (one
HTML/JS page over a JSON :class:`~hasbench.docuteam.widget.SessionController`, shown in
notebooks by :class:`~hasbench.docuteam.widget.DocuTeamWidget` and in the served study),
``study/`` the study (design file, questionnaires, folder, data, analysis, outputs) and
``simulation`` simulated study participants.
"""

from hasbench.docuteam.agents import Agent, AgentProfile, Memory, MemoryEntry, load_agents
from hasbench.docuteam.discussion import Discussion, TriggerDecision
from hasbench.docuteam.document import Block, Document, EditOp, word_changes
from hasbench.docuteam.log import LogEvent, SessionLog
from hasbench.docuteam.measures import session_measures, study_data, study_rows
from hasbench.docuteam.session import ConditionError, Session, SessionConfig
from hasbench.docuteam.steps import RoleModels
from hasbench.docuteam.timing import ManualClock, SystemClock

__all__ = [
    "Agent",
    "AgentProfile",
    "RoleModels",
    "Block",
    "ConditionError",
    "Discussion",
    "Document",
    "EditOp",
    "LogEvent",
    "ManualClock",
    "Memory",
    "MemoryEntry",
    "Session",
    "SessionConfig",
    "SessionLog",
    "SystemClock",
    "TriggerDecision",
    "load_agents",
    "session_measures",
    "study_data",
    "study_rows",
    "word_changes",
]
