"""Simulated participants of the DocuTeam study (issue 17).

``personas`` (expertise, initiative, trust), ``user`` (what a participant sees and does
in a session, scripted or played by a model), ``rating`` (blind ratings of final plans,
rule rubric or model), ``survey`` (post-task questionnaires answered by the persona) and
``study`` (a counterbalanced within-subjects study written in the study CSV schema)::

    from hasbench.docuteam.simulation import SimulationConfig, simulate_study

    result = await simulate_study(SimulationConfig(participants=8), "runs/docuteam_sim")
    result.csv            # -> hasbench study analyze
"""

from hasbench.docuteam.simulation.personas import StudyPersona, load_study_personas
from hasbench.docuteam.simulation.study import SimulatedStudy, SimulationConfig, simulate_study

__all__ = [
    "SimulatedStudy",
    "SimulationConfig",
    "StudyPersona",
    "load_study_personas",
    "simulate_study",
]
