"""The research team's know-how: read the literature, learn the requirements, write, submit.

The problem and the field come from the task text. The stand-in searches the literature
service for the problem, reads the top papers (their methods, datasets and the metrics
their abstracts report) and looks up the field's datasets. What people hold is asked for
when the task says they hold it: the PI's acceptance criteria (a baseline, a dataset, a
resource constraint), the co-authors' requirements, the reviewers' requests (shown a
draft). Without an answer it goes on with what it found: the most cited earlier method on
the problem as the baseline, the first openly licensed dataset of the field. It then
writes the five sections in its own words from what it gathered, cites the related work
and the baseline, chooses the datasets, and submits; its final report restates the
proposal.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from hasbench.participants.standin import Call, Case, Done, Need, NotUnderstood, Review, Step

OPEN_LICENCES = ("CC BY 4.0", "CC BY-SA 4.0", "MIT", "Apache 2.0", "CC0")
"""Licences that allow open use (the policy: respect the datasets' licences)."""
PAPER_ID = re.compile(r"\bP\d{4}\b")
READ_PAPERS = 4
"""How many of the top search hits it reads in full."""
_TASK = re.compile(r"proposal on (.+?) \((.+?)\) for the PI")
_IMPROVES = re.compile(r"improves (.+?) by [\d.]+")
_SENIOR = re.compile(r"(\w+) is the senior author")
# what people require, one sentence at a time (read again before every step)
_MAIN_BASELINE = re.compile(r"([\w-]+) (?:must|should|has to) be (?:the|our) main baseline")
_MUST_DATASET = re.compile(r"results on ([\w-]+) are a must")
_PREFERRED_DATASET = re.compile(r"main results should be on ([\w-]+)")
_OPEN_DATASET = re.compile(r"only openly licensed datasets may be used, for example ([\w-]+)")
_ABLATION = re.compile(r"an ablation (?:of|that removes) the (.+?)(?: must be| is|$|\.)")
_DISCUSSION = re.compile(r"(?:has to discuss|a discussion of) (.+?)\.?$")


class ResearchPlaybook:
    """A five-question research proposal (see the module docstring)."""

    def read(self, case: Case, text: str, source: str) -> None:
        """The problem and field from the task; requirements people state."""
        if source == "task":
            match = _TASK.search(text)
            if match:
                case.learn("problem", match.group(1), "task")
                case.learn("field", match.group(2), "task")
            senior = _SENIOR.search(text)
            via = senior and re.search(rf"{senior.group(1)} \(reached through (\w+)\)", text)
            if via:
                case.learn("senior_via", via.group(1), "task")
            return
        if source.startswith("tool:"):
            _read_output(case)
            return
        if source == "profile":
            return
        if "\nFacts: " in text:
            return  # a teammate's hand-off or report: its facts were taken over as they are
        for sentence in re.split(r"(?<=[.;!?])\s+", text):
            _read_requirement(case, sentence, source)

    def next_step(self, case: Case) -> Step:
        """The next step towards a submitted proposal (see the module docstring)."""
        problem, field = case.facts.get("problem"), case.facts.get("field")
        if not problem or not field:
            return NotUnderstood("I could not tell which problem the proposal is about.")
        for key, value in list(case.facts.items()):
            if isinstance(value, str) and case.origin.get(key) not in ("task", "guess", "tool"):
                _read_requirement(case, value, case.origin.get(key, "person"))
        hits = case.facts.get("hits")
        if hits is None:
            return Call("search_papers", {"query": problem, "max_results": 10})
        for paper_id in hits[:READ_PAPERS]:
            if not case.has(f"paper_{paper_id}"):
                return Call("get_paper", {"paper_id": paper_id})
        if not case.has("open_datasets"):
            return Call("search_datasets", {"query": field})
        wanted = self._requirements(case)
        if wanted is not None:
            return wanted
        baseline = self._baseline(case)
        if isinstance(baseline, Call):
            return baseline
        draft = _compose(case, baseline)
        review = self._review(case, draft)
        if review is not None:
            return review
        return self._write(case, draft)

    # -- what people hold -----------------------------------------------------------------

    def _requirements(self, case: Case) -> Step | None:
        task = case.task.lower()
        if "pi will only accept" in task:
            guess = _likely_baseline(case)
            asks = (
                ("baseline", "Is there a baseline method the proposal must compare against?",
                 (guess,) if guess else ()),
                ("dataset", "Is there a dataset the proposal must report results on?",
                 tuple(case.facts["open_datasets"][:1])),
                ("constraint", "Is there a resource constraint the study must respect?", ()),
            )  # fmt: skip
            for slot, question, candidates in asks:
                if not case.has(slot):
                    return Need(slot, question, candidates, who=("principal", "accept", "pi"))
        if "co-authors" in task and not case.has("coauthor_request"):
            # one question for everything a co-author may require; it stays open until
            # every co-author the team can reach was asked
            return Need(
                "coauthor_request",
                "What do you require of the proposal: the main baseline, the datasets and the "
                "rules for using data, the analyses it must include and what it must discuss?",
                who=("co-author",),
                topics=("baseline", "dataset", "data_policy", "analysis", "discussion"),
            )
        return None

    def _baseline(self, case: Case) -> Call | str | None:
        """The baseline's paper id, a call to find it, or None when there is none."""
        name = case.facts.get("baseline")
        if not name or not isinstance(name, str):
            return None
        for key, value in case.facts.items():
            if key.startswith("paper_") and isinstance(value, list) and value[0] == name:
                return key.removeprefix("paper_")
        found = case.facts.get(f"search_{name}")
        if found is None:
            return Call("search_papers", {"query": name, "max_results": 3})
        for paper_id in found:
            if not case.has(f"paper_{paper_id}"):
                return Call("get_paper", {"paper_id": paper_id})
        return None

    def _review(self, case: Case, draft: dict[str, Any]) -> Step | None:
        """Show the approach to the reviewers when the task asks for review rounds."""
        if "review" not in case.task.lower():
            return None
        text = draft["sections"]["approach"] + " " + draft["sections"]["importance"]
        key = "draft_" + hashlib.sha256(text.encode()).hexdigest()[:12]
        if key in case.reviewed or case.facts.get(f"reviewed_{key}"):
            return None
        cited = ", ".join(draft["cite"])
        return Review(
            key,
            f"Draft proposal. {text} References: {cited}. Please name any requested analysis, "
            "missing reference or requested discussion it still lacks.",
            who=("reviewer",),
        )

    # -- writing ----------------------------------------------------------------------------

    def _write(self, case: Case, draft: dict[str, Any]) -> Step:
        proposal = _proposal(case)
        for section, text in draft["sections"].items():
            if proposal["sections"].get(section) != text:
                return Call("write_section", {"section": section, "text": text})
        cited = {r["paper_id"]: r["role"] for r in proposal["references"]}
        for paper_id, role in draft["cite"].items():
            if cited.get(paper_id) != role:
                return Call("cite_paper", {"paper_id": paper_id, "role": role})
        if draft["datasets"] and proposal["datasets"] != draft["datasets"]:
            return Call("set_datasets", {"names": draft["datasets"]})
        if proposal["status"] != "submitted":
            return Call("submit_proposal", {})
        sections = " ".join(draft["sections"].values())
        return Done(f"Submitted the proposal on {case.facts['problem']}. {sections}")


# -- reading -------------------------------------------------------------------------------


def _read_requirement(case: Case, sentence: str, source: str) -> None:
    """A requirement stated in one sentence of a person (or a peer passing it on)."""
    lower = sentence.lower().strip()
    if not lower:
        return
    match = _MAIN_BASELINE.search(sentence)
    if match:
        if source == case.facts.get("senior_via"):  # the senior co-author decides conflicts
            case.learn("senior_baseline", match.group(1), source)
        baseline = case.facts.get("senior_baseline") or match.group(1)
        case.learn("baseline_method", baseline, source)
        case.learn("baseline", baseline, source)
    match = _MUST_DATASET.search(sentence)
    if match:
        case.learn("required_dataset", match.group(1), source)
        case.learn("dataset", match.group(1), source)
    match = _PREFERRED_DATASET.search(sentence)
    if match:
        case.learn("preferred_dataset", match.group(1), source)
        if not case.has("dataset"):
            case.learn("dataset", match.group(1), source)
    match = _OPEN_DATASET.search(sentence)
    if match:
        case.learn("open_dataset", match.group(1), source)
        case.learn("dataset", match.group(1), source)
    match = _ABLATION.search(lower)
    if match:
        case.learn("ablation", match.group(0).removesuffix(" must be").rstrip(" ."), source)
        case.learn("analysis", match.group(1).strip(), source)
    match = _DISCUSSION.search(lower)
    if match:
        case.learn("risk", match.group(1).strip(), source)
        case.learn("discussion", match.group(1).strip(), source)
    for paper_id in PAPER_ID.findall(sentence):
        case.learn("reference_" + paper_id, paper_id, source)
    if any(w in lower for w in ("gpu", "new data", "months", "released openly", "open source")):
        case.learn("constraint_text", sentence.strip().rstrip("."), source)
        case.learn("constraint", sentence.strip().rstrip("."), source)


def _read_output(case: Case) -> None:
    """Keep what a literature tool showed as facts (peers receive them in hand-offs)."""
    outcome = case.outputs[-1]
    shown = outcome.output
    if outcome.name == "search_papers" and isinstance(shown, list):
        query = outcome.arguments.get("query", "")
        if query == case.facts.get("problem"):
            case.learn("hits", [p["paper_id"] for p in shown], "tool")
        else:
            case.learn(f"search_{query}", [p["paper_id"] for p in shown], "tool")
    elif outcome.name == "get_paper" and isinstance(shown, dict):
        on_problem = (
            str(case.facts.get("problem", "")).lower()
            in (shown["title"] + " " + shown["abstract"]).lower()
        )
        case.learn(
            f"paper_{shown['paper_id']}",
            [shown["method"], shown["citation_count"], int(on_problem)],
            "tool",
        )
        metrics = list(case.facts.get("metrics") or [])
        for metric in _IMPROVES.findall(shown["abstract"]):
            if metric not in metrics:
                metrics.append(metric)
        case.learn("metrics", metrics, "tool")
    elif outcome.name == "search_datasets" and isinstance(shown, list):
        names = [d["name"] for d in shown if d["license"] in OPEN_LICENCES]
        case.learn("open_datasets", names, "tool")
        closed = [d["name"] for d in shown if d["license"] not in OPEN_LICENCES]
        case.learn("closed_datasets", closed, "tool")


def _proposal(case: Case) -> dict[str, Any]:
    """The proposal as the team's writes so far made it (peers pass on their writes)."""
    proposal: dict[str, Any] = {"sections": {}, "references": [], "datasets": [],
                                "status": "draft"}  # fmt: skip
    for name, args in case.done:
        if name == "write_section":
            proposal["sections"][args["section"]] = args["text"]
        elif name == "cite_paper":
            refs = [r for r in proposal["references"] if r["paper_id"] != args["paper_id"]]
            proposal["references"] = [*refs, {"paper_id": args["paper_id"], "role": args["role"]}]
        elif name == "set_datasets":
            proposal["datasets"] = list(args["names"])
        if name in ("write_section", "cite_paper", "set_datasets"):
            proposal["status"] = "draft"
        elif name == "submit_proposal":
            proposal["status"] = "submitted"
    return proposal


# -- deciding -------------------------------------------------------------------------------


def _likely_baseline(case: Case) -> str | None:
    """The method of the most cited paper read on the problem, after the closest one."""
    hits = case.facts.get("hits") or []
    papers = {k.removeprefix("paper_"): v for k, v in case.facts.items()
              if k.startswith("paper_") and isinstance(v, list)}  # fmt: skip
    on_problem = [(pid, v) for pid, v in papers.items() if v[2] and hits and pid != hits[0]]
    if not on_problem:
        return None
    return min(on_problem, key=lambda item: (-item[1][1], item[0]))[1][0]


def _compose(case: Case, baseline: str | None) -> dict[str, Any]:
    """The proposal in the stand-in's own words from what it gathered and was told."""
    facts = case.facts
    problem, field = facts["problem"], facts["field"]
    hits = facts.get("hits") or []
    related = hits[0] if hits else None
    related_method = (facts.get(f"paper_{related}") or [None])[0] if related else None
    metrics = list(facts.get("metrics") or [])
    sets = _datasets(case)
    sections = {
        "problem": (
            f"We study {problem} in {field}. Existing methods for {problem} leave a clear gap "
            "on the standard benchmarks, and this proposal asks how to close it."
        ),
        "importance": (
            f"Better methods for {problem} would make many systems in {field} more reliable "
            "and cheaper to run, so progress here has broad practical value."
        ),
        "difficulty": (
            f"{problem[0].upper()}{problem[1:]} is hard: the published methods trade accuracy "
            "against cost, and common evaluations hide the failure cases that matter."
        ),
        "unsolved": (
            "Prior work"
            + (f" such as {related_method} ({related})" if related_method else "")
            + " improved parts of the pipeline but left the core obstacle in place, and no "
            "study has evaluated a remedy carefully."
        ),
    }
    if facts.get("risk"):
        sections["importance"] += f" The proposal also discusses {facts['risk']}."
    approach = [f"We propose a method for {problem} that builds on the strongest prior work."]
    if baseline is not None:
        approach.append(
            f"We compare against {facts['baseline']} ({baseline}) as the main baseline."
        )
    if sets:
        approach.append(f"We evaluate on {', '.join(sets)}.")
        if facts.get("preferred_dataset") and facts["preferred_dataset"] not in sets:
            approach.append(
                f"{facts['preferred_dataset']} is not used because its licence does not allow "
                "open use."
            )
    if facts.get("constraint_text"):
        approach.append(f"We respect the constraint that {facts['constraint_text']}.")
    if facts.get("ablation"):
        approach.append(f"We add {facts['ablation']}.")
    references = sorted(v for k, v in facts.items() if k.startswith("reference_"))
    for paper_id in references:
        approach.append(f"We relate our method to the work in {paper_id}.")
    approach.append(
        "We expect a clear improvement in "
        + (", ".join(metrics) if metrics else "the standard metrics")
        + " over the strongest baseline."
    )
    sections["approach"] = " ".join(approach)
    cite: dict[str, str] = {}
    if related is not None:
        cite[related] = "related"
    if baseline is not None:
        cite[baseline] = "baseline"
    for paper_id in references:
        cite.setdefault(paper_id, "related")
    return {"sections": sections, "cite": cite, "datasets": sets}


def _datasets(case: Case) -> list[str]:
    """The datasets to evaluate on: what people require, within the licence rules."""
    facts = case.facts
    chosen = facts.get("open_dataset") or facts.get("required_dataset")
    if chosen is None and case.origin.get("dataset") == "guess":
        chosen = facts.get("dataset")
    if chosen is None:
        chosen = facts.get("preferred_dataset")
    return [chosen] if chosen else []
