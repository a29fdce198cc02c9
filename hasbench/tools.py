"""What participants are told about a tool: its name, schema, kind, side and risk."""

from __future__ import annotations

import inspect
import re
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

    def enum_values(self) -> set[str]:
        """Every enum value in the parameter schema (a caller reads these in the schema)."""
        values: set[str] = set()
        for prop in self.parameters.get("properties", {}).values():
            values.update(str(v) for v in prop.get("enum", []))
        for definition in self.parameters.get("$defs", {}).values():
            values.update(str(v) for v in definition.get("enum", []))
        return values


def virtual_tool(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> ToolSpec:
    """A tool of the simulator itself that agents call (a channel, a message, finishing).

    It changes no environment state: generic, on the agent's side, without risk. Its
    parameters are an object with ``properties``, of which ``required`` must be given.
    """
    parameters = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(name, description, parameters, kind="generic", side="agent", risk="none")


_ARGS_HEADER = re.compile(r"^(Args|Arguments):\s*$")
_ARG_LINE = re.compile(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's text without its ``Args:`` section, and that section.

    Returns:
        The description (every other line, as written) and argument name -> its
        description (continuation lines joined).
    """
    lines = inspect.cleandoc(doc).splitlines()
    kept: list[str] = []
    arguments: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not _ARGS_HEADER.match(line):
            kept.append(line)
            continue
        name, indent = None, None
        while index < len(lines) and (not lines[index].strip() or lines[index][:1].isspace()):
            text = lines[index]
            index += 1
            if not text.strip():
                continue
            depth = len(text) - len(text.lstrip())
            match = _ARG_LINE.match(text.strip())
            if match and (indent is None or depth <= indent):
                name, indent = match.group(1), depth
                arguments[name] = match.group(2)
            elif name is not None:
                arguments[name] = f"{arguments[name]} {text.strip()}".strip()
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return description, arguments
