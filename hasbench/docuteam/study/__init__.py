"""The DocuTeam within-subjects user study: data schema, example data, analysis, outputs.

Typical use::

    from hasbench.docuteam.study import analyze, generate_example, load_study, write_outputs

    data = load_study("study.csv")          # or generate_example(seed=0)
    analysis = analyze(data, alpha=0.05, seed=0)
    write_outputs(analysis, "figures/docuteam")
"""

from hasbench.docuteam.study.analysis import StudyAnalysis, analyze
from hasbench.docuteam.study.data import (
    CONDITIONS,
    StudyData,
    StudyDataError,
    load_study,
    write_study,
)
from hasbench.docuteam.study.example import generate_example
from hasbench.docuteam.study.report import run_study_analysis, write_outputs

__all__ = [
    "CONDITIONS",
    "StudyAnalysis",
    "StudyData",
    "StudyDataError",
    "analyze",
    "generate_example",
    "load_study",
    "run_study_analysis",
    "write_outputs",
    "write_study",
]
