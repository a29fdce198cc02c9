"""The Research task set: 30 tasks (B 8, D 10, E 12) from a seeded generator.

Every task asks a research team of 2-6 agents (graph mode: they collaborate freely) to
write and submit a five-question research proposal on one problem of one corpus topic
for a principal investigator (PI). The gold path searches the literature service, reads
and cites the key prior work, writes the five sections, and submits; what the humans
hold decides the rest:

- B (latent constraint): the PI's acceptance criteria — a required baseline method, a
  required dataset, a resource constraint — are revealed only when asked. The proposal
  must compare against that baseline (found by searching for it), evaluate on that
  dataset and state the constraint in its approach.
- D (multi-stakeholder): two co-authors, each reached through a different agent, hold
  conflicting requirements (a preferred dataset with a restrictive licence vs. an
  open-data rule; or two different main baselines) plus one requirement each that does
  not conflict. The task states how conflicts are resolved (a licence rule overrides a
  preference; the senior co-author decides); the forbidden choice must not be made.
- E (iterative verification): one or two reviewers (review rounds) see the team's drafts
  and request changes — an analysis the approach must add with a paper it must cite, and
  in a second round a risk the proposal must discuss. Their requests are only known by
  showing them drafts.

Evaluation: hidden assertions (the proposal is submitted with five answering sections;
required elements of sections; cited baselines and papers; required and forbidden
datasets and baselines) and a five-item rubric (one per question) for the judge. The
corpus is written first (:mod:`hasbench.build.research_corpus`), so ``write()`` rebuilds
both files byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hasbench.build import research_corpus
from hasbench.build.builder import (
    BuildError,
    TaskBuilder,
    action,
    agent,
    criteria,
    difficulty,
    env_assertion,
    human,
    proactive,
    require_gold,
)
from hasbench.envs.research import load_corpus
from hasbench.paths import TASKS_DIR
from hasbench.personas import domain_personas

SEED = 30
COUNTS = {"B": 8, "D": 10, "E": 12}
OUTPUT = TASKS_DIR / "research.yaml"
LEAD = "agent_0"
PI = "pi"
ROLES = (
    ("lead author", "You lead the proposal: you talk with the PI, write the problem "
     "statement and submit the proposal when every requirement is met."),
    ("literature scout", "You search the literature service, read the key prior work, cite "
     "it and explain why the problem is still open."),
    ("methods designer", "You design the approach: baselines, evaluation and expected "
     "results, and cite the methods you compare against."),
    ("data steward", "You choose the evaluation datasets and check their licences."),
    ("writer", "You explain why the problem is hard, in clear prose."),
    ("impact analyst", "You explain why the problem matters and what risks it carries."),
)  # fmt: skip
CONSTRAINTS = (
    ("everything must run on a single GPU", "single GPU | one GPU",
     "All experiments are designed to run on a single GPU."),
    ("no new data may be collected for this study", "existing data | no new data",
     "The study uses existing data only; no new data is collected."),
    ("the whole study must fit into six months", "six months",
     "The work plan fits into six months."),
    ("code and trained models must be released openly", "release | open source",
     "We will release the code and the trained models as open source."),
)  # fmt: skip
"""(what the PI says, the required element, the sentence the gold approach uses)."""
COMPONENTS: dict[str, tuple[str, ...]] = {
    "graph_learning": ("neighbourhood sampler", "positional encodings", "rewiring step"),
    "retrieval_augmented_generation": ("reranker", "query rewriter", "evidence compressor"),
    "preference_alignment": ("reward ensemble", "annotator model", "KL penalty"),
    "federated_learning": ("drift correction", "update compression", "personal layers"),
    "code_generation": ("test generator", "repository retriever", "repair loop"),
    "time_series_forecasting": ("patching step", "window normalisation", "trend decomposition"),
    "robot_manipulation": ("tactile input", "diffusion head", "language conditioning"),
    "medical_segmentation": ("consistency loss", "uncertainty head", "boundary loss"),
}
RISKS: dict[str, tuple[str, str]] = {
    "graph_learning": ("the privacy risks of social graph data", "privacy"),
    "retrieval_augmented_generation": ("misinformation from unreliable sources",
                                       "misinformation"),
    "preference_alignment": ("bias introduced by annotators", "bias"),
    "federated_learning": ("information leakage through model updates", "leakage"),
    "code_generation": ("insecure generated code", "insecure"),
    "time_series_forecasting": ("misuse of forecasts in automated decisions", "misuse"),
    "robot_manipulation": ("safety around people", "safety"),
    "medical_segmentation": ("misdiagnosis from overconfident models", "misdiagnosis"),
}  # fmt: skip
"""Per topic: the risk a reviewer asks to discuss, and its required element."""
OPEN_LICENCES = ("CC BY 4.0", "CC BY-SA 4.0", "MIT", "Apache 2.0")


class _Generator:
    """Draws topics, problems and papers from the corpus and adds tasks to a builder."""

    def __init__(self, seed: int, corpus_path: Path) -> None:
        self.builder = TaskBuilder("research", seed)
        self.rng = self.builder.rng
        self.corpus = load_corpus(corpus_path)
        self.topics = {t.key: t for t in research_corpus.TOPICS}
        self.personas = domain_personas("research")
        if len(self.personas) < 3:
            raise BuildError("research: data/personas.yaml must define three research personas")
        self.used_problems: set[tuple[str, str]] = set()
        self.turn = 0

    # -- drawing ------------------------------------------------------------------------

    def problem(self) -> tuple[research_corpus.Topic, str]:
        """A topic and one of its problems not used by an earlier task (cycling topics)."""
        topic = research_corpus.TOPICS[self.turn % len(research_corpus.TOPICS)]
        self.turn += 1
        fresh = [p for p in topic.problems if (topic.key, p) not in self.used_problems]
        problem = self.builder.pick(fresh)
        self.used_problems.add((topic.key, problem))
        return topic, problem

    def papers_on(self, topic: research_corpus.Topic, problem: str) -> list[dict[str, Any]]:
        """Papers of the topic about the problem, most cited first."""
        papers = [
            p
            for p in self.corpus.papers.values()
            if p["topic"] == topic.key and problem in p["title"] + " " + p["abstract"].lower()
        ]
        return sorted(papers, key=lambda p: (-p["citation_count"], p["paper_id"]))

    def search(self, query: str, limit: int) -> list[str]:
        return self.corpus.ranked(self.corpus.scores(query), limit)

    def team(self, size: int) -> list[dict[str, Any]]:
        return [
            agent(f"agent_{i}", profile=ROLES[i][1], role=ROLES[i][0], tools=None)
            for i in range(size)
        ]

    def persona(self, known: dict[str, Any]) -> str:
        """A persona for a human: one that shares asked-for facts when it holds any."""
        if not known:
            return self.builder.pick([p.persona_id for p in self.personas])
        return self.builder.pick([p.persona_id for p in self.personas if p.cooperativeness >= 0.5])

    # -- the common gold path -----------------------------------------------------------

    def skeleton(self, topic: research_corpus.Topic, problem: str, size: int) -> dict[str, Any]:
        """Who does what, the literature steps and the four sections outside the approach."""
        lit = "agent_1"
        meth = "agent_2" if size >= 3 else lit
        data = "agent_3" if size >= 4 else meth
        writer = "agent_4" if size >= 5 else LEAD
        impact = "agent_5" if size >= 6 else LEAD
        hits = self.search(problem, 5)
        related = self.corpus.papers[hits[0]]
        challenge = self.builder.pick(topic.challenges)
        metric = self.builder.pick(topic.metrics)
        mechanism = self.builder.pick(topic.mechanisms)
        steps: list[tuple[str, str, dict[str, Any]]] = [
            (lit, "search_papers", {"query": problem, "max_results": 5}),
            (lit, "get_paper", {"paper_id": related["paper_id"]}),
            (lit, "cite_paper", {"paper_id": related["paper_id"], "role": "related"}),
        ]
        if self.rng.random() < 0.5:
            steps.insert(1, (lit, "get_recent_papers", {"topic": topic.name, "max_results": 5}))
        sections = {
            "problem": (
                LEAD,
                f"This proposal addresses {problem} in {topic.name}. Current methods for "
                f"{problem} still fall short on the benchmarks that matter, and we ask how "
                "a principled method can close this gap.",
            ),
            "importance": (
                impact,
                f"Progress on {problem} matters for {topic.name} because many downstream "
                "systems depend on it; better methods would make them more reliable and "
                "cheaper to run.",
            ),
            "difficulty": (
                writer,
                f"{problem[0].upper()}{problem[1:]} is hard because {challenge}. Standard "
                "evaluations also hide failure cases, so improvements are easy to overstate.",
            ),
            "unsolved": (
                lit,
                f"Prior work such as {related['method']} ({related['paper_id']}) improved "
                f"parts of the pipeline, but it does not remove the core obstacle that "
                f"{challenge}, and no study has tested a remedy with a careful evaluation.",
            ),
        }
        return {
            "lit": lit, "meth": meth, "data": data, "writer": writer, "impact": impact,
            "related": related, "metric": metric, "mechanism": mechanism, "steps": steps,
            "sections": sections,
        }  # fmt: skip

    def approach(self, plan: dict[str, Any], sentences: list[str]) -> str:
        return " ".join(
            [f"We propose a method that {plan['mechanism']}.", *sentences,
             f"We expect a clear improvement in {plan['metric']} over the strongest baseline."]
        )  # fmt: skip

    # -- adding -------------------------------------------------------------------------

    def add(
        self,
        pattern: str,
        *,
        topic: research_corpus.Topic,
        problem: str,
        size: int,
        plan: dict[str, Any],
        extra_steps: list[tuple[str, str, dict[str, Any], list[str]]],
        approach_text: str,
        after_approach: list[tuple[str, str, dict[str, Any], list[str]]] | None = None,
        approach_needs: list[str],
        section_needs: dict[str, tuple[str, list[str]]] | None,
        users: list[dict[str, Any]],
        links: list[list[str]],
        asserts: list[dict[str, Any]],
        task_extra: str,
        template: str,
    ) -> None:
        """Assemble the gold actions and add the task.

        Order: literature steps, the pattern's extra steps, the four sections, the
        approach, steps that follow it, submission. An agent asks the humans it reaches
        when it first acts, so whoever holds a fact is reached by an agent acting before
        the fact is used.
        """
        section_needs = section_needs or {}
        gold: list[tuple[str, str, dict[str, Any], list[str]]] = [
            (who, name, args, []) for who, name, args in plan["steps"]
        ]
        gold += extra_steps
        for section, (who, text) in plan["sections"].items():
            if section in section_needs:
                text, needs = text + " " + section_needs[section][0], section_needs[section][1]
            else:
                needs = []
            gold.append((who, "write_section", {"section": section, "text": text}, needs))
        gold.append(
            (plan["meth"], "write_section", {"section": "approach", "text": approach_text},
             approach_needs)
        )  # fmt: skip
        gold += after_approach or []
        gold.append((LEAD, "submit_proposal", {}, []))
        relationships = [[PI, LEAD, "supervises"], *links]
        for i in range(1, size):
            relationships += [[LEAD, f"agent_{i}", "collaborates"],
                              [f"agent_{i}", LEAD, "collaborates"]]  # fmt: skip
            if i + 1 < size:
                relationships.append([f"agent_{i}", f"agent_{i + 1}", "collaborates"])
        rubric = [
            f'The proposal states the research problem it addresses: "{problem}".',
            f'The proposal explains why the problem is important for "{topic.name}".',
            f'The proposal explains why "{problem}" is hard, naming a concrete obstacle.',
            f'The proposal explains why prior work such as "{plan["related"]["method"]}" has '
            "not solved the problem.",
            f"The proposal describes the key components of its approach and the expected "
            f'results, measured in "{plan["metric"]}".',
        ]
        title = f"A proposal on {problem}"
        hidden = sum(len(u["known_info"]) for u in users)
        hardness = (len(gold) - 13) // 3 + hidden + (size >= 5)
        scenario = self.builder.add(
            pattern,
            task=(
                f"Write and submit a research proposal on {problem} ({topic.name}) for the "
                "PI. It answers the five questions: what the problem is, why it matters, "
                "why it is hard, why it has not been solved, and the key components of the "
                "approach with the expected results. Ground it in the literature service and "
                f"cite the work you build on. {task_extra}"
            ).strip(),
            agents=self.team(size),
            users=users,
            relationships=relationships,
            criteria=criteria(
                [
                    action(i, who, name, args, depends_on=needs)
                    for i, (who, name, args, needs) in enumerate(gold, start=1)
                ],
                reward_basis=["ENV_ASSERTION", "NL_ASSERTIONS"],
                env_assertions=[
                    env_assertion("assert_submitted", {}, "the proposal is submitted"),
                    *asserts,
                ],
                nl_assertions=rubric,
            ),
            max_iterations=30 + 3 * len(gold),
            coordination_mode="graph",
            environment={"initialization_data": {"agent_data": {"proposal": {"title": title}}}},
            metadata={
                "template": template,
                "difficulty": difficulty(hardness),
                "topic": topic.key,
                "problem": problem,
                "team_size": size,
                "gold_tool_calls": len(gold),
                "hidden_facts": hidden,
            },
        )
        require_gold(scenario)

    def pi(self, *, goal: str, instructions: str, known: dict[str, Any], persona: str) -> dict:
        return human(
            PI, goal=goal, role="principal investigator", persona=persona,
            responsibilities=["accept or reject the proposal"], instructions=instructions,
            known_info=known, spontaneous=_tell(PI, known) if known else None,
        )  # fmt: skip

    # -- B: the PI's latent acceptance criteria -----------------------------------------

    def latent(self) -> None:
        topic, problem = self.problem()
        size = int(self.rng.integers(2, 7))
        plan = self.skeleton(topic, problem, size)
        candidates = [p for p in self.papers_on(topic, problem)
                      if p["paper_id"] != plan["related"]["paper_id"]]  # fmt: skip
        baseline = candidates[0]
        open_sets = [d[0] for d in topic.datasets if d[2] in OPEN_LICENCES]
        dataset = self.builder.pick(open_sets)
        said, element, sentence = self.builder.pick(CONSTRAINTS)
        kinds = ["baseline", "dataset", "constraint"]
        if self.rng.random() < 0.4:
            kinds.remove(self.builder.pick(["dataset", "constraint"]))
        known: dict[str, Any] = {}
        extra: list[tuple[str, str, dict[str, Any], list[str]]] = []
        sentences: list[str] = []
        required: list[str] = []
        asserts: list[dict[str, Any]] = []
        meth, data = plan["meth"], plan["data"]
        if "baseline" in kinds:
            known["required_baseline"] = f"{baseline['method']} must be the main baseline"
            need = [f"{PI}.required_baseline"]
            extra += [
                (meth, "search_papers", {"query": baseline["method"], "max_results": 3}, []),
                (meth, "cite_paper", {"paper_id": baseline["paper_id"], "role": "baseline"},
                 need),
            ]  # fmt: skip
            sentences.append(
                f"We compare against {baseline['method']} ({baseline['paper_id']}) as the "
                "main baseline."
            )
            required.append(baseline["method"])
            asserts.append(
                env_assertion(
                    "assert_cites", {"paper_id": baseline["paper_id"], "role": "baseline"},
                    "the PI's baseline is cited as the baseline",
                )
            )  # fmt: skip
        if "dataset" in kinds:
            known["required_dataset"] = f"results on {dataset} are a must for acceptance"
            extra.append((data, "set_datasets", {"names": [dataset]},
                          [f"{PI}.required_dataset"]))  # fmt: skip
            sentences.append(f"We evaluate on {dataset}.")
            required.append(dataset)
            asserts.append(
                env_assertion(
                    "assert_datasets",
                    {"required": [dataset], "forbidden": []},
                    "the PI's dataset is chosen",
                )  # fmt: skip
            )
        if "constraint" in kinds:
            known["resource_constraint"] = said
            sentences.append(sentence)
            required.append(element)
        asserts.append(
            env_assertion(
                "assert_section_covers", {"section": "approach", "required": required},
                "the approach meets every acceptance criterion of the PI",
            )
        )  # fmt: skip
        needs = [f"{PI}.{key}" for key in known]
        self.add(
            "B", topic=topic, problem=problem, size=size, plan=plan, extra_steps=extra,
            approach_text=self.approach(plan, sentences), approach_needs=needs,
            section_needs=None,
            users=[self.pi(
                goal="A proposal I can accept: it must meet my acceptance criteria.",
                instructions=(
                    "You have acceptance criteria the team has not been told. Reveal each "
                    "criterion only when you are asked about it or about your requirements."
                ),
                known=known, persona=self.persona(known),
            )],
            links=[], asserts=asserts,
            task_extra="The PI will only accept a proposal that meets their criteria.",
            template="latent_" + "_".join(kinds),
        )  # fmt: skip

    # -- D: co-authors with conflicting requirements ------------------------------------

    def conflict(self, kind: str) -> None:
        topic, problem = self.problem()
        size = int(self.rng.integers(3, 7))
        plan = self.skeleton(topic, problem, size)
        first, second = "coauthor_a", "coauthor_b"
        names = self.builder.sample(list(research_corpus.FIRST_NAMES), 2)
        via = {first: plan["lit"], second: plan["data"] if kind == "licence" else plan["meth"]}
        component = self.builder.pick(COMPONENTS[topic.key])
        risk, risk_word = RISKS[topic.key]
        known_a: dict[str, Any] = {
            "requested_analysis": f"an ablation of the {component} must be part of the plan"
        }
        known_b: dict[str, Any] = {"requested_discussion": f"the proposal has to discuss {risk}"}
        extra: list[tuple[str, str, dict[str, Any], list[str]]] = []
        sentences: list[str] = []
        required = ["ablation", component]
        asserts: list[dict[str, Any]] = []
        if kind == "licence":
            closed = [d for d in topic.datasets if d[2] not in OPEN_LICENCES]
            opened = [d[0] for d in topic.datasets if d[2] in OPEN_LICENCES]
            preferred = self.builder.pick(closed)
            allowed = self.builder.pick(opened)
            known_a["preferred_dataset"] = f"our main results should be on {preferred[0]}"
            known_b["data_policy"] = (
                f"only openly licensed datasets may be used, for example {allowed}"
            )
            conflict_needs = [f"{first}.preferred_dataset", f"{second}.data_policy"]
            extra.append((plan["data"], "set_datasets", {"names": [allowed]}, conflict_needs))
            sentences.append(
                f"We evaluate on {allowed}, an openly licensed dataset; {preferred[0]} is "
                f"excluded because its licence ({preferred[2]}) does not allow open release."
            )
            required.append(allowed)
            asserts.append(
                env_assertion(
                    "assert_datasets", {"required": [allowed], "forbidden": [preferred[0]]},
                    "the open dataset is chosen and the restricted one is not",
                )
            )  # fmt: skip
            rule = (
                "Where the co-authors' requirements conflict, a licence or ethics rule "
                "overrides a preference; every other requirement of each co-author must be met."
            )
        else:
            papers = self.papers_on(topic, problem)
            older = [p for p in papers if p["paper_id"] != plan["related"]["paper_id"]]
            old = older[0]
            newer = [p for p in older if p["year"] > old["year"]]
            new = newer[0] if newer else older[1]
            senior = self.builder.pick([first, second])
            winner = new if senior == second else old
            loser = old if winner is new else new
            known_a["baseline_choice"] = f"{old['method']} should be our main baseline"
            known_b["baseline_choice"] = (
                f"{new['method']} has to be the main baseline, not {old['method']}"
            )
            conflict_needs = [f"{first}.baseline_choice", f"{second}.baseline_choice"]
            extra += [
                (plan["meth"], "search_papers", {"query": winner["method"], "max_results": 3},
                 []),
                (plan["meth"], "cite_paper", {"paper_id": winner["paper_id"], "role": "baseline"},
                 conflict_needs),
            ]  # fmt: skip
            sentences.append(
                f"We compare against {winner['method']} ({winner['paper_id']}) as the main "
                "baseline, as decided by the senior co-author."
            )
            required.append(winner["method"])
            asserts.append(
                env_assertion(
                    "assert_baselines",
                    {"required": [winner["paper_id"]], "forbidden": [loser["paper_id"]]},
                    "the senior co-author's baseline is the baseline, the other one is not",
                )
            )  # fmt: skip
            label = names[0] if senior == first else names[1]
            rule = (
                f"Where the co-authors' requirements conflict, {label} is the senior author "
                "and decides; every other requirement of each co-author must be met."
            )
        sentences.append(f"We include an ablation of the {component}.")
        asserts.append(
            env_assertion(
                "assert_section_covers", {"section": "approach", "required": required},
                "the approach meets each co-author's requirements as reconciled",
            )
        )  # fmt: skip
        asserts.append(
            env_assertion(
                "assert_section_covers", {"section": "importance", "required": [risk_word]},
                "the importance section discusses the risk a co-author asked for",
            )
        )  # fmt: skip
        approach_needs = [*conflict_needs, f"{first}.requested_analysis"]
        discussion = (plan["impact"], f"The proposal also discusses {risk}.")
        users = []
        for user_id, name, known in ((first, names[0], known_a), (second, names[1], known_b)):
            users.append(
                human(
                    user_id, role="co-author", persona=self.persona(known),
                    goal=f"As co-author {name}, my requirements are reflected in the proposal.",
                    responsibilities=["co-author the proposal"],
                    instructions="State your requirements when you are asked about them.",
                    known_info=known, spontaneous=_tell(user_id, known),
                )
            )  # fmt: skip
        self.add(
            "D", topic=topic, problem=problem, size=size, plan=plan, extra_steps=extra,
            approach_text=self.approach(plan, sentences), approach_needs=approach_needs,
            section_needs={"importance": (discussion[1], [f"{second}.requested_discussion"])},
            users=[self.pi(
                goal="A proposal that reconciles my co-authors' requirements as agreed.",
                instructions="Tell the team to ask the co-authors for their requirements.",
                known={}, persona=self.persona({}),
            ), *users],
            links=[[first, via[first], "informs"], [second, via[second], "informs"]],
            asserts=asserts,
            task_extra=(
                f"Two co-authors, {names[0]} (reached through {via[first]}) and {names[1]} "
                f"(reached through {via[second]}), have requirements. {rule}"
            ),
            template=f"conflict_{kind}",
        )  # fmt: skip

    # -- E: review rounds ---------------------------------------------------------------

    def review(self, rounds: int) -> None:
        topic, problem = self.problem()
        size = int(self.rng.integers(2, 7))
        plan = self.skeleton(topic, problem, size)
        component = self.builder.pick(COMPONENTS[topic.key])
        cited = {plan["related"]["paper_id"]}
        candidates = [p for p in self.papers_on(topic, problem) if p["paper_id"] not in cited]
        missing = sorted(candidates[:6], key=lambda p: (-p["year"], p["paper_id"]))[0]
        analysis = f"an ablation that removes the {component}"
        first = {"requested_analysis": analysis, "missing_reference": missing["paper_id"]}
        reviewers = [
            human(
                "reviewer_1", role="methods reviewer", persona=self.persona(first),
                goal="Every request of my review is addressed in the submitted proposal.",
                responsibilities=["review the approach"],
                instructions=(
                    "When shown a draft, say which of your requests it does not address yet."
                ),
                known_info=first, spontaneous=_tell("reviewer_1", first, "feedback"),
            )
        ]  # fmt: skip
        links = [["reviewer_1", plan["meth"], "reviews"]]
        asserts = [
            env_assertion(
                "assert_section_covers",
                {"section": "approach", "required": ["ablation", component]},
                "the approach adds the analysis the first review asked for",
            ),
            env_assertion(
                "assert_cites", {"paper_id": missing["paper_id"], "role": None},
                "the paper the first review asked for is cited",
            ),
        ]  # fmt: skip
        section_needs = None
        if rounds == 2:
            risk, risk_word = RISKS[topic.key]
            second = {"requested_discussion": f"a discussion of {risk}"}
            reviewers.append(
                human(
                    "reviewer_2", role="impact reviewer", persona=self.persona(second),
                    goal="The proposal is responsible about its risks.",
                    responsibilities=["review why the work matters and its risks"],
                    instructions=(
                        "When shown a draft, say which of your requests it does not address."
                    ),
                    known_info=second, spontaneous=_tell("reviewer_2", second, "feedback"),
                )
            )  # fmt: skip
            links.append(["reviewer_2", plan["impact"], "reviews"])
            section_needs = {
                "importance": (
                    f"It also needs {second['requested_discussion']}.",
                    ["reviewer_2.requested_discussion"],
                )  # fmt: skip
            }
            asserts.append(
                env_assertion(
                    "assert_section_covers", {"section": "importance", "required": [risk_word]},
                    "the importance section has the discussion the second review asked for",
                )
            )  # fmt: skip
        sentences = [
            f"Following the review, we add {analysis} and relate our method to "
            f"{missing['method']} ({missing['paper_id']})."
        ]
        cite = [(plan["meth"], "cite_paper", {"paper_id": missing["paper_id"], "role": "related"},
                 ["reviewer_1.missing_reference"])]  # fmt: skip
        ordinal = "one review round" if rounds == 1 else "two review rounds"
        self.add(
            "E", topic=topic, problem=problem, size=size, plan=plan, extra_steps=[],
            approach_text=self.approach(plan, sentences), after_approach=cite,
            approach_needs=["reviewer_1.requested_analysis", "reviewer_1.missing_reference"],
            section_needs=section_needs,
            users=[self.pi(
                goal="A proposal that has passed its review rounds.",
                instructions="Let the reviewers judge the drafts.",
                known={}, persona=self.persona({}),
            ), *reviewers],
            links=links, asserts=asserts,
            task_extra=(
                f"The proposal goes through {ordinal}: show drafts to the reviewers "
                "(reviewer_1 reviews the approach"
                + (", reviewer_2 why it matters" if rounds == 2 else "")
                + ") and address every request before submitting."
            ),
            template=f"review_{rounds}_rounds",
        )  # fmt: skip


def _tell(user_id: str, known: dict[str, Any], channel: str = "clarification") -> dict[str, Any]:
    """A4's predefined contribution: the person states their first requirement unprompted."""
    first = next(iter(known.values()))
    message = f"Before you go on, one requirement from me: {first}."
    return proactive(f"{user_id}_tells", message, action_type=channel)


def build(seed: int = SEED, corpus_path: Path | None = None) -> TaskBuilder:
    """Generate all research tasks (patterns in order, templates in a fixed rotation)."""
    gen = _Generator(seed, corpus_path or research_corpus.OUTPUT)
    for _ in range(COUNTS["B"]):
        gen.latent()
    for index in range(COUNTS["D"]):
        gen.conflict("licence" if index % 2 == 0 else "seniority")
    for index in range(COUNTS["E"]):
        gen.review(1 if index % 2 == 0 else 2)
    return gen.builder


def write(path: Path | None = None, seed: int = SEED) -> Path:
    """Write the corpus, then the tasks (default :data:`OUTPUT`); both reproducible."""
    research_corpus.write()
    return build(seed).write(path or OUTPUT)
