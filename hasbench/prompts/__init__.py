"""Prompt templates, one file per prompt, written for hasbench.

Templates use ``string.Template`` placeholders (``$name``). Their SHA-256 hashes go into
every trace header, so a changed prompt is visible in the results.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from hasbench.vocab import text_hash

PROMPTS_DIR = Path(__file__).parent


@cache
def load(name: str) -> str:
    """The text of the prompt file ``<name>.txt``."""
    path = PROMPTS_DIR / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8").rstrip("\n")
    except FileNotFoundError:
        raise KeyError(f"no prompt named {name!r} in {PROMPTS_DIR}") from None


def render(name: str, **values: object) -> str:
    """Fill a prompt's placeholders; a missing value is a KeyError naming it."""
    return Template(load(name)).substitute({k: str(v) for k, v in values.items()})


@cache
def prompt_hashes(folder: str = "") -> dict[str, str]:
    """Prompt name -> first 16 hex digits of the SHA-256 of its text, for every prompt.

    Args:
        folder: a subfolder of prompts of its own (``"docuteam"``); by default the
            HAS-Bench prompts, whose hashes go into every trace header.
    """
    return {
        path.stem: text_hash(path.read_bytes(), 16)
        for path in sorted((PROMPTS_DIR / folder).glob("*.txt"))
    }
