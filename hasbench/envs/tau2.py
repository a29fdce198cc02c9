"""τ²-bench's rendering of tool results, for environments in ``compat: tau2`` mode.

τ²-bench turns what a tool returns into the text its caller reads like this: a text is
passed as it is; a record (one of its data models) is dumped with its fields in the model's
order, null fields included; in a plain mapping or list every number and boolean becomes
its text (``"2.0"``) while records inside keep theirs; the whole is JSON with Python's
default separators and ASCII escapes. Our databases keep τ²'s field order, so a record
read from them renders the same. A tool whose words differ from τ²'s returns
:func:`said`: its own words, carrying τ²'s for the same result (the Telecom domain's phone
and carrier tools), which this mode shows instead.
"""

from __future__ import annotations

import json
from typing import Any


class Record(dict):
    """A mapping τ² returns as one of its data models (its numbers stay numbers)."""


class Said(str):
    """A tool's text in our words that carries τ²'s result for the same call (``.tau2``)."""

    tau2: Any

    def __new__(cls, ours: str, tau2: Any) -> Said:
        """Our text, with τ²'s result kept beside it."""
        text = super().__new__(cls, ours)
        text.tau2 = tau2
        return text


class SaidMapping(dict):
    """A tool's mapping in our words that carries τ²'s result for the same call."""

    def __init__(self, ours: dict[str, Any], tau2: Any) -> None:
        super().__init__(ours)
        self.tau2 = tau2


def said(ours: Any, tau2: Any) -> Any:
    """Our result with τ²'s for the same call: a text, or a mapping (see the classes)."""
    return SaidMapping(ours, tau2) if isinstance(ours, dict) else Said(ours, tau2)


def records(output: Any) -> Any:
    """A result as τ²'s tools give it.

    τ²'s words where the tool keeps them (:func:`said`), else mappings as records.
    """
    if isinstance(output, Said | SaidMapping):
        return output.tau2
    if isinstance(output, dict):
        return Record(output)
    if isinstance(output, list):
        return [Record(item) if isinstance(item, dict) else item for item in output]
    return output


def tau2_text(output: Any) -> str:
    """The text τ²-bench's environment would give the caller for what our tool returned."""
    if type(output) is dict:  # a record: its fields as they are (what the steps below give)
        return _ENCODER.encode(output)
    shaped = records(output)
    if isinstance(shaped, str):
        return shaped
    return _ENCODER.encode(_process(shaped))


_ENCODER = json.JSONEncoder(default=str)
"""``json.dumps(..., default=str)``, built once."""


def _process(value: Any) -> Any:
    """τ²'s treatment of a returned value before it becomes JSON."""
    if isinstance(value, Record):
        return dict(value)
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return [_process(item) for item in value]
    if isinstance(value, dict):
        return {key: _process(item) for key, item in value.items()}
    return value
