"""User simulators: the LLM-backed human and the user factory.

Each channel has a responder that builds a persona-aware prompt (HAS paper App. A.1) from
the human's current goal, task_instructions and known_info, using only the persona
dimensions that channel relies on. The simulated human reveals only what is asked,
invents nothing, and decides on actions (approve / deny / modify / stop / override, or
take over with a human-side tool of its own; execute a user-side action it was asked to
carry out). When it drives the collaboration (A5) it sets the agent's next subtask. A
reply that cannot be used is recorded as an error of that human and yields no answer,
never a made-up one. A model call that fails (an infrastructure error) is raised on: the
simulator ends the episode in error.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from hasbench.channels import (
    ChannelRequest,
    ClarificationResponse,
    ControlDecision,
    FeedbackResponse,
)
from hasbench.participants.backends import MODEL, user_backend
from hasbench.participants.base import ActionFacts, HumanSeat, HumanView
from hasbench.prompts import render

if TYPE_CHECKING:
    from hasbench.scenario import TriggerRule

APPROVAL_DECISIONS = ("approve", "deny", "modify", "stop", "override", "take_over")
EXECUTE_DECISIONS = ("execute", "deny")
DECISION_COMMENT_CHARS = 300
"""Longest reason a played person gives with a decision, as the response format says (the
prompt asks for a short one). Without it a small model can repeat a phrase inside the
reason until its token limit, which leaves a reply that is no decision at all."""


def user_system_prompt(view: HumanView, channel: str | None) -> str:
    """The standing instructions of a simulated human for one channel."""
    known = "\n".join(f"- {k}: {v}" for k, v in view.known_info.items()) or "(nothing)"
    unknown = "\n".join(f"- {k}" for k in view.unknown_info) or "(nothing listed)"
    text = render(
        "user_system",
        user_id=view.user_id,
        role=view.role or "user",
        goal=view.goal.strip(),
        task_instructions=view.task_instructions.strip() or "(none)",
        known_info=known,
        unknown_info=unknown,
        persona=view.persona.describe(channel),
    )
    if view.untold_revision is not None:
        text += (
            "\n\nYour goal has just changed to the one above. Tell the agent about the change "
            "in your reply."
        )
    return text


class LLMUser:
    """A human played by a model; one prompt per channel.

    Args:
        model: the litellm model string.
        seat: the human's gateway.
    """

    def __init__(self, model: str, seat: HumanSeat) -> None:
        self.model = model
        self.gateway = seat.gateway

    async def _ask(
        self,
        view: HumanView,
        channel: str | None,
        prompt: str,
        response_format: dict[str, Any] | None = None,
    ) -> str | None:
        messages = [
            {"role": "system", "content": user_system_prompt(view, channel)},
            {"role": "user", "content": prompt},
        ]
        response = await self.gateway.complete(
            "user", self.model, messages, response_format=response_format
        )
        text = (response.content or "").strip()
        if not text:
            self.gateway.report_error("no_tool_call", "the user model returned no text")
            return None
        return text

    async def clarify(
        self, view: HumanView, request: ChannelRequest
    ) -> ClarificationResponse | None:
        """Answer a question; ``info`` lists the known facts the answer contains."""
        note = f"This is question number {view.asks} you have been asked." if view.asks > 1 else ""
        prompt = render(
            "user_clarification",
            sender=request.sender,
            question=request.content,
            repeat_note=note,
        )
        text = await self._ask(view, "clarification", prompt)
        if text is None:
            return None
        info = {k: v for k, v in view.known_info.items() if str(v).lower() in text.lower()}
        return ClarificationResponse(content=text, info=info)

    async def review(self, view: HumanView, request: ChannelRequest) -> FeedbackResponse | None:
        """Review an artifact: comment, rating and corrected facts (of those it knows)."""
        prompt = render(
            "user_feedback",
            sender=request.sender,
            artifact=request.content,
            question="",
        )
        review_format = _object_format(
            "review",
            {"comment": {"type": "string"}, "rating": {"enum": [1, 2, 3, 4, 5]},
             "edits": {"type": "object", "additionalProperties": False,
                       "properties": {key: {"type": "string"} for key in view.known_info}}},
            required=["comment", "rating"],
        )  # fmt: skip
        text = await self._ask(view, "feedback", prompt, review_format)
        if text is None:
            return None
        data = _json_object(text)
        if data is None:
            return FeedbackResponse(content=text)
        comment = data.get("comment")
        rating = data.get("rating")
        edits = data.get("edits")
        return FeedbackResponse(
            content=comment if isinstance(comment, str) and comment else text,
            rating=rating if isinstance(rating, int) and 1 <= rating <= 5 else None,
            edits=edits if isinstance(edits, dict) and edits else None,
        )

    async def decide(
        self, view: HumanView, request: ChannelRequest, facts: ActionFacts
    ) -> ControlDecision | None:
        """Decide on an action; an unusable reply gives no decision."""
        allowed = EXECUTE_DECISIONS if request.form == "execute" else APPROVAL_DECISIONS
        if not view.tools:  # nothing of its own to take an action over with
            allowed = tuple(d for d in allowed if d != "take_over")
        action = request.action
        prompt = render(
            "user_control",
            sender=request.sender,
            mode_text=(
                "carry out this action yourself" if request.form == "execute"
                else f"approve this {facts.risk}-risk action"
            ),
            action_name=action.name if action else "",
            action_arguments=json.dumps(action.arguments if action else {}, sort_keys=True),
            reason=request.content,
            decisions=", ".join(allowed),
            own_tools=", ".join(spec.name for spec in view.tools) or "(none)",
        )  # fmt: skip
        fields: dict[str, Any] = {
            "decision": {"enum": list(allowed)},
            "comment": {"type": "string", "maxLength": DECISION_COMMENT_CHARS},
        }
        if {"modify", "override", "take_over"} & set(allowed):
            fields["arguments"] = {"type": "object"}
        if "take_over" in allowed:
            fields["tool"] = {"enum": [spec.name for spec in view.tools]}
        decision_format = _object_format("decision", fields, required=["decision", "comment"])
        text = await self._ask(view, "control", prompt, decision_format)
        if text is None:
            return None
        data = _json_object(text)
        decision = data.get("decision") if data else None
        if decision not in allowed:
            self.gateway.report_error(
                "invalid_json", f"no decision among {allowed} in: {text[:200]}"
            )
            return None
        changes = decision in ("modify", "override", "take_over")
        arguments = data.get("arguments") if changes else None
        tool = data.get("tool") if decision == "take_over" else None
        if tool is not None and tool not in {spec.name for spec in view.tools}:
            self.gateway.report_error("invalid_json", f"take_over names no tool of yours: {tool}")
            return None
        comment = data.get("comment")
        return ControlDecision(
            decision=decision,
            content=comment if isinstance(comment, str) else "",
            arguments=arguments if isinstance(arguments, dict) and arguments else None,
            tool=tool,
        )

    async def next_subtask(self, view: HumanView, given: int) -> str | None:
        """The next subtask, in the model's words; None when it says it has nothing more."""
        prompt = render("user_subtask", given=str(given), history=view.history)
        text = await self._ask(view, "control", prompt)
        if text is None or text.strip().upper().startswith("DONE"):
            return None
        return text

    async def intervene(self, view: HumanView, rule: TriggerRule, agent_id: str) -> str | None:
        """Write the spontaneous message of a trigger rule."""
        kind_text = {
            "clarification": "add or correct information the agent needs",
            "feedback": "comment on what the agent has produced so far",
            "control": "step in on what the agent is doing or about to do",
        }[rule.action_type]
        prompt = render(
            "user_spontaneous",
            channel=rule.action_type,
            agent_id=agent_id,
            kind_text=kind_text,
            history=view.history,
        )
        return await self._ask(view, rule.action_type, prompt)


def _object_format(name: str, fields: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The response format asking for one JSON object with these fields.

    It is the shape the prompt describes; a local model is held to it by a grammar.
    """
    schema = {"type": "object", "properties": fields, "required": required}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a reply; a line break left raw inside a string is taken as one."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0), strict=False)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


@user_backend(MODEL, label="a litellm model")
def llm_user(model: str, seat: HumanSeat) -> LLMUser:
    """A human played by the model."""
    return LLMUser(model, seat)
