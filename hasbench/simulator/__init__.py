"""The episode: agents and humans acting over the HAS Graph, recorded as a trace.

An :class:`Episode` is agent-driven (HAS paper §4.1). Each :meth:`Episode.step` lets the
active agent act once: call a domain tool, call a virtual channel tool (the agent pauses,
the request is routed through the HAS Graph to a human, the answer is written to the
trace and into the agent's memory, the agent resumes), message a neighbour, or finish.
Humans act when a request reaches them, when a spontaneous trigger fires (A4), or when
control hands them an action. Limits end the episode with a typed
:data:`~hasbench.trace.TerminationReason`. Everything random comes from generators seeded
by the episode seed, and the trace carries no wall-clock, so a rerun is byte-identical.

The rooms, each importing only those listed after it:

- :mod:`~hasbench.simulator.episode`: the turn loop (:class:`Episode`, :func:`run_episode`).
- :mod:`~hasbench.simulator.actions`: what an agent's action does.
- :mod:`~hasbench.simulator.spontaneous`: humans' unasked input and goal revisions.
- :mod:`~hasbench.simulator.control`: authorization of writes, control decisions.
- :mod:`~hasbench.simulator.scheduling`: who acts next.
- :mod:`~hasbench.simulator.context`: the shared state; running a tool, handing over input.
- :mod:`~hasbench.simulator.views` and :mod:`~hasbench.simulator.gateway`: what each
  participant is shown; its door to models.
- :mod:`~hasbench.simulator.record`: the trace, the channel controllers, termination.
- :mod:`~hasbench.simulator.setup`: the fixed facts of an episode.
- :mod:`~hasbench.simulator.backends`: who plays each role (:class:`Backends`).
"""

from hasbench.simulator.backends import Backends
from hasbench.simulator.episode import Episode, run_episode
from hasbench.simulator.record import library_versions

__all__ = ["Backends", "Episode", "library_versions", "run_episode"]
