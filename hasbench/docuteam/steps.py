"""The DocuTeam model steps and the runner that calls a backend for each.

Every step (focus, moderator, utterance, memory updates, summary, bubble, edit reading,
agent selection, need scoring, incorporation) belongs to one of five roles, and a
:class:`RoleModels` names the model or scripted stand-in that plays each role. The
:class:`StepRunner` renders the step's prompts (``hasbench/prompts/docuteam/``), calls
the model through :class:`hasbench.llm.LLMClient` (response cache, retries) with a JSON
schema response format, parses and checks the reply, and asks once more with the
problem stated when the reply is unusable. A second unusable reply, or a model failure,
is recorded as an error event and the step yields None: nothing is made up in its place.
Model failures are infrastructure failures: the runner counts them and, when they fail
the session (:mod:`~hasbench.docuteam.failures`), records ``session_failed`` and runs
no model step after it.
Scripted stand-ins (``scripted:docuteam``) compute the output from the same structured
input, without a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from hasbench.docuteam import schemas as s
from hasbench.docuteam.document import Block, render_blocks, render_edits
from hasbench.docuteam.failures import LossCounter, failure_payload
from hasbench.llm import LLMClient, ModelError, ModelResponse
from hasbench.prompts import render

StepRole = Literal["moderator", "agents", "trigger", "summarizer", "incorporator"]
ROLES: tuple[StepRole, ...] = ("moderator", "agents", "trigger", "summarizer", "incorporator")
SCRIPTED = "scripted:docuteam"
PROMPT_FOLDER = "docuteam"
RAW_KEPT = 600
"""Characters of an unusable reply kept in its error event."""


class RoleModels(BaseModel):
    """Which model or scripted stand-in plays each DocuTeam role.

    Any litellm model string, ``local/<name>``, ``test/<name>`` or ``scripted:docuteam``.
    The paper used one model for utterances (``agents``) and a cheaper one elsewhere.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    moderator: str = SCRIPTED
    agents: str = SCRIPTED
    trigger: str = SCRIPTED
    summarizer: str = SCRIPTED
    incorporator: str = SCRIPTED

    @field_validator(*ROLES)
    @classmethod
    def _known(cls, value: str) -> str:
        if not value:
            raise ValueError("a backend needs a model string")
        if value.startswith("scripted:") and value != SCRIPTED:
            raise ValueError(f"unknown scripted backend {value!r} (known: {SCRIPTED})")
        return value

    @classmethod
    def all(cls, model: str) -> RoleModels:
        """The same backend for every role."""
        return cls(**dict.fromkeys(ROLES, model))

    def uses_models(self) -> bool:
        """True when any role is played by a model rather than a scripted stand-in."""
        return any(not getattr(self, role).startswith("scripted:") for role in ROLES)


# --------------------------------------------------------------------------- prompt text


def render_agents(agents: list[s.PublicProfile]) -> str:
    """One line per agent: id, name, role, stance and expertise."""
    return "\n".join(
        f"- {a.id}: {a.name}, {a.role}. Stance: {a.stance} Expertise: {', '.join(a.expertise)}."
        for a in agents
    )


def render_profile(agent: s.PublicProfile) -> str:
    """An agent's profile as prompt text."""
    return (
        f"Name: {agent.name} (id {agent.id})\nRole: {agent.role}\nStance: {agent.stance}\n"
        f"Expertise: {', '.join(agent.expertise)}"
    )


def render_messages(messages: list[s.Message]) -> str:
    """A conversation, one line per message with its id, author and act."""
    if not messages:
        return "(no messages yet)"
    lines = []
    for m in messages:
        if m.author == "user":
            lines.append(f"[{m.id}] [user]: {m.text}")
        elif m.author == "moderator":
            lines.append(f"[{m.id}] [moderator] asked the user: {m.text}")
        else:
            lines.append(f"[{m.id}] {m.author_name} ({m.author}) {m.act or ''}: {m.text}")
    return "\n".join(lines)


def render_memory(entries: list[Any]) -> str:
    """Memory entries with their ids and types."""
    if not entries:
        return "(empty)"
    return "\n".join(f"- {e.id} ({e.type}): {e.content}" for e in entries)


def _optional(block: Block | None) -> str:
    return "(none)" if block is None else render_blocks([block])


def _values(step: str, data: Any) -> dict[str, object]:
    """The placeholder values of a step's user prompt."""
    if step == "focus":
        return {
            "task": data.task,
            "outline": data.outline,
            "section": data.scope.section or "(none)",
            "scope": render_blocks(data.scope.blocks),
            "mode": data.mode.upper(),
            "initiator": "the user" if data.initiator == "user" else "the agents, after an edit",
            "comment": data.comment or "(none)",
            "agents": render_agents(data.agents),
        }
    if step == "moderator":
        return {
            "task": data.task,
            "mode": data.mode.upper(),
            "section": data.scope.section or "(none)",
            "scope": render_blocks(data.scope.blocks),
            "focus": data.focus,
            "agents": render_agents(data.agents),
            "agent_turns": data.agent_turns,
            "asked_user": "yes" if data.asked_user else "no",
            "dialog_state": data.dialog_state.model_dump_json(),
            "messages": render_messages(data.messages),
        }
    if step == "utterance":
        return {
            "memory": render_memory(data.memory),
            "elsewhere": "\n".join(f"- {t}" for t in data.elsewhere) or "(none)",
            "task": data.task,
            "mode": data.mode.upper(),
            "focus": data.focus,
            "section": data.scope.section or "(none)",
            "scope": render_blocks(data.scope.blocks),
            "near": render_blocks(data.scope.near),
            "direction": data.direction,
            "messages": render_messages(data.messages),
        }
    if step == "memory_discussion":
        return {
            "agent": f"{data.agent.name} ({data.agent.id}), {data.agent.role}",
            "mode": data.mode.upper(),
            "focus": data.focus,
            "messages": render_messages(data.messages),
            "entries": render_memory(data.entries),
        }
    if step in ("memory_user", "bubble"):
        return {
            "mode": data.mode.upper(),
            "focus": data.focus,
            "messages": render_messages(data.messages),
        }
    if step == "summary":
        return {
            "mode": data.mode.upper(),
            "focus": data.focus,
            "agents": "\n".join(f"- {a.id}: {a.name}" for a in data.agents),
            "speakers": ", ".join(data.speakers) or "(none)",
            "messages": render_messages(data.messages),
        }
    if step == "read_edit":
        return {"task": data.task, "outline": data.outline, "edits": render_edits(data.edits)}
    if step == "select_agents":
        return {
            "interpretation": data.interpretation,
            "goal": data.goal,
            "agents": render_agents(data.agents),
        }
    if step == "need":
        nearby = "\n".join(
            f"- {d.id} ({d.mode.upper()}): {d.focus} {d.bubble}" for d in data.nearby
        )
        return {
            "task": data.task,
            "interpretation": data.interpretation,
            "goal": data.goal,
            "edits": render_edits(data.edits),
            "nearby": nearby or "(none)",
        }
    if step == "incorporate":
        return {
            "author": data.author_name,
            "speakers": ", ".join(data.speakers) or "(none)",
            "snippet": data.snippet,
            "focus": data.focus,
            "placement": data.placement,
            "target": render_blocks([data.target]),
            "before": _optional(data.before),
            "after": _optional(data.after),
        }
    raise KeyError(f"no prompt values for step {step!r}")


def _system_values(step: str, data: Any) -> dict[str, object]:
    """The placeholder values of a step's system prompt."""
    if step == "moderator":
        return {"mode_rules": render(f"{PROMPT_FOLDER}/moderator_mode_{data.mode}")}
    if step == "summary":
        return {"mode_rules": render(f"{PROMPT_FOLDER}/summary_mode_{data.mode}")}
    if step == "utterance":
        return {"profile": render_profile(data.agent)}
    if step == "need":
        return {"profile": render_profile(data.agent)}
    return {}


# --------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class ModelStep:
    """One model step: its role, input model and output model (chosen by the input)."""

    name: str
    role: StepRole
    input: type[BaseModel]
    output: Callable[[Any], type[BaseModel]]

    def messages(self, data: BaseModel) -> list[dict[str, str]]:
        """The chat messages (system, user) that put this step to a model."""
        folder = f"{PROMPT_FOLDER}/{self.name}"
        return [
            {
                "role": "system",
                "content": render(f"{folder}_system", **_system_values(self.name, data)),
            },
            {"role": "user", "content": render(f"{folder}_user", **_values(self.name, data))},
        ]


def _fixed(model: type[BaseModel]) -> Callable[[Any], type[BaseModel]]:
    return lambda data: model


STEPS: dict[str, ModelStep] = {
    step.name: step
    for step in (
        ModelStep("focus", "moderator", s.FocusInput, _fixed(s.FocusOutput)),
        ModelStep("moderator", "moderator", s.ModeratorInput, _fixed(s.ModeratorOutput)),
        ModelStep("utterance", "agents", s.UtteranceInput, _fixed(s.UtteranceOutput)),
        ModelStep("need", "agents", s.NeedInput, _fixed(s.NeedOutput)),
        ModelStep("read_edit", "trigger", s.ReadEditInput, _fixed(s.ReadEditOutput)),
        ModelStep("select_agents", "trigger", s.SelectInput, _fixed(s.SelectOutput)),
        ModelStep(
            "memory_discussion",
            "summarizer",
            s.DiscussionMemoryInput,
            _fixed(s.DiscussionMemoryOutput),
        ),
        ModelStep("memory_user", "summarizer", s.UserMemoryInput, _fixed(s.UserMemoryOutput)),
        ModelStep(
            "summary", "summarizer", s.SummaryInput, lambda data: s.SUMMARY_MODELS[data.mode]
        ),
        ModelStep("bubble", "summarizer", s.BubbleInput, _fixed(s.BubbleOutput)),
        ModelStep("incorporate", "incorporator", s.IncorporateInput, _fixed(s.IncorporateOutput)),
    )
}


# --------------------------------------------------------------------------- running

LogRecorder = Callable[..., None]
"""``record(type, payload, discussion=None, usage=None)``: append an event to the log."""

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_reply(model: type[BaseModel], content: str | None, what: str) -> BaseModel:
    """Parse a model reply into ``model``.

    A reply wrapped in a Markdown code fence is accepted; anything else must be exactly
    one JSON object of the model.

    Raises:
        StepOutputError: the reply is not a valid ``what`` object; the message says why.
    """
    text = (content or "").strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()[:4]
        )
        raise s.StepOutputError(f"not a valid {what} object ({problems})") from None


def parse_output(step: ModelStep, data: BaseModel, content: str | None) -> BaseModel:
    """Parse and check a model reply to a step (see :func:`parse_reply`).

    Raises:
        StepOutputError: the reply is not usable; the message says why.
    """
    output = parse_reply(step.output(data), content, step.name)
    output.check(data)
    return output


def reply_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a reply is asked to follow: the output model's, minus string lengths.

    Lengths are checked when the reply is validated instead: llama.cpp turns a bounded
    string into a grammar that is several times slower to build and sample from.
    """

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("maxLength", "minLength")}
        if isinstance(node, list):
            return [strip(item) for item in node]
        return node

    return strip(model.model_json_schema())


async def ask_model(
    client: LLMClient,
    model: str,
    messages: list[dict[str, str]],
    name: str,
    output: type[BaseModel],
    parse: Callable[[str | None], BaseModel],
    *,
    on_call: Callable[[ModelResponse, int], None],
    on_error: Callable[[str, str, int, str | None, ModelError | None], None],
) -> BaseModel | None:
    """Ask a model for one JSON object; ask once more, the problem stated, if unusable.

    Args:
        client: The model client (response cache, retries on infrastructure errors).
        model: The model string.
        messages: The chat messages (system, user).
        name: The reply's name in the JSON-schema response format.
        output: The reply's model (its schema is asked for, see :func:`reply_schema`).
        parse: Turns a reply into the output or raises ``StepOutputError`` saying why.
        on_call: Told of every answered call: ``(response, attempt)``.
        on_error: Told of the failure that ends the ask: ``(kind, message, attempt,
            raw reply, model error)``, kind ``model_failure`` (with the
            :class:`~hasbench.llm.ModelError`) or ``invalid_output`` (with None).

    Returns:
        The parsed output, or None after ``on_error`` was told why.
    """
    schema = reply_schema(output)
    response_format = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    for attempt in (1, 2):
        try:
            response = await client.complete(model, messages, response_format=response_format)
        except ModelError as exc:
            on_error("model_failure", str(exc), attempt, None, exc)
            return None
        on_call(response, attempt)
        try:
            return parse(response.content)
        except s.StepOutputError as exc:
            if attempt == 2:
                on_error("invalid_output", str(exc), attempt, response.content, None)
                return None
            messages = [
                *messages,
                {"role": "assistant", "content": response.content or ""},
                {
                    "role": "user",
                    "content": f"That reply cannot be used: {exc}. Reply again with "
                    "one JSON object that fixes this, and nothing else.",
                },
            ]
    return None  # unreachable: the second attempt returns or reports an error


class StepRunner:
    """Runs steps on their role's backend and records model calls and errors.

    Args:
        backends: The backend of each role.
        client: The model client (with its response cache); needed only when a role is
            played by a model.
        record: Appends an event to the session log.
        failed_in_a_row: Lost steps in a row that fail the session.

    Attributes:
        failure: The ``session_failed`` payload once the session failed, else None.
    """

    def __init__(
        self,
        backends: RoleModels,
        client: LLMClient | None,
        record: LogRecorder,
        failed_in_a_row: int = 3,
    ) -> None:
        if backends.uses_models() and client is None:
            raise ValueError("a model backend needs an LLMClient (with a ResponseCache)")
        self.backends = backends
        self.client = client
        self.record = record
        self.failure: dict[str, Any] | None = None
        self._losses = LossCounter(failed_in_a_row)

    async def run(
        self, name: str, data: BaseModel, discussion: str | None = None
    ) -> BaseModel | None:
        """The checked output of step ``name`` for ``data``, or None after a recorded error.

        Once the session failed, a model step is not run and yields None.
        """
        step = STEPS[name]
        model = getattr(self.backends, step.role)
        if model.startswith("scripted:"):
            from hasbench.docuteam.scripted import SCRIPTED_STEPS

            output = SCRIPTED_STEPS[name](data)
            try:
                output.check(data)
            except s.StepOutputError as exc:
                raw = output.model_dump_json()
                self._error(step, model, "invalid_output", str(exc), 1, raw, discussion)
                return None
            return output
        if self.failure is not None:
            return None
        return await ask_model(
            self.client,
            model,
            step.messages(data),
            name,
            step.output(data),
            lambda content: parse_output(step, data, content),
            on_call=lambda response, attempt: self._model_call(
                step, model, response, attempt, discussion
            ),
            on_error=lambda kind, message, attempt, raw, error: self._error(
                step, model, kind, message, attempt, raw, discussion, error
            ),
        )

    def _model_call(
        self,
        step: ModelStep,
        model: str,
        response: ModelResponse,
        attempt: int,
        discussion: str | None,
    ) -> None:
        self._losses.answered()
        payload = {
            "step": step.name,
            "role": step.role,
            "model": model,
            "attempt": attempt,
            "cached": response.cached,
            "cost": response.cost,
        }
        self.record("model_call", payload, discussion=discussion, usage=response.usage)

    def _error(
        self,
        step: ModelStep,
        model: str,
        error_type: str,
        message: str,
        attempt: int,
        raw: str | None,
        discussion: str | None,
        error: ModelError | None = None,
    ) -> None:
        payload = {
            "step": step.name,
            "role": step.role,
            "model": model,
            "error_type": error_type,
            "message": message,
            "attempts": attempt,
            "raw": None if raw is None else raw[:RAW_KEPT],
        }
        if error is not None:
            payload["kind"] = error.kind
        self.record("error", payload, discussion=discussion)
        if error is not None and self._losses.lost(error):
            self.fail(step.role, model, step.name, error, discussion)

    def fail(
        self,
        role: str,
        model: str,
        step: str,
        error: ModelError,
        discussion: str | None = None,
    ) -> None:
        """Mark the session failed (once): a ``session_failed`` event; no model step after it."""
        if self.failure is not None:
            return
        self.failure = failure_payload(role, model, step, error)
        self.record("session_failed", self.failure, discussion=discussion)
