"""The literature corpus of the Research domain, written by a seeded generator.

The corpus is the data behind the Research environment's literature service: 480 papers
in eight machine-learning topics (60 each, 2012-2025), each with a title, authors, year,
venue, keywords, an abstract, the method it introduces, the datasets it evaluates on and
its references (earlier papers, mostly of its own topic, drawn with preferential
attachment, so citation counts are skewed as in real literature). A dataset registry
lists every dataset with its topic, description and licence. Everything is invented:
method names combine a stem with a topic suffix (``KestrelGNN``), authors combine first
and last names; nothing is taken from a real bibliography.

``write()`` writes ``data/research/corpus.json``; rerunning it with the same seed
reproduces the file byte for byte (``hasbench build tasks --domain research`` does both
the corpus and the tasks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hasbench.paths import DATA_DIR

SEED = 2024
OUTPUT = DATA_DIR / "research" / "corpus.json"
PAPERS_PER_TOPIC = 60
YEARS = tuple(range(2012, 2026))


@dataclass(frozen=True)
class Topic:
    """The vocabulary one topic's papers are written from."""

    key: str
    name: str
    keywords: tuple[str, ...]
    problems: tuple[str, ...]
    challenges: tuple[str, ...]
    mechanisms: tuple[str, ...]
    findings: tuple[str, ...]
    suffixes: tuple[str, ...]
    metrics: tuple[str, ...]
    venues: tuple[str, ...]
    datasets: tuple[tuple[str, str, str], ...]
    """(name, description, licence)."""


# fmt: off
TOPICS: tuple[Topic, ...] = (
    Topic(
        key="graph_learning",
        name="graph representation learning",
        keywords=("graph neural network", "message passing", "node classification",
                  "link prediction", "graph sampling", "oversmoothing", "heterophily",
                  "inductive learning", "graph transformer", "scalability"),
        problems=("node classification on large graphs", "link prediction in sparse graphs",
                  "learning on heterophilous graphs", "inductive node embedding",
                  "graph-level property prediction", "training deep message passing networks"),
        challenges=("neighbourhoods grow exponentially with depth",
                    "repeated aggregation makes node features indistinguishable",
                    "neighbouring nodes often carry different labels",
                    "full-batch training does not fit in accelerator memory"),
        mechanisms=("samples a fixed-size neighbourhood per layer",
                    "mixes low- and high-frequency graph signals",
                    "adds learnable positional encodings to every node",
                    "rewires the graph to shorten long-range paths",
                    "caches historical embeddings of distant nodes",
                    "decouples feature propagation from transformation"),
        findings=("deeper models stop degrading once aggregation is normalised per hop",
                  "sampling error, not model capacity, limits accuracy on large graphs",
                  "a simple propagation baseline is competitive on homophilous benchmarks",
                  "positional information matters most on graphs with few node features"),
        suffixes=("GNN", "Graph", "Prop", "Walk"),
        metrics=("accuracy", "ROC-AUC", "mean reciprocal rank"),
        venues=("NeurIPS", "ICLR", "KDD", "Learning on Graphs Conference"),
        datasets=(
            ("OpenCitationGraph", "a citation network of 1.2M papers with subject labels",
             "CC BY 4.0"),
            ("ProteinContacts-5k", "protein contact graphs with function labels", "CC BY 4.0"),
            ("SocialHetero", "a heterophilous social network with user roles",
             "research only"),
            ("RoadNet-EU", "road networks of 40 European cities with traffic labels",
             "CC BY-NC 4.0"),
            ("ShopGraph-Pro", "a proprietary co-purchase graph of an online shop",
             "proprietary, no redistribution"),
        ),
    ),
    Topic(
        key="retrieval_augmented_generation",
        name="retrieval-augmented generation",
        keywords=("retrieval-augmented generation", "dense retrieval", "question answering",
                  "hallucination", "reranking", "knowledge grounding", "long context",
                  "citation accuracy", "query rewriting", "document chunking"),
        problems=("open-domain question answering", "grounded long-form generation",
                  "multi-hop question answering", "reducing hallucinated citations",
                  "retrieval over private document collections", "answering with long contexts"),
        challenges=("retrieved passages are often relevant but not sufficient",
                    "the generator ignores evidence that contradicts its priors",
                    "errors of the retriever propagate to the answer",
                    "long inputs dilute the attention paid to the key passage"),
        mechanisms=("rewrites each question before retrieval",
                    "reranks passages with a cross-encoder trained on answer support",
                    "interleaves retrieval with generation step by step",
                    "compresses retrieved passages into short evidence notes",
                    "trains the retriever from the generator's feedback",
                    "verifies every generated claim against its cited passage"),
        findings=("most errors come from missing evidence rather than faulty reasoning",
                  "reranking helps more than a larger retriever",
                  "citation accuracy and answer accuracy are only weakly correlated",
                  "iterative retrieval pays off only on multi-hop questions"),
        suffixes=("RAG", "Retriever", "Fuse", "Index"),
        metrics=("exact match", "citation precision", "answer F1"),
        venues=("ACL", "EMNLP", "NAACL", "SIGIR"),
        datasets=(
            ("WikiHopQA-2", "multi-hop questions over encyclopedia articles", "CC BY-SA 4.0"),
            ("OpenBookLong", "long-form answers with annotated supporting passages",
             "CC BY 4.0"),
            ("CiteCheck", "generated answers labelled for citation support", "research only"),
            ("EnterpriseDocs", "questions over an internal company wiki",
             "proprietary, no redistribution"),
            ("NewsQA-Live", "questions about news published after model training",
             "CC BY-NC 4.0"),
        ),
    ),
    Topic(
        key="preference_alignment",
        name="learning from human preferences",
        keywords=("reinforcement learning from human feedback", "reward model",
                  "preference optimisation", "alignment", "reward hacking", "KL regularisation",
                  "pairwise comparisons", "instruction following", "safety", "annotation noise"),
        problems=("aligning language models with pairwise preferences",
                  "robust reward modelling", "preference learning from noisy annotators",
                  "avoiding reward hacking", "aligning models without a separate reward model",
                  "sample-efficient preference collection"),
        challenges=("reward models are exploited by the policy they train",
                    "annotators disagree on a large share of comparisons",
                    "preference data covers only a narrow slice of behaviours",
                    "online preference collection is slow and costly"),
        mechanisms=("optimises the policy directly on preference pairs",
                    "ensembles reward models to penalise uncertain rewards",
                    "models each annotator's reliability explicitly",
                    "selects the most informative comparisons to label",
                    "constrains the policy to stay close to a reference model",
                    "learns a reward from natural-language critiques"),
        findings=("reward over-optimisation appears after a predictable KL budget",
                  "annotator noise hurts small reward models most",
                  "direct optimisation matches reward-model pipelines at lower cost",
                  "active selection halves the labels needed for the same win rate"),
        suffixes=("PO", "Reward", "Align", "Pref"),
        metrics=("win rate", "reward accuracy", "KL divergence"),
        venues=("NeurIPS", "ICML", "ICLR", "ACL"),
        datasets=(
            ("HelpfulPairs", "pairwise preferences over assistant answers", "CC BY 4.0"),
            ("SafeCompare", "preferences focused on harmful requests", "research only"),
            ("MultiAnnot-Pref", "comparisons with five annotators each", "CC BY 4.0"),
            ("ChatLogs-Internal", "preferences from a product's user logs",
             "proprietary, no redistribution"),
            ("SummPref", "preferences between summaries of forum posts", "CC BY-NC 4.0"),
        ),
    ),
    Topic(
        key="federated_learning",
        name="federated learning",
        keywords=("federated learning", "client heterogeneity", "communication efficiency",
                  "differential privacy", "secure aggregation", "personalisation",
                  "non-IID data", "client drift", "cross-device", "model compression"),
        problems=("training on non-IID client data", "communication-efficient federated training",
                  "private federated learning", "personalised federated models",
                  "federated learning with unreliable clients",
                  "federated fine-tuning of large models"),
        challenges=("client updates drift apart when local data differ",
                    "uplink bandwidth on mobile devices is scarce",
                    "privacy noise slows convergence sharply",
                    "many clients drop out in every round"),
        mechanisms=("corrects client drift with control variates",
                    "sends quantised low-rank updates",
                    "clips and noises updates for user-level privacy",
                    "splits the model into shared and personal layers",
                    "weights clients by the staleness of their updates",
                    "fine-tunes small adapters instead of the full model"),
        findings=("drift correction matters most when clients hold one or two classes",
                  "low-rank updates keep accuracy at a tenth of the traffic",
                  "user-level privacy costs less accuracy with more clients per round",
                  "personal layers help only when clients have enough local data"),
        suffixes=("Fed", "Avg", "Agg", "Sync"),
        metrics=("accuracy", "communication cost", "privacy budget"),
        venues=("ICML", "MLSys", "AISTATS", "NeurIPS"),
        datasets=(
            ("FedKeyboard", "next-word prediction on simulated phone keyboards", "CC BY 4.0"),
            ("FedVision-100", "images split across 100 clients by photographer",
             "CC BY 4.0"),
            ("HospitalNotes-FL", "clinical notes from several hospitals", "research only"),
            ("TelcoUsage", "usage logs of a mobile operator",
             "proprietary, no redistribution"),
            ("FedSpeech", "speech commands recorded on personal devices", "CC BY-NC 4.0"),
        ),
    ),
    Topic(
        key="code_generation",
        name="neural code generation",
        keywords=("code generation", "program synthesis", "unit tests", "code repair",
                  "large language models", "execution feedback", "code completion",
                  "repository context", "static analysis", "benchmark contamination"),
        problems=("generating functions from docstrings", "repairing failing programs",
                  "repository-level code completion", "synthesising programs from examples",
                  "generating correct code for unfamiliar libraries",
                  "evaluating code models without contamination"),
        challenges=("a plausible program is often subtly wrong",
                    "the relevant context is spread across many files",
                    "test suites used for evaluation leak into training data",
                    "execution feedback is sparse and delayed"),
        mechanisms=("samples many programs and filters them with generated tests",
                    "retrieves definitions from the surrounding repository",
                    "repairs programs using error messages from execution",
                    "plans the program in pseudocode before writing it",
                    "trains on traces of program execution",
                    "checks generated code with a static type checker"),
        findings=("generated tests filter out most wrong samples at low cost",
                  "repository retrieval helps most for internal APIs",
                  "contamination inflates scores by up to ten points",
                  "planning helps on long functions but not on short ones"),
        suffixes=("Coder", "Synth", "Gen", "Patch"),
        metrics=("pass@1", "exact match", "compilation rate"),
        venues=("ICSE", "FSE", "ICLR", "NeurIPS"),
        datasets=(
            ("PyFuncBench", "Python functions with docstrings and hidden tests", "MIT"),
            ("RepoComplete", "completion tasks inside open-source repositories",
             "Apache 2.0"),
            ("BugFix-Java", "real Java bugs with failing tests", "research only"),
            ("CorpCode", "code from a company's private monorepo",
             "proprietary, no redistribution"),
            ("FreshTasks-2025", "problems written after common training cut-offs",
             "CC BY 4.0"),
        ),
    ),
    Topic(
        key="time_series_forecasting",
        name="time-series forecasting",
        keywords=("time-series forecasting", "long horizon", "transformer", "seasonality",
                  "probabilistic forecasting", "distribution shift", "multivariate series",
                  "anomaly", "foundation model", "calibration"),
        problems=("long-horizon forecasting", "probabilistic demand forecasting",
                  "forecasting under distribution shift", "multivariate sensor forecasting",
                  "zero-shot forecasting on new series", "forecasting with missing values"),
        challenges=("errors compound over long horizons",
                    "seasonal patterns change without warning",
                    "channels interact in ways that vary over time",
                    "new series arrive with almost no history"),
        mechanisms=("splits the series into patches before attention",
                    "decomposes trend and seasonality explicitly",
                    "normalises each window to remove level shifts",
                    "predicts quantiles with a calibrated loss",
                    "pretrains on a large collection of public series",
                    "mixes information across channels with a light MLP"),
        findings=("simple linear models remain strong on long horizons",
                  "window normalisation explains much of the gain of recent models",
                  "pretraining helps most on short series",
                  "calibration degrades quickly after a distribution shift"),
        suffixes=("Cast", "Former", "TS", "Trend"),
        metrics=("MAE", "CRPS", "MASE"),
        venues=("ICML", "NeurIPS", "KDD", "AAAI"),
        datasets=(
            ("GridLoad-15", "electricity load of 370 households at 15-minute steps",
             "CC BY 4.0"),
            ("RetailDemand-M", "daily sales of 30,000 products", "CC BY-NC 4.0"),
            ("TrafficSensors", "occupancy from 860 road sensors", "CC BY 4.0"),
            ("BankFlows", "cash flows of a retail bank's branches",
             "proprietary, no redistribution"),
            ("ClimateStations", "weather station readings over 20 years",
             "research only"),
        ),
    ),
    Topic(
        key="robot_manipulation",
        name="robot manipulation",
        keywords=("robot manipulation", "grasping", "imitation learning", "sim-to-real",
                  "tactile sensing", "diffusion policy", "dexterous hands", "visuomotor control",
                  "language-conditioned policy", "reinforcement learning"),
        problems=("grasping novel objects", "learning manipulation from few demonstrations",
                  "transferring policies from simulation to real robots",
                  "dexterous in-hand manipulation",
                  "following language instructions with a robot arm",
                  "manipulating deformable objects"),
        challenges=("demonstrations are expensive to collect",
                    "simulated contact dynamics differ from the real world",
                    "the policy must act from noisy camera images",
                    "small grasp errors cascade into failed tasks"),
        mechanisms=("models the action distribution with a denoising diffusion process",
                    "randomises physical parameters during simulated training",
                    "fuses touch and vision in one policy",
                    "conditions the policy on a language embedding of the goal",
                    "predicts grasp poses from a point cloud",
                    "learns a reward from human video"),
        findings=("multimodal action models avoid averaging between grasp modes",
                  "touch matters most in the last centimetres of a grasp",
                  "domain randomisation of friction closes most of the reality gap",
                  "language conditioning generalises to new object names but not new skills"),
        suffixes=("Grasp", "Arm", "Reach", "Hand"),
        metrics=("success rate", "grasp success", "completion time"),
        venues=("CoRL", "RSS", "ICRA", "IROS"),
        datasets=(
            ("TableTop-Demos", "teleoperated demonstrations of 40 table-top tasks",
             "CC BY 4.0"),
            ("GraspNet-Objects", "3D scans of 1,000 household objects", "CC BY 4.0"),
            ("ClothFold", "demonstrations of folding garments", "research only"),
            ("FactoryPick", "pick-and-place logs from a warehouse robot fleet",
             "proprietary, no redistribution"),
            ("TouchSet", "synchronised tactile and camera recordings", "CC BY-NC 4.0"),
        ),
    ),
    Topic(
        key="medical_segmentation",
        name="medical image segmentation",
        keywords=("medical image segmentation", "U-Net", "semi-supervised learning",
                  "domain adaptation", "uncertainty", "3D volumes", "annotation efficiency",
                  "foundation model", "tumour", "federated evaluation"),
        problems=("segmenting tumours in 3D scans", "segmentation with few labelled scans",
                  "segmentation across scanners and hospitals", "uncertainty-aware segmentation",
                  "promptable organ segmentation", "segmenting small lesions"),
        challenges=("expert annotations take hours per scan",
                    "images from different scanners look systematically different",
                    "small structures are dominated by background voxels",
                    "models are confidently wrong on unusual anatomy"),
        mechanisms=("trains on unlabelled scans with consistency between augmentations",
                    "adapts batch statistics to each new scanner",
                    "predicts a distribution over plausible segmentations",
                    "accepts point and box prompts from a clinician",
                    "reweights the loss towards small structures",
                    "pretrains a 3D encoder on unlabelled volumes"),
        findings=("consistency training matches full supervision with a fifth of the labels",
                  "scanner shift causes larger drops than anatomy differences",
                  "uncertainty estimates flag most failure cases for review",
                  "boundary-aware losses matter most for small lesions"),
        suffixes=("Seg", "UNet", "Med", "Scan"),
        metrics=("Dice score", "Hausdorff distance", "sensitivity"),
        venues=("MICCAI", "MIDL", "IPMI", "Medical Image Analysis"),
        datasets=(
            ("BrainTumour-3D", "annotated multi-modal brain MRI volumes", "CC BY-NC 4.0"),
            ("LiverCT-Open", "abdominal CT scans with liver and lesion masks", "CC BY 4.0"),
            ("MultiSite-Prostate", "prostate MRI from six hospitals", "research only"),
            ("ClinicArchive", "scans from one hospital's archive",
             "proprietary, no redistribution"),
            ("RetinaVessels", "retinal photographs with vessel masks", "CC BY 4.0"),
        ),
    ),
)

# fmt: on
STEMS = (
    "Kestrel",
    "Heron",
    "Osprey",
    "Plover",
    "Lark",
    "Wren",
    "Finch",
    "Egret",
    "Ibis",
    "Tern",
    "Merlin",
    "Falcon",
    "Swift",
    "Petrel",
    "Gannet",
    "Avocet",
    "Curlew",
    "Dunlin",
    "Godwit",
    "Pipit",
    "Basalt",
    "Quartz",
    "Garnet",
    "Onyx",
    "Jasper",
    "Cobalt",
    "Mica",
    "Opal",
    "Beryl",
    "Zircon",
    "Cedar",
    "Alder",
    "Aspen",
    "Birch",
    "Rowan",
    "Juniper",
    "Larch",
    "Hazel",
    "Maple",
    "Willow",
)  # fmt: skip
FIRST_NAMES = (
    "Amara", "Bastian", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kavya", "Lukas", "Mei", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Soren", "Tala",
    "Umar", "Vera", "Wei", "Ximena", "Yusuf", "Zofia", "Anders", "Beatriz", "Callum", "Dalia",
    "Emeka", "Freya", "Gideon", "Hana", "Ilya", "Julia", "Kenji", "Leila", "Mateo", "Noor",
)  # fmt: skip
LAST_NAMES = (
    "Abara", "Berglund", "Castillo", "Dimitrov", "Eriksen", "Fontaine", "Gupta", "Hoffmann",
    "Ivanova", "Jansen", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrova",
    "Quiroga", "Rahman", "Sato", "Tanaka", "Uzun", "Varga", "Weber", "Xu", "Yilmaz", "Zhang",
    "Achebe", "Brandt", "Costa", "Duarte", "Esposito", "Fischer", "Greco", "Haddad", "Iqbal",
    "Jovanovic", "Kim", "Laurent", "Mensah", "Novak", "Osei", "Park", "Rossi", "Silva",
    "Takahashi", "Vogel", "Wojcik", "Yamamoto",
)  # fmt: skip
AUTHORS_PER_TOPIC = 36


def generate_corpus(seed: int = SEED) -> dict[str, Any]:
    """The corpus as JSON-ready data: ``{"version", "seed", "topics", "datasets", "papers"}``."""
    rng = np.random.default_rng(seed)
    authors = _author_pools(rng)
    drafts: list[dict[str, Any]] = []
    for topic in TOPICS:
        names = [f"{stem}{suffix}" for stem in STEMS for suffix in topic.suffixes]
        methods = [names[int(i)] for i in rng.choice(len(names), PAPERS_PER_TOPIC, replace=False)]
        weights = np.linspace(1.0, 3.0, len(YEARS))
        years = rng.choice(YEARS, PAPERS_PER_TOPIC, p=weights / weights.sum())
        for method, year in zip(methods, years, strict=True):
            drafts.append({"topic": topic.key, "method": method, "year": int(year)})
    drafts.sort(key=lambda d: (d["year"], d["topic"], d["method"]))
    for index, draft in enumerate(drafts, start=1):
        draft["paper_id"] = f"P{index:04d}"
    topics = {t.key: t for t in TOPICS}
    cited: dict[str, int] = {}
    datasets: dict[str, dict[str, Any]] = {}
    papers = []
    for draft in drafts:
        topic = topics[draft["topic"]]
        references = _references(rng, draft, papers, cited)
        paper = _write_paper(rng, draft, topic, authors[topic.key], references, papers)
        for name in paper["datasets"]:
            datasets.setdefault(name, {"introduced_by": paper["paper_id"]})
        papers.append(paper)
    for paper in papers:
        paper["citation_count"] = cited.get(paper["paper_id"], 0)
    registry = []
    for topic in TOPICS:
        for name, description, licence in topic.datasets:
            first = datasets.get(name, {}).get("introduced_by")
            registry.append(
                {
                    "name": name,
                    "topic": topic.key,
                    "description": description,
                    "license": licence,
                    "first_used_by": first,
                }
            )
    return {
        "version": 1,
        "seed": seed,
        "topics": {t.key: t.name for t in TOPICS},
        "datasets": registry,
        "papers": papers,
    }


def _author_pools(rng: np.random.Generator) -> dict[str, list[str]]:
    """Per topic, the researchers who publish in it (some publish in two topics)."""
    everyone = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
    chosen = [everyone[int(i)] for i in rng.choice(len(everyone), 240, replace=False)]
    pools: dict[str, list[str]] = {t.key: [] for t in TOPICS}
    keys = list(pools)
    for index, name in enumerate(chosen):
        home = keys[index % len(keys)]
        pools[home].append(name)
        if rng.random() < 0.25:
            pools[keys[int(rng.integers(len(keys)))]].append(name)
    return {key: sorted(set(pool))[:AUTHORS_PER_TOPIC] for key, pool in pools.items()}


def _references(
    rng: np.random.Generator,
    draft: dict[str, Any],
    earlier: list[dict[str, Any]],
    cited: dict[str, int],
) -> list[str]:
    """Earlier papers this one cites: mostly its own topic, popular ones more often."""
    pool = [p for p in earlier if p["year"] < draft["year"]]
    if not pool:
        return []
    same = [p for p in pool if p["topic"] == draft["topic"]]
    other = [p for p in pool if p["topic"] != draft["topic"]]
    chosen: list[str] = []
    for group, count in ((same, int(rng.integers(3, 9))), (other, int(rng.integers(0, 3)))):
        if not group:
            continue
        weights = np.array([1.0 + cited.get(p["paper_id"], 0) for p in group])
        k = min(count, len(group))
        picks = rng.choice(len(group), size=k, replace=False, p=weights / weights.sum())
        chosen += [group[int(i)]["paper_id"] for i in picks]
    for paper_id in chosen:
        cited[paper_id] = cited.get(paper_id, 0) + 1
    return sorted(chosen)


def _pick(rng: np.random.Generator, items: tuple[str, ...] | list[str]) -> str:
    return items[int(rng.integers(len(items)))]


def _write_paper(
    rng: np.random.Generator,
    draft: dict[str, Any],
    topic: Topic,
    authors: list[str],
    references: list[str],
    earlier: list[dict[str, Any]],
) -> dict[str, Any]:
    method = draft["method"]
    problem = _pick(rng, topic.problems)
    mechanism = _pick(rng, topic.mechanisms)
    challenge = _pick(rng, topic.challenges)
    finding = _pick(rng, topic.findings)
    names = [d[0] for d in topic.datasets]
    used = [names[int(i)] for i in rng.choice(len(names), int(rng.integers(1, 3)), replace=False)]
    metric = _pick(rng, topic.metrics)
    gain = round(float(rng.uniform(1.5, 14.0)), 1)
    by_id = {p["paper_id"]: p for p in earlier}
    baselines = [by_id[r]["method"] for r in references if by_id[r]["topic"] == topic.key]
    compared = f"over {_pick(rng, baselines)}" if baselines else "over strong baselines"
    title = _pick(
        rng,
        [
            f"{method}: a model that {mechanism} for {problem}",
            f"{method} for {problem}",
            f"Revisiting {problem} with {method}",
            f"Towards reliable {problem}: {method}",
        ],
    )
    abstract = " ".join(
        [
            f"{problem[0].upper()}{problem[1:]} remains difficult because {challenge}.",
            f"We introduce {method}, a method that {mechanism}.",
            f"On {' and '.join(used)}, {method} improves {metric} by {gain}% {compared}.",
            f"Our analysis shows that {finding}.",
        ]
    )
    count = int(rng.integers(2, 6))
    team = [authors[int(i)] for i in rng.choice(len(authors), count, replace=False)]
    keywords = sorted({_pick(rng, topic.keywords) for _ in range(4)} | {topic.name})
    return {
        "paper_id": draft["paper_id"],
        "title": title,
        "authors": team,
        "year": draft["year"],
        "venue": _pick(rng, topic.venues),
        "topic": topic.key,
        "keywords": keywords,
        "method": method,
        "datasets": used,
        "abstract": abstract,
        "references": references,
    }


def to_json(corpus: dict[str, Any]) -> str:
    """The corpus as stable JSON text (one paper per line for readable diffs)."""
    head = {k: v for k, v in corpus.items() if k != "papers"}
    lines = [json.dumps(head, sort_keys=True)[:-1] + ', "papers": [']
    papers = [json.dumps(p, sort_keys=True) for p in corpus["papers"]]
    lines += [p + ("," if i < len(papers) - 1 else "") for i, p in enumerate(papers)]
    lines.append("]}")
    return "\n".join(lines) + "\n"


def write(path: Path | None = None, seed: int = SEED) -> Path:
    """Generate the corpus and write it to ``path`` (default :data:`OUTPUT`)."""
    target = path or OUTPUT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(to_json(generate_corpus(seed)), encoding="utf-8")
    return target
