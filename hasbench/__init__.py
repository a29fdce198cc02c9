"""hasbench: a research workbench for LLM-based Human-Agent Systems (HAS-Bench, DocuTeam)."""

import os

# litellm fetches its model cost map from the network at import time unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
