"""Step 2 of the construction pipeline: which problem patterns a base task supports (App. B.3.1).

A panel of independent judges rates every base task against the six patterns A-F. For each
pattern a judge gives an adaptation fit (0-5), an evaluator feasibility (0-5), an
injection risk (low / medium / high), the source evidence, the modifications needed and a
build recommendation; its primary pattern follows the paper's selection rule
(:func:`select_primary`). A judge is either a model (any model string, through
:class:`hasbench.llm.LLMClient`, prompt ``prompts/build/pattern_panel.txt``) or one of four
deterministic rule judges, each reading the base task's view through a different lens:

- ``rule:holder`` (who holds what): A grows with the facts only the human holds and the
  things they do not know; B with preference and condition phrases in the human's
  criterion sentences (:func:`criterion_sentences`); C with the risk of the writes the
  human owns; D with other people and distinct roles; E with checks the human runs; F
  with phrases of changing plans.
- ``rule:path`` (the gold path's shape): A counts steps keyed by identifiers a person
  gives; B counts writes whose arguments are a choice (item, cabin, payment, plan); C
  takes the riskiest write; D the number of distinct write kinds or team roles; E the
  steps the human performs; F how many separable writes a later request could add.
- ``rule:criteria`` (what the evaluation can verify): feasibility per pattern from the
  existing criteria (state checks see arguments and choices; several writes let a revised
  goal be checked; user-side assertions check a verified result), fit from whether the
  source has the material the pattern needs at all.
- ``rule:cues`` (the source's words): fit from how many of the pattern's cue words the
  task's text uses; risk from how much would have to be invented without them.

:func:`aggregate` applies a conservative agreement rule: a pattern is supported only when
at least ``min_agree`` judges (3 of 4 by default) find it viable, and a task with a failed
judge is not decided. The primary pattern is the supported one most judges chose as their
primary (ties by median fit, median feasibility, lower worst risk, letter); the other
supported patterns are secondary. :func:`panel_agreement` gives Fleiss' kappa across the
judges on the primary label and on each pattern's viability.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from hasbench.build.panel_model import PanelModel, json_answer
from hasbench.build.tau2_import import PERSONA_HEADING
from hasbench.prompts import render
from hasbench.stats import category_counts, fleiss_kappa

if TYPE_CHECKING:
    from hasbench.build.base_tasks import BaseTask
    from hasbench.llm import LLMClient

PATTERNS = ("A", "B", "C", "D", "E", "F")
RISKS = ("low", "medium", "high")
Recommendation = Literal["build_core_candidate", "build_full_candidate", "no_build"]
RULE_JUDGES = ("rule:holder", "rule:path", "rule:criteria", "rule:cues")
"""The offline panel."""
PROMPT = "build/pattern_panel"
CUES = {
    "A": r"\byou (?:are|know|have|remember)\b|\byour (?:email|zip|name|user id|order|phone"
    r"|reservation|account|number|budget)|\bprivate\b|\bsecret\b",
    "B": r"\bprefer|\bonly (?:if|when|want|accept)|\bunless\b|\bmust\b|\bnot willing\b"
    r"|\bdon'?t want\b|\bdo not want\b|\bmake sure\b|\bas long as\b|\bat most\b|\bat least\b"
    r"|\bcheapest\b|\bmost expensive\b|\bup to \$|\bwilling to pay\b|\bbudget\b"
    r"|\brequirement|\bconstraint|\bconsider (?:the issue |it )?resolved\b|\bnothing else\b",
    "C": r"\bconfirm(?!ation (?:number|code)\b)|\bapprov|\bauthori[sz]|\bconsent\b"
    r"|\bpermission\b|\byou accept\b|\bagree to\b|\bif (?:the agent|they) asks? (?:you )?to pay\b"
    r"|\bsign[- ]off\b|\b(?:are|is) (?:ok|okay|fine|happy|willing) "
    r"(?:to\b(?! (?:accept|admit|cooperate|comply)\b)|with(?= \w+ing\b)(?! refunding\b))",
    "D": r"\bwife\b|\bhusband\b|\bpartner\b|\bson\b|\bdaughter\b|\bmother\b|\bfather\b"
    r"|\bfamily\b|\bfriend|\bcolleague|\bmanager\b|\bboss\b|\bstakeholder|\bclient"
    r"|\bco-?author|\bbuyer|\bseller",
    "E": r"\bcheck|\bverif|\btest|\breview|\bfeedback\b|\bvalidat|\brevise|\biterat"
    r"|\bdebug|\bworks\b",
    "F": r"\bchange (?:your|their|his|her) mind\b|\bsuddenly\b|\byou now want\b|\binstead\b"
    r"|\bactually\b|\blater\b|\bafter (?:that|this|you have)\b|\balso want|\bswitch"
    r"|\breconsider|\bthen (?:you )?(?:also )?(?:ask|decide|change|want)\b|\bdecide to\b",
}
"""Cue phrases per pattern, searched case-insensitively: B's in what only the human side
holds (τ²'s behaviour instructions, never the opening request: the panel's field-visibility
rule makes that public task setup; only in :func:`criterion_sentences`), C's are of a
person's authority over an action (an approval, or consent to an action such as "you are
willing to refuel 2 GB" or "you are willing to upgrade", the pattern's explicit
authorization of a costly action). Not C's: "you are ok with economy" or "you are happy
with original payment for refund" name a preferred value, and "you are willing to accept a
voucher" or "you are fine with refunding to original payment" what the person accepts to
receive (B's acceptance criteria); "you are willing to cooperate" (or admit, comply) is
conduct in the conversation; a "confirmation number" is a record's identifier. The other
patterns' cues are searched in all the text."""
HIDDEN_CUES = ("B",)
DISCLOSURE = re.compile(
    r"\b(?:prefer not|do not prefer|don'?t prefer|rather not) to (?:provide|give|share|tell"
    r"|disclose|say)\b",
    re.IGNORECASE,
)
"""A person's preference about what they tell the agent ("you prefer not to provide your
birthday"): how they behave in the conversation, not a requirement on the result, so not
pattern B's (App. B.3.1: a requirement, preference or acceptance criterion of the task)."""
REFUSAL = re.compile(
    r"\brefus|\bshould not\b|\bmust not\b|\bnot allow|\bdoesn'?t allow|\bdeclin"
    r"|\bdo(?:es)? not (?:\w+ )?(?:allow|offer|make|cancel|book|change|modify|refund|give)\b"
    r"|\binsist|\bpersist|\bpressur|\bcannot be\b|\bcan'?t be\b|\bnot possible\b"
    r"|\bwaived?\b",
    re.IGNORECASE,
)
"""The source expects the agent to refuse part of what the human demands (τ²'s policy tasks,
including behaviour that anticipates it: "if the agent says it cannot be changed ...", and a
charge the human wants waived, an exception no τ² policy grants: "since you took insurance,
you want change fees waived", where the gold path still charges the card)."""
IDENTIFIER_KEYS = re.compile(r"(^|_)(id|ids|email|zip|name|phone|number)$")
CHOICE_KEYS = {
    "new_item_ids", "item_ids", "payment_method_id", "payment_id", "cabin", "flights",
    "passengers", "total_baggages", "nonfree_baggages", "plan_id", "gb_amount", "amount",
    "mode", "insurance",
}  # fmt: skip


class PatternScore(BaseModel):
    """One judge's rating of one pattern for one task."""

    adaptation_fit_score: int = Field(ge=0, le=5)
    evaluator_feasibility: int = Field(ge=0, le=5)
    injection_risk: Literal["low", "medium", "high"]
    source_evidence: str = ""
    required_modifications: str = ""
    construction_recommendation: Recommendation

    @property
    def viable(self) -> bool:
        """Fit of at least 3, risk not high, something to build."""
        return (
            self.adaptation_fit_score >= 3
            and self.injection_risk != "high"
            and self.construction_recommendation != "no_build"
        )


class JudgeVerdict(BaseModel):
    """One judge's record for one task: the six ratings, or the failure that stopped it."""

    judge: str
    source_id: str
    patterns: dict[str, PatternScore] = Field(default_factory=dict)
    primary_pattern: str = "none"
    primary_reviewer_notes: str = ""
    error: str | None = None
    raw_output: str | None = None


class Assignment(BaseModel):
    """The panel's decision for one base task."""

    domain: str
    source_id: str
    status: Literal["assigned", "none", "error"]
    primary: str = "none"
    secondary: list[str] = Field(default_factory=list)
    support: dict[str, int] = Field(default_factory=dict)
    """Pattern -> how many judges found it viable."""
    primary_votes: dict[str, int] = Field(default_factory=dict)
    verdicts: list[JudgeVerdict] = Field(default_factory=list)


def select_primary(patterns: dict[str, PatternScore]) -> str:
    """The paper's rule: the best viable pattern, or ``"none"``."""
    viable = [p for p in PATTERNS if p in patterns and patterns[p].viable]
    if not viable:
        return "none"

    def rank(p: str) -> tuple:
        s = patterns[p]
        return (
            -s.adaptation_fit_score,
            -s.evaluator_feasibility,
            RISKS.index(s.injection_risk),
            s.construction_recommendation != "build_core_candidate",
            p,
        )

    return min(viable, key=rank)


# -- what rule judges read ------------------------------------------------------------------


@dataclass(frozen=True)
class Features:
    """Counts the rule judges derive from a base task's view (documented in the fields)."""

    text: str
    """The source's own text: the request and behaviour (τ²), the task (MultiAgentBench)."""
    hidden: str
    """What only one side holds: τ²'s behaviour instructions (not the opening request);
    MultiAgentBench's task with the agents' private profiles."""
    refusal: bool
    """The source's criteria or behaviour expect the agent to refuse part of the demand."""
    facts: int
    """Facts only the human holds (τ² known_info; MARBLE profile figures such as prices)."""
    unknown: int
    writes: int
    risk: int
    """The riskiest write: 0 none, 1 low, 2 medium, 3 high."""
    write_kinds: int
    choice_writes: int
    """Writes with an argument that is a choice (items, cabin, payment, plan, amount)."""
    identified_steps: int
    """Gold steps keyed by identifiers a person gives (ids, e-mail, zip, name, phone)."""
    human_steps: int
    """Gold steps the human side performs."""
    roles: int
    deterministic: bool
    """Whether the evaluation checks state or actions."""
    judged: bool
    """Whether the evaluation relies on a judge (natural-language assertions, LLM scores)."""
    user_assertions: bool
    communicate: bool
    judged_dimensions: int = 0
    """How many dimensions the source's judges score (MultiAgentBench's metrics)."""
    hidden_criteria: int = 0
    """Judged dimensions the evaluation scores that the task text never names (the
    MultiAgentBench judges' innovation, feasibility, ...): acceptance criteria nobody
    states."""

    def cues(self, pattern: str) -> list[str]:
        """The pattern's cue phrases found in the text (B: in its criterion sentences)."""
        if pattern in HIDDEN_CUES:
            text = "\n".join(criterion_sentences(self.hidden))
        else:
            text = self.text
        return [m.group(0) for m in re.finditer(CUES[pattern], text, re.IGNORECASE)]


def criterion_sentences(behaviour: str) -> list[str]:
    """The sentences of what only the human holds that state a condition or preference.

    These carry pattern B's cue phrases (:data:`CUES`); the persona paragraph and a
    preference about what the human tells the agent (:data:`DISCLOSURE`) are how they come
    across in the conversation, not a criterion a result could meet. The judges count B's
    cues here and the B template withholds these sentences, so both read the same ones.
    """
    own = behaviour.split(f"\n\n{PERSONA_HEADING}")[0]
    sentences = re.split(r"(?<=[.!?])\s+|\n+", own.strip())
    return [
        s.strip()
        for s in sentences
        if re.search(CUES["B"], s, re.IGNORECASE) and not DISCLOSURE.search(s)
    ]


JUDGED_DIMENSIONS = {
    "coding": ("instruction", "executab", "consisten", "quality"),
    "research": ("innovat", "safe", "feasib"),
    "bargaining": ("strateg", "progress", "outcome", "interact"),
}
"""Word stems of the dimensions MultiAgentBench's judges score per scenario (its metrics)."""
RISK_LEVEL = {"none": 0, "low": 1, "medium": 2, "high": 3, "?": 0}


def features(view: dict[str, Any]) -> Features:
    """The counts of :class:`Features` for a τ² or MultiAgentBench view."""
    if view["source"] == "tau2-bench":
        path = view["gold_path"]
        writes = [s for s in path if s["kind"] == "write"]
        evaluation = view["evaluation"]
        basis = set(evaluation["reward_basis"])
        said = [*evaluation["nl_assertions"], view["customer_behaviour"]]
        return Features(
            text=f"{view['customer_request']}\n{view['customer_behaviour']}",
            hidden=view["customer_behaviour"],
            refusal=any(REFUSAL.search(text) for text in said),
            facts=len(view["known_info"]),
            unknown=len(view["unknown_info"]),
            writes=len(writes),
            risk=max((RISK_LEVEL[s["risk"]] for s in writes), default=0),
            write_kinds=len({s["name"] for s in writes}),
            choice_writes=sum(bool(CHOICE_KEYS & set(s["argument_keys"])) for s in writes),
            identified_steps=sum(
                any(IDENTIFIER_KEYS.search(k) for k in s["argument_keys"]) for s in path
            ),
            human_steps=sum(s["by"] == "customer" for s in path),
            roles=len(view["participants"]["humans"]) + len(view["participants"]["agents"]),
            deterministic=bool(basis & {"ENV", "ENV_ASSERTION", "ACTION"}),
            judged=bool(evaluation["nl_assertions"]),
            user_assertions=bool(evaluation["state_assertions"]),
            communicate=evaluation["information_to_communicate"] > 0,
        )
    profiles = " ".join(str(a.get("profile", "")) for a in view["agents"])
    figures = re.findall(r"(?:price|budget|\$)\D{0,20}\d+", profiles, re.IGNORECASE)
    roles = {str(a.get("role") or a.get("agent_id")) for a in view["agents"]}
    return Features(
        text=view["task_content"],  # the record's own words (coding profiles are boilerplate)
        hidden=f"{view['task_content']}\n{profiles}",
        refusal=False,
        facts=len(figures),
        unknown=0,
        writes=0,
        risk=0,
        write_kinds=0,
        choice_writes=0,
        identified_steps=0,
        human_steps=0,
        roles=len(roles),
        deterministic=view["domain"] == "coding",
        judged=True,
        user_assertions=False,
        communicate=False,
        judged_dimensions=len(JUDGED_DIMENSIONS.get(view["domain"], ())),
        hidden_criteria=sum(
            word not in view["task_content"].lower()
            for word in JUDGED_DIMENSIONS.get(view["domain"], ())
        ),
    )


# -- the rule judges --------------------------------------------------------------------------


def _score(
    fit: int, feasibility: int, evidence: str, missing: str, change: str, risk: str | None = None
) -> PatternScore:
    """A rating with the risk and recommendation that follow from fit and feasibility."""
    fit, feasibility = max(0, min(5, fit)), max(0, min(5, feasibility))
    if risk is None:
        risk = "low" if fit >= 4 else "medium" if fit >= 2 else "high"
    if risk == "high" or fit < 3:
        recommendation = "no_build"
    elif fit >= 4 and feasibility >= 4:
        recommendation = "build_core_candidate"
    else:
        recommendation = "build_full_candidate"
    return PatternScore(
        adaptation_fit_score=fit,
        evaluator_feasibility=feasibility,
        injection_risk=risk,
        source_evidence=evidence if risk != "high" else f"MISSING: {missing}",
        required_modifications="" if recommendation == "no_build" else change,
        construction_recommendation=recommendation,
    )


def _feasibility(f: Features) -> int:
    return 5 if f.deterministic else 4 if f.judged and f.communicate else 3 if f.judged else 1


CHANGES = {
    "A": "Move the identifying facts into the human's private knowledge; the agent asks.",
    "B": "Hold back the human's acceptance criterion; it decides the checked write.",
    "C": "Mark the riskiest write protected; the human approves or denies it.",
    "D": "Split what the human knows and decides over two people with distinct roles.",
    "E": "Let the human review the planned change or verify the result before it counts.",
    "F": "Start with part of the request; the rest arrives as a goal revision mid-episode.",
}
MISSING = {
    "A": "facts only a person holds; the source only has public setup",
    "B": "an unstated preference or criterion; the source states everything it needs",
    "C": "a consequential write; the source only reads",
    "D": "a second person with their own stake; the source has one requester",
    "E": "a result a person can check; the source has no verifiable intermediate output",
    "F": "a part of the request that could arrive later; the source has one step",
}


def _quote(cues: list[str]) -> str:
    return ", ".join(f"'{c}'" for c in dict.fromkeys(c.lower() for c in cues[:4]))


def holder_rule(f: Features) -> dict[str, PatternScore]:
    """Who holds what (see the module docstring)."""
    feas = _feasibility(f)
    fits = {
        "A": 1 + f.facts + (1 if f.unknown else 0) if f.facts else 1,
        "B": 1 + min(3, len(f.cues("B")) + f.hidden_criteria),
        "C": (4 if f.risk == 3 else 3 if f.risk == 2 else 1) if f.cues("C") else 1 + (f.risk == 3),
        "D": 1 + len(f.cues("D")) + max(0, f.roles - 2),
        "E": 1 + min(3, f.human_steps + len(f.cues("E"))),
        "F": {0: 1, 1: 3}.get(len(f.cues("F")), 4),
    }
    evidence = {
        "A": f"known_info: {f.facts} facts only the human holds",
        "B": f"behaviour: {_quote(f.cues('B'))}",
        "C": f"gold path: writes up to risk level {f.risk}; authority: {_quote(f.cues('C'))}",
        "D": f"text: {_quote(f.cues('D'))}; {f.roles} roles",
        "E": f"gold path: {f.human_steps} human steps; text: {_quote(f.cues('E'))}",
        "F": f"text: {_quote(f.cues('F'))}",
    }
    return _subversion(
        f, {p: _score(fits[p], feas - (p in "DF"), evidence[p], MISSING[p], CHANGES[p])
            for p in PATTERNS}
    )  # fmt: skip


def path_rule(f: Features) -> dict[str, PatternScore]:
    """The gold path's shape (see the module docstring)."""
    feas = 5 if f.deterministic else 3
    if f.writes == 0 and f.roles > 2:  # a multi-agent source without a gold path
        fits = {"A": 2 + (f.facts > 0), "B": 3, "C": 2, "D": min(5, f.roles), "E": 4, "F": 2}
    else:
        fits = {
            "A": 1 + min(4, f.identified_steps),
            "B": 1 + min(4, f.choice_writes) if f.writes else 1,
            "C": {3: 4, 2: 3}.get(f.risk, 1),
            "D": 3 if f.write_kinds >= 2 else 2,
            "E": 4 if f.human_steps >= 2 else 3 if f.human_steps else 2 if f.writes >= 2 else 1,
            "F": 4 if f.write_kinds >= 2 else 3 if f.writes >= 2 else 1,
        }
    evidence = {
        "A": f"gold path: {f.identified_steps} steps keyed by identifiers",
        "B": f"gold path: {f.choice_writes} writes with a chosen argument",
        "C": f"gold path: riskiest write at level {f.risk}",
        "D": f"gold path: {f.write_kinds} kinds of write; {f.roles} roles",
        "E": f"gold path: {f.human_steps} steps by the human",
        "F": f"gold path: {f.writes} writes of {f.write_kinds} kinds",
    }
    return _subversion(
        f, {p: _score(fits[p], feas, evidence[p], MISSING[p], CHANGES[p]) for p in PATTERNS}
    )


def criteria_rule(f: Features) -> dict[str, PatternScore]:
    """What the evaluation can verify (see the module docstring)."""
    state = f.deterministic
    feas = {
        "A": 5 if state else 3,
        "B": 5 if state and f.writes else 4 if f.judged else 2,
        "C": 5 if state and f.writes else 2,
        "D": 3 if state else 2,
        "E": 4 if f.user_assertions or f.communicate or f.judged else 3,
        "F": 4 if state and f.writes >= 2 else 2,
    }
    fits = {
        "A": 4 if f.facts else 2,
        "B": 4
        if f.judged_dimensions and f.hidden_criteria == f.judged_dimensions
        else 3
        if f.cues("B") or f.choice_writes
        else 2,
        "C": 4 if f.risk >= 2 else 1,
        "D": 3 if f.cues("D") or f.roles > 2 else 2,
        "E": 3 if f.human_steps or f.user_assertions or not f.writes else 2,
        "F": 3 if f.writes >= 2 else 1,
    }
    evidence = {
        "A": "evaluation: state/action checks cover the arguments the human supplies",
        "B": "evaluation: the chosen arguments end up in the checked state",
        "C": "evaluation: the protected write's effect is in the checked state",
        "D": "evaluation: the reconciled request is what the state check sees",
        "E": "evaluation: assertions on the result the human verifies",
        "F": "evaluation: each of several writes is checked separately",
    }
    return _subversion(
        f, {p: _score(fits[p], feas[p], evidence[p], MISSING[p], CHANGES[p]) for p in PATTERNS}
    )


def cue_rule(f: Features) -> dict[str, PatternScore]:
    """The source's words (see the module docstring)."""
    feas = 4 if f.deterministic else 3
    scores = {}
    for p in PATTERNS:
        cues = f.cues(p)
        risk = "low" if len(cues) >= 3 else "medium" if cues else "high"
        scores[p] = _score(
            1 + min(4, len(cues)), feas, f"text: {_quote(cues)}", MISSING[p], CHANGES[p], risk
        )
    return _subversion(f, scores)


def _subversion(f: Features, scores: dict[str, PatternScore]) -> dict[str, PatternScore]:
    """Guardrail G3 (no goal subversion) on a judge's ratings.

    Where the source expects the agent to refuse part of what the human demands, a human
    whose criteria, approval or new goal the agent must follow (B, C, F) would turn the task
    around; those patterns get high injection risk.
    """
    if not f.refusal:
        return scores
    for p in ("B", "C", "F"):
        scores[p] = _score(
            scores[p].adaptation_fit_score, scores[p].evaluator_feasibility, "",
            "a human whose word decides; the source expects the agent to refuse the demand",
            CHANGES[p], "high",
        )  # fmt: skip
    return scores


RULES: dict[str, Callable[[Features], dict[str, PatternScore]]] = {
    "rule:holder": holder_rule,
    "rule:path": path_rule,
    "rule:criteria": criteria_rule,
    "rule:cues": cue_rule,
}


class RulePatternJudge:
    """A deterministic pattern judge (one of :data:`RULES`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rule = RULES[name]

    async def judge(self, view: dict[str, Any]) -> JudgeVerdict:
        """Rate the six patterns by the rule."""
        patterns = self.rule(features(view))
        primary = select_primary(patterns)
        notes = f"{self.name}: {primary} " + (
            f"({patterns[primary].source_evidence})" if primary != "none" else "(none viable)"
        )
        return JudgeVerdict(
            judge=self.name,
            source_id=view["source_id"],
            patterns=patterns,
            primary_pattern=primary,
            primary_reviewer_notes=notes,
        )


class LLMPatternJudge(PanelModel):
    """A pattern judge on a language model (temperature 0, cached responses)."""

    async def judge(self, view: dict[str, Any]) -> JudgeVerdict:
        """Ask the model; a failed call or an off-format answer is recorded as the error."""
        source_id = view["source_id"]
        prompt = render(PROMPT, view=json.dumps(view, indent=1, ensure_ascii=False))
        answer = await self.ask(prompt, parse_verdict)
        if answer.parsed is None:
            return JudgeVerdict(
                judge=self.name, source_id=source_id, error=answer.error, raw_output=answer.raw
            )
        return JudgeVerdict(
            judge=self.name,
            source_id=source_id,
            patterns=answer.parsed["patterns"],
            primary_pattern=select_primary(answer.parsed["patterns"]),
            primary_reviewer_notes=str(answer.parsed.get("primary_reviewer_notes", ""))[:600],
            raw_output=answer.raw,
        )


def parse_verdict(text: str) -> dict[str, Any]:
    """The judge's JSON answer with six validated pattern ratings.

    Raises:
        ValueError: not one JSON object, a pattern missing, or a field out of range.
    """
    data = json_answer(text)
    if not isinstance(data, dict) or not isinstance(data.get("patterns"), dict):
        raise ValueError("no 'patterns' object")
    missing = [p for p in PATTERNS if p not in data["patterns"]]
    if missing:
        raise ValueError(f"patterns missing: {', '.join(missing)}")
    patterns = {}
    for p in PATTERNS:
        try:
            patterns[p] = PatternScore.model_validate(data["patterns"][p])
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            raise ValueError(f"pattern {p}: {where}: {err['msg']}") from None
    return {**data, "patterns": patterns}


def make_pattern_judge(spec: str, client: LLMClient | None = None):
    """A pattern judge: a rule judge by its name, else a model judge on the model string."""
    if spec in RULES:
        return RulePatternJudge(spec)
    if spec.startswith("rule:"):
        raise ValueError(f"unknown rule judge {spec!r}; known: {', '.join(RULES)}")
    return LLMPatternJudge(spec, client)


# -- the panel --------------------------------------------------------------------------------


def aggregate(
    domain: str, source_id: str, verdicts: Sequence[JudgeVerdict], min_agree: int = 3
) -> Assignment:
    """The panel's decision (conservative agreement; see the module docstring)."""
    base = {"domain": domain, "source_id": source_id, "verdicts": list(verdicts)}
    if any(v.error for v in verdicts):
        return Assignment(status="error", **base)
    support = {p: sum(v.patterns[p].viable for v in verdicts) for p in PATTERNS}
    votes = {p: sum(v.primary_pattern == p for v in verdicts) for p in PATTERNS}
    supported = [p for p in PATTERNS if support[p] >= min_agree]
    if not supported:
        return Assignment(status="none", support=support, primary_votes=votes, **base)

    def rank(p: str) -> tuple:
        scores = [v.patterns[p] for v in verdicts]
        return (
            -votes[p],
            -statistics.median(s.adaptation_fit_score for s in scores),
            -statistics.median(s.evaluator_feasibility for s in scores),
            max(RISKS.index(s.injection_risk) for s in scores),
            p,
        )

    ordered = sorted(supported, key=rank)
    return Assignment(
        status="assigned",
        primary=ordered[0],
        secondary=ordered[1:],
        support=support,
        primary_votes=votes,
        **base,
    )


async def assign_patterns(
    bases: Sequence[BaseTask],
    judges: Sequence[str],
    *,
    min_agree: int = 3,
    client: LLMClient | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Assignment]:
    """Run the panel on every base task (judges and tasks concurrently); file order."""
    panel = [make_pattern_judge(spec, client) for spec in judges]
    done = 0

    async def one(base: BaseTask) -> Assignment:
        nonlocal done
        verdicts = await asyncio.gather(*(judge.judge(base.view) for judge in panel))
        done += 1
        if progress:
            progress(done, len(bases))
        return aggregate(base.domain, base.source_id, verdicts, min_agree)

    return list(await asyncio.gather(*(one(b) for b in bases)))


def panel_agreement(assignments: Sequence[Assignment]) -> dict[str, Any]:
    """Fleiss' kappa across judges: on the primary label and on each pattern's viability.

    Only tasks every judge rated take part. Values are NaN where every rating is the same.
    """
    rated = [a for a in assignments if a.status != "error" and a.verdicts]
    if not rated or len(rated[0].verdicts) < 2:
        return {"tasks": len(rated), "primary": None, "viability": {}}
    labels = [[v.primary_pattern for v in a.verdicts] for a in rated]
    primary = fleiss_kappa(category_counts(labels, [*PATTERNS, "none"]))
    viability = {}
    for p in PATTERNS:
        rows = [[v.patterns[p].viable for v in a.verdicts] for a in rated]
        viability[p] = fleiss_kappa(category_counts(rows, [True, False])).kappa
    return {
        "tasks": len(rated),
        "judges": len(rated[0].verdicts),
        "primary": primary.kappa,
        "primary_observed": primary.observed,
        "viability": viability,
    }
