"""Agents: the LLM agent (native tool calls), its prompt, and the agent factory.

The agent prompt follows the skeleton of HAS paper App. A.2 — profile, reasoning, task,
scope hint, collaboration block, C/F/C guidelines, agents section, users section, memory —
varied by agency level: A1 has no channel protocol and shows no users; A3 adds both; A4
differs from A3 only in its collaboration block (unsolicited human input comes first).

The system prompt is the same on every call of an episode, so providers can cache it:
everything that changes — results, messages, human answers, memory — goes into the
conversation.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hasbench.participants.backends import MODEL, agent_backend
from hasbench.participants.base import (
    Action,
    ActionResult,
    AgentObservation,
    AgentPolicy,
    AgentSeat,
    AgentView,
    CallTool,
    Contact,
    Finish,
    Incoming,
    Malformed,
    SendMessage,
)
from hasbench.prompts import load, render
from hasbench.tools import virtual_tool
from hasbench.vocab import INTERVENTION_DECISIONS

if TYPE_CHECKING:
    from hasbench.llm import ModelResponse

PROMPTS_KEPT = 1024
"""Agent prompts kept per process (least recently used are dropped): a grid runs its
tasks once per setting, so a prompt comes back after every other task's (~1,000 in RQ1)."""

SEND_MESSAGE = virtual_tool(
    "send_message",
    (
        "Send a message to another participant you are connected to: hand work to an "
        "agent, report to the agent who gave you work, or update a person."
    ),
    {
        "target": {"type": "string", "description": "The participant id."},
        "text": {"type": "string", "description": "The message."},
    },
    ["target", "text"],
)
FINISH = virtual_tool(
    "finish",
    (
        "End your part of the task and deliver the result. Include everything the "
        "requester should be told. If you could not do the task, say why and set outcome "
        "to 'unable'."
    ),
    {
        "deliverable": {"type": "string", "description": "Your final result."},
        "outcome": {
            "type": "string",
            "enum": ["done", "unable"],
            "description": "done (the default): the task is done; unable: it is not.",
        },
    },
    ["deliverable"],
)


def agent_prompt(view: AgentView) -> str:
    """The system prompt of an agent (App. A.2 skeleton, varied by agency level).

    It depends on the view alone, which is fixed for the episode; the episodes of a grid
    share it (rendered once per process for each set of the fields it reads).
    """
    return _agent_prompt(
        view.agent_id, view.profile, view.task, view.policy, view.peers, view.people,
        view.coordination_mode, view.team_size, view.collaboration,
        view.cfc_protocol and bool(view.channels),
    )  # fmt: skip


@lru_cache(maxsize=PROMPTS_KEPT)
def _agent_prompt(
    agent_id: str,
    profile: str,
    task: str,
    policy: str,
    peers: tuple[Contact, ...],
    people: tuple[Contact, ...],
    coordination_mode: str,
    team_size: int,
    collaboration: str,
    cfc_guidelines: bool,
) -> str:
    """:func:`agent_prompt` from the fields of the view it reads."""
    if policy:
        task += "\n\nDomain policy:\n" + policy.strip()
    agents_section = ""
    if peers:
        agents_section = render(
            "agents_section", agent_descriptions="\n".join(_describe(p) for p in peers)
        )
    users_section = ""
    if people:
        users_section = render(
            "users_section", user_descriptions="\n".join(_describe(p) for p in people)
        )
    text = render(
        "agent_system",
        agent_id=agent_id,
        profile=profile.strip(),
        reasoning=load("reasoning"),
        task=task,
        scope_hint=load(f"scope_{coordination_mode}") if team_size > 1 else "",
        collaboration=load(f"collaboration_{collaboration}"),
        cfc_guidelines=load("cfc_protocol") if cfc_guidelines else "",
        agents_section=agents_section,
        users_section=users_section,
    )
    return re.sub(r"\n{3,}", "\n\n", text)


def _describe(contact: Contact) -> str:
    parts = [f"- {contact.participant_id}"]
    if contact.role:
        parts.append(f"({contact.role})")
    if contact.counterparty:
        parts.append("[the other side, not your team]")
    if contact.responsibilities:
        parts.append(": " + "; ".join(contact.responsibilities))
    if contact.channels:
        parts.append(f" [channels: {', '.join(contact.channels)}]")
    if contact.tools:
        holds = "holds" if contact.kind == "agent" else "can carry out for you"
        parts.append(f"; {holds}: {', '.join(contact.tools)}")
    if contact.reaches:
        people = ", ".join(
            f"{p.participant_id} ({p.role})" if p.role else p.participant_id
            for p in contact.reaches
        )
        parts.append(f"; can ask: {people}")
    return " ".join(parts[:2]) + "".join(parts[2:])


class Conversation:
    """What a model in an agent's seat reads: the system prompt, then the conversation.

    The one rendering of an agent's observations as text. The LLM agent sends it to its
    model; the offline stand-ins (:mod:`hasbench.participants.standin`) read the same
    texts, so no part of a view reaches a stand-in that a model does not get.

    Each result is a tool message (its text: a tool's output, a human's whole answer as
    :func:`hasbench.channels.answer_text` writes it, ``Error: ...``); what arrived since the
    agent last acted is one user message with a line per input, ``[<kind> from <sender>]
    <text>`` (a human's unasked decision also names it: ``[control from user_0] deny.
    ...``), and ``[memory] <note>`` for memory notes it has not read otherwise.

    Args:
        view: the agent's view.
    """

    def __init__(self, view: AgentView) -> None:
        self.system = {"role": "system", "content": agent_prompt(view)}
        self.messages: list[dict[str, Any]] = []
        self.remembered = 0
        """Memory notes already accounted for."""
        self.told: list[str] = []
        """Results fed back since the last news."""

    def result(self, result: ActionResult) -> str:
        """Add the result of the agent's last action; return its text."""
        self.told.append(result.text)
        call_id = result.action.call_id
        if call_id is not None:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.text})
        else:
            self.messages.append({"role": "user", "content": result.text})
        return result.text

    def news(self, obs: AgentObservation) -> list[str]:
        """Add what arrived since the agent last acted (an opening line the first time).

        Returns the lines of input (messages, human input, new memory notes), in order.
        """
        if not self.messages:
            self.messages.append({"role": "user", "content": "Start working on your task."})
        lines = [incoming_line(i) for i in obs.inbox]
        lines += [f"[memory] {note}" for note in self._new_notes(obs)]
        if lines:
            self.messages.append({"role": "user", "content": "\n".join(lines)})
        return lines

    def skip(self, action: Action) -> None:
        """Answer a tool call of the model that was dropped before it ran."""
        self.messages.append(
            {"role": "tool", "tool_call_id": action.call_id, "content": "Not run."}
        )

    def reply(self, response: ModelResponse) -> None:
        """Add the model's reply (its text and tool calls)."""
        assistant: dict[str, Any] = {"role": "assistant", "content": response.content or ""}
        if response.tool_calls:
            assistant["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in response.tool_calls
            ]
        self.messages.append(assistant)

    def text(self) -> str:
        """Everything the model was given so far, as one text (its replies left out)."""
        parts = [self.system["content"]]
        parts += [m["content"] for m in self.messages if m["role"] != "assistant"]
        return "\n".join(parts)

    def _new_notes(self, obs: AgentObservation) -> list[str]:
        """Memory notes the conversation does not hold yet.

        A note that repeats a result just fed back, or a human's input in this turn's
        inbox (same request id), is already there.
        """
        notes = obs.memory[self.remembered :]
        self.remembered = len(obs.memory)
        told, self.told = self.told, []
        requests = [f"({i.request_id}" for i in obs.inbox if i.request_id]
        return [
            note
            for note in notes
            if note not in told and not any(request in note for request in requests)
        ]


def incoming_line(incoming: Incoming) -> str:
    """One input as the agent reads it: ``[<kind> from <sender>] <text>``.

    A human's unasked control decision (deny, stop, approve, ...) comes first in the text.
    """
    text = incoming.text
    if incoming.kind == "control" and incoming.form in INTERVENTION_DECISIONS:
        text = f"{incoming.form}. {text}"
    return f"[{incoming.kind} from {incoming.sender}] {text}"


class LLMAgent:
    """An agent played by a model through native tool calls.

    Every action is a tool call (domain tools, channel tools, ``send_message``,
    ``finish``); prose without a tool call, invalid JSON arguments and the like become
    :class:`Malformed` actions that the simulator records as typed errors and feeds back.
    A model call that fails (an infrastructure error) is not the agent's doing: the
    :class:`~hasbench.llm.ModelError` goes on to the simulator, which ends the episode.

    The system prompt is rendered once; tool results, incoming messages and memory notes
    not already among them are appended to the conversation (:class:`Conversation`).

    Args:
        model: the litellm model string.
        seat: the agent's view and gateway.
    """

    def __init__(self, model: str, seat: AgentSeat) -> None:
        self.model = model
        self.gateway = seat.gateway
        self.conversation = Conversation(seat.view)
        self.queue: list[Action] = []

    async def act(self, obs: AgentObservation) -> Action:
        """Feed back the last result and new input; call the model when needed."""
        conversation = self.conversation
        if obs.last_result is not None:
            conversation.result(obs.last_result)
        if self.queue and not obs.inbox:
            return self.queue.pop(0)
        for skipped in self.queue:  # new input arrived first: the rest of the batch is dropped
            conversation.skip(skipped)
        self.queue = []
        conversation.news(obs)
        tools = [spec.to_openai() for spec in [*obs.view.tools, SEND_MESSAGE, FINISH]]
        response = await self.gateway.complete(
            "agent", self.model, [conversation.system, *conversation.messages], tools
        )
        conversation.reply(response)
        if not response.tool_calls:
            return Malformed("no_tool_call", "Reply with a tool call; prose alone does nothing.")
        self.queue = [_parse(c.id, c.name, c.arguments) for c in response.tool_calls]
        return self.queue.pop(0)


def _parse(call_id: str, name: str, raw: str) -> Action:
    """Turn one model tool call into an action (or a Malformed one)."""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return Malformed("invalid_json", f"{name}: arguments are not valid JSON ({exc})", call_id)
    if not isinstance(arguments, dict):
        return Malformed("invalid_json", f"{name}: arguments must be a JSON object", call_id)
    if name == "send_message":
        target, text = arguments.get("target"), arguments.get("text")
        if not isinstance(target, str) or not isinstance(text, str):
            return Malformed("invalid_json", "send_message needs string target and text", call_id)
        return SendMessage(target, text, call_id)
    if name == "finish":
        deliverable = arguments.get("deliverable", "")
        outcome = arguments.get("outcome", "done")
        if outcome not in ("done", "unable"):
            return Malformed("invalid_json", "finish: outcome must be 'done' or 'unable'", call_id)
        text = deliverable if isinstance(deliverable, str) else json.dumps(deliverable)
        return Finish(text, call_id, outcome)
    return CallTool(name, arguments, call_id)


@agent_backend(MODEL, label="a litellm model")
def llm_team(model: str, seats: list[AgentSeat]) -> dict[str, AgentPolicy]:
    """Every agent played by the model through native tool calls."""
    return {seat.view.agent_id: LLMAgent(model, seat) for seat in seats}
