"""Convert MARBLE bargaining records into Bargaining tasks.

A MARBLE bargaining record introduces one product and four agents: two sellers
(``agent1``, ``agent2``) and two buyers (``agent3``, ``agent4``), each with a long
free-text negotiation strategy as profile. Prices exist only in that free text, so they
are parsed (the patterns of the MARBLE reference):

- the product name and its list price from the task text (when it states one);
- a seller's target price ("target price of $16.98", "premium pricing of 28.99", "a
  price point of 18.34", ...) and the largest discount it offers ("a 15% discount");
  its floor is the target less that discount;
- a buyer's budget: the first number within 40 characters after a "budget".

A missing value gives a warning naming the record and agent and what follows from it
(the list price falls back to the highest seller target or budget; a seller without a
target price is held to no floor). The task puts all four agents at one table in graph
mode — sellers hold the ``seller_*`` tools, buyers the ``buyer_*`` tools, so both teams
are agents and turns alternate — and the parsed limits become the criteria: the deal
price within each side's limit (:func:`side_limits`: the sellers' lowest floor, the
buyers' highest budget) and no disclosure of a side's limits to the other; plus a deal
being reached (MARBLE's ``agreement_reached``). Profiles keep their text: each agent's
private instructions are its own. For an import, :func:`reference_path` gives the oracle a
deal within both limits, and a record whose limits leave no such deal is declined.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.build.marble import MarbleRecord, RecordSkipped, agents_of, clean_text, graph_edges

NUMBER = r"(\d[\d,]*(?:\.\d+)?)"
PRODUCT_PATTERNS = (
    r'negotiation (?:table|scenario|session)?\s*for (?:the |a |an )?"?(.+?)"?\s*(?:!|\.\s|\.$|\?)',
    r"(?:the purchase of|product at hand is|with these) (?:the )?(?:stunning |perfect )?(.+?)"
    r"(?:\.\s|!|\.$)",
    r"(?:buyers|sellers)[^.]{0,60}? in the (.+?)(?:\.\s|!|\.$)",
)
LIST_PRICE_PATTERNS = (
    r"(?:priced at|price of|marked at|listed at|costs?|retails? (?:for|at)|price tag of|"
    r"price point of|pricing of)\s*(?:just |only )?(?:USD\s?)?\$?\s?" + NUMBER,
    r"\$\s?" + NUMBER,
    NUMBER + r"\s?(?:USD|dollars)",
)
NOT_PERCENT = r"(?!\d|\s?%)"
TARGET_PATTERNS = (
    r"target (?:selling )?price[^\d$%]{0,30}?\$?\s?" + NUMBER + NOT_PERCENT,
    r"\$?" + NUMBER + r"\s+target price",
    r"(?:premium )?pric(?:ing|e point|e tag|e) (?:of|at)\s*\$?\s?" + NUMBER + NOT_PERCENT,
    r"target of \$?\s?" + NUMBER + NOT_PERCENT,
)
DISCOUNT_PATTERNS = (
    r"(\d+(?:\.\d+)?)\s?%\s*(?:\w+\s){0,3}?discount",
    r"discount[^%.]{0,40}?(\d+(?:\.\d+)?)\s?%",
)
MAX_OFFERS = 12
MAX_ITERATIONS = 40
SIDE_TOOLS = {
    "seller": ["view_negotiation", "seller_offer", "seller_accept", "seller_walk_away"],
    "buyer": ["view_negotiation", "buyer_offer", "buyer_accept", "buyer_walk_away"],
}


def _first_number(patterns: tuple[str, ...], text: str) -> float | None:
    for pattern in patterns:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return float(match.group(1).replace(",", ""))
    return None


def parse_product(content: str) -> str | None:
    """The product name in a bargaining task text, or None."""
    for pattern in PRODUCT_PATTERNS:
        match = re.search(pattern, content)
        name = re.split(r",\s+(?=[a-z])", match.group(1))[0].strip().strip('"') if match else ""
        if 3 <= len(name) <= 200:
            return re.sub(r"^product\s+", "", name)
    return None


def parse_list_price(content: str) -> float | None:
    """The product's price as the task text states it, or None."""
    return _first_number(LIST_PRICE_PATTERNS, content)


def parse_target_price(profile: str) -> float | None:
    """A seller's target price from its strategy text, or None."""
    return _first_number(TARGET_PATTERNS, profile)


def parse_discount(profile: str) -> float | None:
    """A seller's largest discount as a fraction (0.15 for "15%"), or None."""
    value = _first_number(DISCOUNT_PATTERNS, profile)
    return None if value is None else value / 100


def parse_budget(profile: str) -> float | None:
    """A buyer's budget: the first number within 40 characters after "budget", or None."""
    for match in re.finditer(r"budget", profile, re.IGNORECASE):
        number = re.search(NUMBER, profile[match.end() : match.end() + 40])
        if number:
            return float(number.group(1).replace(",", ""))
    return None


def side_limits(sides: dict[str, str], limits: dict[str, float]) -> dict[str, float]:
    """Each side's limit: the sellers' lowest floor, the buyers' highest budget.

    The agents of a side act as one party at the table, so a deal is within the side's
    limit when its most flexible member could accept it. A side without a parsed limit
    has none.
    """
    found = {}
    for side, pick in (("seller", min), ("buyer", max)):
        values = [v for agent, v in limits.items() if sides[agent] == side]
        if values:
            found[side] = pick(values)
    return found


def convert(record: MarbleRecord, pattern: str) -> tuple[dict[str, Any], list[str]]:
    """The task (raw scenario data) for one bargaining record, and its warnings."""
    task = record.data["task"]
    if not isinstance(task, dict) or not isinstance(task.get("content"), str):
        raise RecordSkipped("task.content is missing")
    content = clean_text(task["content"])
    agents = agents_of(record)
    warnings: list[str] = []
    sides: dict[str, str] = {}
    limits: dict[str, float] = {}
    for spec in agents:
        side = spec.get("role")
        if side not in SIDE_TOOLS:
            raise RecordSkipped(f"{spec['agent_id']}: role {side!r} is neither seller nor buyer")
        sides[spec["agent_id"]] = side
        profile = spec["profile"]
        if side == "buyer":
            budget = parse_budget(profile)
            if budget is None:
                warnings.append(f"{spec['agent_id']} (buyer): no budget in the profile; its "
                                "price limit is not checked")  # fmt: skip
            else:
                limits[spec["agent_id"]] = budget
            continue
        target, discount = parse_target_price(profile), parse_discount(profile)
        if target is None:
            warnings.append(f"{spec['agent_id']} (seller): no target price in the profile; its "
                            "floor is not checked")  # fmt: skip
        elif discount is None:
            warnings.append(f"{spec['agent_id']} (seller): no discount in the profile; its "
                            "floor is its target price")  # fmt: skip
            limits[spec["agent_id"]] = target
        else:
            limits[spec["agent_id"]] = round(target * (1 - discount), 2)
    if set(sides.values()) != {"seller", "buyer"}:
        raise RecordSkipped("the record needs at least one seller and one buyer")
    product = parse_product(content)
    if product is None:
        warnings.append("no product name in the task text; it is called 'the product'")
        product = "the product"
    list_price = parse_list_price(content)
    if list_price is None:
        fallback = [limits[a] for a in limits if sides[a] == "seller"] or list(limits.values())
        if not fallback:
            raise RecordSkipped("no list price in the task text and no price in any profile")
        list_price = max(parse_target_price(s["profile"]) or 0 for s in agents) or max(fallback)
        warnings.append(
            f"no list price in the task text; the highest price in the profiles "
            f"({list_price:g}) is used"
        )
    assertions: list[dict[str, Any]] = [
        {"func_name": "assert_deal", "message": "a deal is reached"}
    ]
    for side, limit in side_limits(sides, limits).items():
        what = "highest budget" if side == "buyer" else "lowest floor"
        assertions.append(
            {
                "func_name": "assert_deal_price",
                "arguments": {"party": side, "limit": limit},
                "message": f"the price respects the {side}s' {what} ({limit:g})",
            }
        )
    for side in ("seller", "buyer"):
        values = sorted({v for a, v in limits.items() if sides[a] == side})
        if values:
            assertions.append(
                {
                    "func_name": "assert_no_disclosure",
                    "arguments": {"party": side, "values": values},
                    "message": f"no {side}'s limit is disclosed to the other side",
                }
            )
    sellers = ", ".join(a for a in sides if sides[a] == "seller")
    buyers = ", ".join(a for a in sides if sides[a] == "buyer")
    text = (
        f"{content}\n\nOn this table sellers ({sellers}) and buyers ({buyers}) make alternating "
        "offers; accepting the other side's open offer closes the deal, and either side may "
        "walk away from it with a reason."
    )
    return {
        "task_id": f"bargaining_{pattern}_{record.task_id:03d}",
        "source_task_id": f"marble/bargaining/{record.task_id}",
        "adaptation_pattern": pattern,
        "coordination_mode": "graph",
        "task": text,
        "relationships": graph_edges(record),
        "environment": {
            "max_iterations": MAX_ITERATIONS,
            "initialization_data": {
                "agent_data": {
                    "product": {"name": product, "description": "", "list_price": list_price},
                    "max_offers": MAX_OFFERS,
                    "first_mover": "seller",
                }
            },
        },
        "agents": [
            {
                "agent_id": spec["agent_id"],
                "type": spec.get("type") or "BaseAgent",
                "role": sides[spec["agent_id"]],
                "profile": clean_text(spec["profile"]),
                "tools": SIDE_TOOLS[sides[spec["agent_id"]]],
            }
            for spec in agents
        ],
        "evaluation_criteria": {"env_assertions": assertions, "reward_basis": ["ENV_ASSERTION"]},
        "metadata": {
            "source": "MultiAgentBench bargaining",
            "marble_task_id": record.task_id,
            "product": product,
            "list_price": list_price,
            "limits": limits,
            "pattern_provisional": True,
        },
    }, warnings


def reference_path(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """A deal both sides' limits allow, for a converted record: the oracle's path.

    The first seller offers the middle of the zone between the sides' limits
    (:func:`side_limits`; the limit of the other side, or the list price, where a side has
    none), on standard terms, and the first buyer accepts it.

    Raises:
        RecordSkipped: no price meets every limit (a floor above a budget), so no deal
            could satisfy the record's criteria.
    """
    roles = {a["agent_id"]: a["role"] for a in raw["agents"]}
    limits = side_limits(roles, raw["metadata"]["limits"])
    low, high = limits.get("seller"), limits.get("buyer")
    if low is not None and high is not None and low > high:
        raise RecordSkipped(
            f"infeasible: the sellers' lowest floor ({low:g}) is above the buyers' highest "
            f"budget ({high:g}), so no deal meets the limits the criteria check"
        )
    list_price = float(raw["metadata"]["list_price"])
    ends = [v for v in (low, high) if v is not None] or [list_price]
    price = round(sum(ends) / len(ends), 2) if len(ends) == 2 else ends[0]
    seller = next(a for a, role in roles.items() if role == "seller")
    buyer = next(a for a, role in roles.items() if role == "buyer")
    terms = {"delivery": "standard", "warranty_months": 12}
    return [
        {
            "action_id": "offer",
            "requestor": seller,
            "name": "seller_offer",
            "arguments": {"price": price, **terms},
            "info": "reference path: an offer within every parsed floor and budget",
        },
        {
            "action_id": "accept",
            "requestor": buyer,
            "name": "buyer_accept",
            "arguments": {"offer_id": "O1"},
            "info": "reference path: the buyers accept it",
        },
    ]
