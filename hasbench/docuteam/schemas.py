"""Inputs and outputs of every DocuTeam model step, with the checks an output must pass.

Each step reads one structured input (what a model in that seat is shown) and returns
one JSON object validated by a pydantic model plus a ``check`` against the input (a
speaker who is a participant, ids that exist, two-sentence utterances that do not
repeat the conversation, ...). Scripted stand-ins read the same inputs.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from hasbench.docuteam.agents import AgentProfile, MemoryEntry, MemoryUpdate, NewEntry
from hasbench.docuteam.document import Block, EditView

Mode = Literal["idea", "discussion", "evaluation"]
MODES: tuple[Mode, ...] = ("idea", "discussion", "evaluation")
Act = Literal["ISSUE", "CLAIM", "SUPPORT", "REBUT", "QUESTION"]
ACTS: tuple[Act, ...] = ("ISSUE", "CLAIM", "SUPPORT", "REBUT", "QUESTION")
STAGES: dict[Mode, tuple[str, str, str]] = {
    "idea": ("idea_generation", "idea_reaction", "idea_wrapup"),
    "discussion": ("position_statement", "argument_exchange", "discussion_wrapup"),
    "evaluation": ("evaluation", "improvement_suggestion", "evaluation_wrapup"),
}
"""The staged flow of each mode: open round, reply round, wrap-up."""
MessageKind = Literal["utterance", "question", "answer", "post"]
"""An agent's turn, the moderator's question to the user, the user's answer to it, and a
message the user posted on their own."""
Text = Annotated[str, Field(min_length=1, max_length=400)]
Short = Annotated[str, Field(min_length=1, max_length=160)]

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")


class StepOutputError(ValueError):
    """An output that parsed but breaks a rule of its step; the message says which."""


def sentences(text: str) -> list[str]:
    """Split text into sentences at ``.``, ``!`` or ``?`` followed by a space."""
    text = " ".join(text.split())
    return [part for part in _SENTENCE_END.split(text) if part.strip()] if text else []


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def repeats(text: str, earlier: list[str], threshold: float = 0.85) -> str | None:
    """The earlier text that ``text`` (nearly) repeats word for word, or None.

    Near means a word-level similarity ratio of at least ``threshold``.
    """
    mine = _normal(text).split()
    for other in earlier:
        theirs = _normal(other).split()
        matcher = difflib.SequenceMatcher(a=mine, b=theirs, autojunk=False)
        if mine == theirs or matcher.ratio() >= threshold:
            return other
    return None


class Strict(BaseModel):
    """Base of step models: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- shared views


class PublicProfile(Strict):
    """An agent's profile as the steps show it: to the moderator, the team and itself."""

    id: str
    name: str
    role: str
    stance: str
    expertise: list[str]

    @classmethod
    def of(cls, profile: AgentProfile) -> PublicProfile:
        """The view of a profile."""
        return cls(**profile.model_dump())


class Message(Strict):
    """One message of a discussion."""

    id: str
    author: str
    """An agent id, ``user`` or ``moderator``."""
    author_name: str
    kind: MessageKind
    text: str
    act: Act | None = None
    direction: str | None = None
    """The moderator's direction an agent's turn answered."""


class DialogState(Strict):
    """The moderator's running notes on a discussion."""

    stage: str = ""
    progress_summary: str = Field(default="", max_length=200)
    agents_spoken: list[str] = Field(default_factory=list)
    key_points: list[Short] = Field(default_factory=list, max_length=8)


class ScopeView(Strict):
    """What a discussion is about: the scoped blocks, their section and the blocks nearby.

    ``whole_document`` marks a Baseline discussion grounded in every block.
    """

    section: str
    blocks: list[Block]
    near: list[Block] = Field(default_factory=list)
    whole_document: bool = False


class NearbyDiscussion(Strict):
    """An open discussion close to an edited block."""

    id: str
    mode: Mode
    focus: str
    bubble: str


# --------------------------------------------------------------------------- focus


class FocusInput(Strict):
    """Intent extraction: what the discussion should centre on."""

    task: str
    outline: str
    scope: ScopeView
    mode: Mode
    comment: str
    agents: list[PublicProfile]
    initiator: Literal["user", "agents"]


class FocusOutput(Strict):
    """The focus of a discussion in one or two sentences."""

    focus: Text

    def check(self, data: FocusInput) -> None:
        """At most three sentences."""
        if len(sentences(self.focus)) > 3:
            raise StepOutputError("focus must be one or two short sentences")


# --------------------------------------------------------------------------- moderator


class ModeratorInput(Strict):
    """What the moderator sees before deciding the next step."""

    task: str
    mode: Mode
    scope: ScopeView
    focus: str
    agents: list[PublicProfile]
    agent_turns: int
    """Agent messages in the discussion so far."""
    messages: list[Message]
    dialog_state: DialogState
    asked_user: bool
    """Whether the moderator has already asked the user in this discussion."""


class ModeratorOutput(Strict):
    """The moderator's decision: who speaks with which direction, ask the user, or stop."""

    reasoning: str = Field(max_length=300)
    dialog_state: DialogState
    decision: Literal["speak", "ask_user", "converged"]
    next_speaker_id: str | None = None
    speaking_direction: str | None = Field(default=None, max_length=300)
    question_for_user: str | None = Field(default=None, max_length=200)
    possible_answer_1: str | None = Field(default=None, max_length=80)
    possible_answer_2: str | None = Field(default=None, max_length=80)

    def check(self, data: ModeratorInput) -> None:
        """Speak first; a speaker who takes part and a direction; a question with two options."""
        ids = [agent.id for agent in data.agents]
        if data.agent_turns == 0 and self.decision != "speak":
            raise StepOutputError("no agent has spoken yet: the decision must be speak")
        if self.decision == "speak":
            if self.next_speaker_id not in ids:
                raise StepOutputError(
                    f"next_speaker_id {self.next_speaker_id!r} is not one of {', '.join(ids)}"
                )
            if not (self.speaking_direction or "").strip():
                raise StepOutputError("speak needs a speaking_direction")
        if self.decision == "ask_user":
            options = [
                (self.possible_answer_1 or "").strip(),
                (self.possible_answer_2 or "").strip(),
            ]
            if not (self.question_for_user or "").strip():
                raise StepOutputError("ask_user needs question_for_user")
            if not all(options) or options[0].lower() == options[1].lower():
                raise StepOutputError("ask_user needs two different quick-reply options")


# --------------------------------------------------------------------------- utterance


class UtteranceInput(Strict):
    """What a participant sees when it is its turn."""

    task: str
    mode: Mode
    focus: str
    scope: ScopeView
    agent: PublicProfile
    memory: list[MemoryEntry]
    elsewhere: list[str]
    """The agent's own recent messages in other discussions."""
    direction: str
    messages: list[Message]


class UtteranceOutput(Strict):
    """One turn: a dialogue act and a two-sentence utterance."""

    act: Act
    utterance: Text

    def check(self, data: UtteranceInput) -> None:
        """Exactly two sentences, not repeating the conversation."""
        count = len(sentences(self.utterance))
        if count != 2:
            raise StepOutputError(f"the utterance must be exactly two sentences, not {count}")
        repeated = repeats(self.utterance, [m.text for m in data.messages])
        if repeated is not None:
            raise StepOutputError(f"the utterance repeats an earlier message: {repeated!r}")


# --------------------------------------------------------------------------- memory


class DiscussionMemoryInput(Strict):
    """One agent's memory and a finished discussion."""

    agent: PublicProfile
    mode: Mode
    focus: str
    messages: list[Message]
    entries: list[MemoryEntry]


class DiscussionMemoryOutput(MemoryUpdate):
    """Entries to add, rewrite (by id) and delete (by id)."""

    model_config = ConfigDict(extra="forbid")

    def check(self, data: DiscussionMemoryInput) -> None:
        """Rewrites and deletes name entries that exist."""
        unknown = self.unknown_ids({entry.id for entry in data.entries})
        if unknown:
            raise StepOutputError(f"unknown memory entry id(s): {', '.join(unknown)}")


class UserMemoryInput(Strict):
    """A discussion whose last message is the user's."""

    mode: Mode
    focus: str
    messages: list[Message]


class UserMemoryOutput(Strict):
    """What the user's message tells every participant to remember."""

    add: list[NewEntry] = Field(default_factory=list, max_length=4)

    def check(self, data: UserMemoryInput) -> None:
        """Nothing beyond the schema."""


# --------------------------------------------------------------------------- summaries


class SummaryItem(Strict):
    """A short point linked to the message it comes from."""

    text: Short
    message_id: str


class IdeaCluster(Strict):
    """Ideas grouped under one theme."""

    label: Short
    items: list[SummaryItem] = Field(min_length=1)


class Conflict(Strict):
    """A point of disagreement with its two sides."""

    description: Short
    sides: list[Short] = Field(min_length=2, max_length=2)
    message_id: str


class AgentEvaluation(Strict):
    """One speaker's evaluation and suggestion."""

    agent_id: str
    evaluation: Short
    suggestion: Short
    message_id: str


class SummaryInput(Strict):
    """A discussion to summarise."""

    mode: Mode
    focus: str
    agents: list[PublicProfile]
    speakers: list[str]
    """Ids of the agents who have spoken."""
    messages: list[Message]


def _check_links(message_ids: list[str], data: SummaryInput) -> None:
    known = {m.id for m in data.messages}
    unknown = [i for i in message_ids if i not in known]
    if unknown:
        raise StepOutputError(f"summary links to unknown message id(s): {', '.join(unknown)}")


class IdeaSummary(Strict):
    """Idea mode: clusters of short idea keywords, and an overview."""

    clusters: list[IdeaCluster] = Field(min_length=1)
    overview: Short

    def check(self, data: SummaryInput) -> None:
        """Links point at messages of the discussion."""
        _check_links([i.message_id for c in self.clusters for i in c.items], data)


class DiscussionSummary(Strict):
    """Discussion mode: what the agents agree on and where they conflict."""

    consensus: list[SummaryItem] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)

    def check(self, data: SummaryInput) -> None:
        """Something is summarised; links point at messages of the discussion."""
        if not self.consensus and not self.conflicts:
            raise StepOutputError("a discussion summary needs consensus or conflicts")
        links = [i.message_id for i in self.consensus] + [c.message_id for c in self.conflicts]
        _check_links(links, data)


class EvaluationSummary(Strict):
    """Evaluation mode: one evaluation and one suggestion per agent who spoke."""

    evaluations: list[AgentEvaluation] = Field(min_length=1)

    def check(self, data: SummaryInput) -> None:
        """Exactly the speakers, once each; links point at messages of the discussion."""
        named = [e.agent_id for e in self.evaluations]
        if sorted(named) != sorted(data.speakers):
            raise StepOutputError(
                f"evaluations must cover each speaker once ({', '.join(data.speakers)}), "
                f"got {', '.join(named)}"
            )
        _check_links([e.message_id for e in self.evaluations], data)


SUMMARY_MODELS: dict[Mode, type[Strict]] = {
    "idea": IdeaSummary,
    "discussion": DiscussionSummary,
    "evaluation": EvaluationSummary,
}
Summary = IdeaSummary | DiscussionSummary | EvaluationSummary


class BubbleInput(Strict):
    """A discussion to compress into one line."""

    mode: Mode
    focus: str
    messages: list[Message]


class BubbleOutput(Strict):
    """One sentence that answers the focus."""

    sentence: Annotated[str, Field(min_length=1, max_length=200)]

    def check(self, data: BubbleInput) -> None:
        """Exactly one sentence."""
        if len(sentences(self.sentence)) != 1:
            raise StepOutputError("the bubble summary must be exactly one sentence")


# --------------------------------------------------------------------------- proactive trigger


class ReadEditInput(Strict):
    """A batch of recent edits with their neighbouring blocks."""

    task: str
    outline: str
    edits: list[EditView]


class ReadEditOutput(Strict):
    """Whether the edits are trivial; if not, the user's likely goal and what they did."""

    trivial: bool
    goal: str | None = Field(default=None, max_length=300)
    interpretation: str | None = Field(default=None, max_length=300)

    def check(self, data: ReadEditInput) -> None:
        """A substantive edit states a goal and an interpretation."""
        if not self.trivial and not (
            (self.goal or "").strip() and (self.interpretation or "").strip()
        ):
            raise StepOutputError("a substantive edit needs a goal and an interpretation")


class SelectInput(Strict):
    """The edit as understood, and the agents to choose from."""

    goal: str
    interpretation: str
    agents: list[PublicProfile]


class Selection(Strict):
    """One chosen agent and why."""

    id: str
    reason: Short


class SelectOutput(Strict):
    """Two to four relevant agents, each with a reason."""

    agents: list[Selection]

    def check(self, data: SelectInput) -> None:
        """2-4 distinct agents that exist."""
        ids = [s.id for s in self.agents]
        known = {a.id for a in data.agents}
        most = min(4, len(known))
        if not 2 <= len(ids) <= most:
            raise StepOutputError(f"select between 2 and {most} agents, not {len(ids)}")
        if len(set(ids)) != len(ids):
            raise StepOutputError("an agent is selected twice")
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise StepOutputError(f"unknown agent id(s): {', '.join(unknown)}")


class NeedInput(Strict):
    """One agent judging whether the edit needs a discussion, per mode."""

    task: str
    goal: str
    interpretation: str
    edits: list[EditView]
    agent: PublicProfile
    nearby: list[NearbyDiscussion]


class NeedOutput(Strict):
    """Need for each mode in [0, 1] and a short in-character reaction."""

    idea: float = Field(ge=0.0, le=1.0)
    discussion: float = Field(ge=0.0, le=1.0)
    evaluation: float = Field(ge=0.0, le=1.0)
    reaction: Annotated[str, Field(min_length=1, max_length=40)]

    def check(self, data: NeedInput) -> None:
        """Nothing beyond the schema."""

    def score(self, mode: Mode) -> float:
        """The need score of one mode."""
        return getattr(self, mode)


# --------------------------------------------------------------------------- incorporation


class IncorporateInput(Strict):
    """A discussion snippet to fit into the document at a target block."""

    snippet: str
    author_name: str
    speakers: list[str] = Field(default_factory=list)
    """The names of the agents taking part in the discussion."""
    focus: str
    target: Block
    before: Block | None
    after: Block | None
    placement: Literal["replace", "after"]


class IncorporateOutput(Strict):
    """The block text to write."""

    text: Text

    def check(self, data: IncorporateInput) -> None:
        """One line of text."""
        if "\n" in self.text.strip():
            raise StepOutputError("the rewritten text must be one line (one block)")
