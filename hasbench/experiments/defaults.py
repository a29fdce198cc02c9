"""The offline stand-ins every figure notebook uses by default, in one place.

Notebooks and ``run`` functions take ``agent_models=None`` (and ``user_models=None`` for the
simulator study) to mean these. Replacing a stand-in here changes every notebook at once;
real models are passed as litellm model strings instead.
"""

from __future__ import annotations

OFFLINE_AGENTS: tuple[str, ...] = (
    "scripted:standin?strong",
    "scripted:standin?weak",
    "scripted:standin?careful",
)
"""Agent backends standing in for models in offline runs (RQ1, simulator robustness): the
honest stand-ins, which see only the agent's view (never the planner presets or the oracle,
which read the answer key), in three profiles of competence and caution."""
OFFLINE_SWEEP_AGENTS: tuple[str, ...] = OFFLINE_AGENTS[:1]
"""The agent of the single-model sweeps (RQ2–RQ4); the HAS paper runs them with one model."""
OFFLINE_USER = "scripted:user"
"""The user simulator of offline runs."""
OFFLINE_JUDGE = "rule"
"""The judge of offline runs: the deterministic rule judge."""
LOCAL_USER_MODEL = "local/smollm2-135m"
"""A real small language model served in-process (needs the ``[local]`` extra)."""
OFFLINE_USER_SIMULATORS: tuple[str, ...] = (
    OFFLINE_USER,
    "scripted:user-guarded",
    "scripted:user-forthcoming",
    LOCAL_USER_MODEL,
)
"""User simulators compared offline by the robustness study: three scripted profiles and the
local model (left out with a note when the ``[local]`` extra is not installed)."""


def agents_or_default(agent_models: list[str] | tuple[str, ...] | None, sweep: bool) -> list[str]:
    """The given agent models, or the offline stand-ins (the sweep agent when ``sweep``)."""
    if agent_models is not None:
        return list(agent_models)
    return list(OFFLINE_SWEEP_AGENTS if sweep else OFFLINE_AGENTS)
