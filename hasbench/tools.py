"""What participants are told about a tool: its name, schema, kind, side and risk."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hasbench.vocab import Risk, Side, ToolKind


@dataclass(frozen=True)
class ToolSpec:
    """What a participant is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    kind: ToolKind
    side: Side
    risk: Risk

    def to_openai(self) -> dict[str, Any]:
        """The tool in OpenAI function-calling format.

        A write's description ends with its risk, which models see as stand-ins do.
        """
        description = self.description
        if self.kind == "write":
            description += f"\n\nChanges state (risk: {self.risk})."
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": description,
                "parameters": self.parameters,
            },
        }
