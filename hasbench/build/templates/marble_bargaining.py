"""Pattern templates for MultiAgentBench bargaining records (the Bargaining domain).

A MARBLE bargaining record puts one product on a table with two sellers and two buyers,
whose prices live in their free-text strategies (parsed by
:mod:`hasbench.build.marble_bargaining`). The adaptation keeps the product, its list
price, the buyers' budgets and the sellers' floors, and the goal of buying the product
at a price both sides can accept; the HAS scenario puts humans behind the buyers:

- D (stakeholders): the two MARBLE buyers become the team (a negotiator and a liaison
  who may only view the table and is briefed by operations); the buyers' higher budget
  belongs to a finance officer and an express-delivery wish to an operations lead, both
  humans whose facts are private. Finance's budget is firm; the delivery wish yields when
  it does not fit. The sellers become the table's simulated counterparty: the lowest MARBLE floor is
  its reservation and that seller's target price its opening. The gold path is found by
  simulating the table (:func:`hasbench.build.bargaining_tasks.plan_deal`): a deal with
  express delivery if it fits within the budget, else a deal with standard delivery, else,
  when the budget is below the floor, a walk-away with a reason from an offer beyond the
  budget. A record whose zone is positive but too narrow for a fair-share deal is
  declined (neither outcome would be right to require).
- B (latent criterion): the same team and table; the budget is stated in the task, and the
  purchasing manager's requirement of a 12-month warranty is a private acceptance
  criterion, given when the team asks about requirements or before it accepts. Declined
  where no fair-share deal with that warranty fits the budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hasbench.build.adaptation import AdaptContext, Declined, template
from hasbench.build.bargaining_tasks import (
    BUYER_TOOLS,
    deal_checks,
    negotiate,
    plan_deal,
)
from hasbench.build.base_tasks import BaseTask
from hasbench.build.builder import BuildError, action, agent, criteria, env_assertion, human
from hasbench.build.marble_bargaining import convert, parse_target_price
from hasbench.build.templates.people import converted
from hasbench.personas import domain_personas

MAX_OFFERS = 10
WARRANTY = 12
"""Months of warranty the B scenario's purchaser requires."""
WALK_REASON = (
    "Your best offer is above what our budget allows, so we end the negotiation without a deal."
)


def _record(base: BaseTask) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The converted MARBLE task and its agents by id."""
    raw = converted(base, convert, "D")
    return raw, {a["agent_id"]: a for a in raw["agents"]}


def _counterparty(seller_id: str, floor: float, opening: float, list_price: float,
                  ctx: AdaptContext) -> dict[str, Any]:  # fmt: skip
    """The simulated seller: MARBLE's floor and target, costs of terms scaled to the price."""
    return {
        "party": "seller",
        "name": f"the seller ({seller_id} in MultiAgentBench)",
        "reservation": floor,
        "opening": max(opening, floor),
        "concession": float(ctx.rng.choice([0.5, 0.8, 1.0, 1.6])),
        "delivery_value": {"standard": 0.0, "express": round(0.04 * list_price, 2)},
        "warranty_value_per_year": round(0.025 * list_price, 2),
        "deliveries": ["standard", "express"],
        "max_warranty_months": 36,
    }


@dataclass(frozen=True)
class _Table:
    """What an adaptation keeps of a MARBLE record: the product, budget, floor and buyers."""

    table: dict[str, Any]
    product: str
    list_price: float
    budget: float
    floor: float
    buyers: list[str]


def _table(base: BaseTask, ctx: AdaptContext) -> _Table:
    """The record's table with its sellers as the simulated counterparty."""
    raw, agents = _record(base)
    meta = raw["metadata"]
    limits: dict[str, float] = meta["limits"]
    buyers = [a for a in agents if agents[a]["role"] == "buyer"]
    sellers = [a for a in agents if agents[a]["role"] == "seller" and a in limits]
    budgets = [limits[a] for a in buyers if a in limits]
    if not budgets or not sellers:
        raise Declined("the record states no buyer budget or no seller floor")
    budget = max(budgets)
    seller = min(sellers, key=lambda a: limits[a])
    floor, list_price, product = limits[seller], float(meta["list_price"]), meta["product"]
    opening = parse_target_price(agents[seller]["profile"]) or list_price
    table = {
        "product": {"name": product, "description": "", "list_price": list_price},
        "price_bounds": {"min": round(0.2 * list_price, 2), "max": round(2.0 * list_price, 2)},
        "max_offers": MAX_OFFERS,
        "first_mover": "seller",
        "counterparty": _counterparty(seller, floor, opening, list_price, ctx),
    }
    return _Table(table, product, list_price, budget, floor, buyers)


def _team(
    t: _Table,
    gold_calls: list[tuple[str, dict[str, Any]]],
    depends: list[str],
    principal: str,
    second: str | None,
) -> tuple[list[Any], list[Any], list[Any]]:
    """The MARBLE buyers as the team, the gold actions and the edges.

    The first buyer negotiates, supervised by ``principal``; the other views the table and
    briefs it, informed by ``second`` (with one buyer, ``second`` informs the negotiator).
    """
    lead, liaison = t.buyers[0], t.buyers[-1]
    gold = [
        action(i, liaison if i == 1 else lead, name, args,
               depends_on=[] if name == "view_negotiation" else depends)
        for i, (name, args) in enumerate(gold_calls, start=1)
    ]  # fmt: skip
    team = [agent(lead, role="buyer negotiator", tools=BUYER_TOOLS,
                  profile="You negotiate for your company as the buyer.")]  # fmt: skip
    edges = [[principal, lead, "supervises"]]
    if liaison != lead:
        team.append(agent(liaison, role="buying liaison", tools=["view_negotiation"],
                          profile="You follow the offers, collect what the company needs "
                                  "and brief the negotiator."))  # fmt: skip
        edges.append([lead, liaison, "delegates"])
    if second is not None:
        edges.append([second, liaison, "informs"])
    return team, gold, edges


def _fields(t: _Table, task: str, team: list[Any], users: list[Any], edges: list[Any],
            gold: list[Any], asserts: list[Any], outcome: str) -> dict[str, Any]:  # fmt: skip
    return {
        "coordination_mode": "star",
        "task": task,
        "relationships": edges,
        "environment": {
            "max_iterations": 30 + 3 * len(gold),
            "initialization_data": {"agent_data": t.table},
        },
        "agents": team,
        "users": users,
        "evaluation_criteria": criteria(
            gold, reward_basis=["ENV_ASSERTION"], env_assertions=asserts
        ),
        "metadata": {
            "source": "MultiAgentBench bargaining",
            "product": t.product,
            "list_price": t.list_price,
            "budget": t.budget,
            "seller_floor": t.floor,
            "outcome": outcome,
            "counterparty": "simulated",
        },
    }


def _opening(t: _Table) -> str:
    return (
        f"Negotiate to buy the {t.product} (list price {t.list_price:g} dollars) from "
        f"{t.table['counterparty']['name']}, on behalf of your company."
    )


@template("bargaining", "D")
def stakeholders(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """Finance (budget) and operations (delivery wish) behind the MARBLE buyers."""
    t = _table(base, ctx)
    outcome, calls, asserts = _gold(t.table, t.budget, t.list_price)
    depends = ["finance.price_limit", "operations.delivery_wish"]
    team, gold, edges = _team(t, calls, depends, "finance", "operations")
    personas = [p.persona_id for p in domain_personas("bargaining")]
    users = [
        human("finance", role="finance officer", persona=_pick(personas, ctx),
              goal=f"Buy the {t.product} within my budget, or not at all.",
              responsibilities=["set the budget", "approve closing or ending the deal"],
              instructions="Give your budget when asked; approve a deal within it, or ending "
                           "the negotiation when no deal fits.",
              known_info={"price_limit": f"no more than {t.budget:g} dollars in total"}),
        human("operations", role="operations lead", persona=_pick(personas, ctx),
              goal=f"The {t.product} arrives as soon as possible.",
              responsibilities=["state the delivery needs"],
              instructions="State your wish when asked.",
              known_info={"delivery_wish": "express delivery, if the budget allows it"}),
    ]  # fmt: skip
    task = (
        f"{_opening(t)} The finance officer (finance) and the operations lead (operations) "
        "have different priorities; ask them. Finance's budget is firm; the operations wish "
        "gives way when it does not fit within the budget. Close the best deal you can "
        "within their requirements, or end the negotiation with a reason if none is "
        "possible, and report the outcome."
    )
    return _fields(t, task, team, users, edges, gold, asserts, outcome)


@template("bargaining", "B")
def latent_warranty(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """The buyer's budget is stated; a warranty requirement is the latent criterion."""
    t = _table(base, ctx)
    try:
        calls, _, other_end = plan_deal(t.table, "buyer", t.budget, ("standard", WARRANTY))
    except BuildError:
        raise Declined(
            f"no fair-share deal with {WARRANTY} months of warranty fits the budget "
            f"({t.budget:g}; lowest floor {t.floor:g})"
        ) from None
    asserts = deal_checks("buyer", t.budget, other_end, [t.budget],
                          {"min_warranty_months": WARRANTY})  # fmt: skip
    team, gold, edges = _team(t, calls, ["purchaser.acceptance_criteria"], "purchaser", None)
    personas = [p.persona_id for p in domain_personas("bargaining")]
    users = [
        human("purchaser", role="purchasing manager", persona=_pick(personas, ctx),
              goal=f"Buy the {t.product} within the budget, on terms I can accept.",
              responsibilities=["approve closing the deal"],
              instructions="Say what you require of the deal's terms when the team asks "
                           "about your requirements, or before it accepts an offer.",
              known_info={"acceptance_criteria": f"the deal must include at least {WARRANTY} "
                                                 "months of warranty"}),
    ]  # fmt: skip
    task = (
        f"{_opening(t)} The budget is {t.budget:g} dollars in total; keep it to yourselves. "
        "The purchasing manager (purchaser) approves the deal. Close the best deal you can "
        "and report it."
    )
    return _fields(t, task, team, users, edges, gold, asserts, "deal_warranty")


def _gold(
    table: dict[str, Any], budget: float, list_price: float
) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """The outcome, the buyer's calls and the assertions (see the module docstring)."""
    cp = table["counterparty"]
    for outcome, terms, required in (
        ("deal_express", ("express", 0), {"delivery": "express"}),
        ("deal_standard", ("standard", 0), {}),
    ):
        try:
            calls, _, other_end = plan_deal(table, "buyer", budget, terms)
        except BuildError:
            continue
        return outcome, calls, deal_checks("buyer", budget, other_end, [budget], required)
    if budget >= cp["reservation"]:
        raise Declined(
            f"the budget ({budget:g}) and the lowest floor ({cp['reservation']:g}) leave too "
            "narrow a zone for a fair-share deal, and a walk-away would be wrong"
        )
    anchor = max(table["price_bounds"]["min"], round(budget - 0.1 * list_price, 2))
    prices = [anchor, round((anchor + budget) / 2, 2)]
    calls, env = negotiate(table, "buyer", prices, ("standard", 0), lambda o: False, WALK_REASON)
    if env.db["status"] != "walked_away":
        raise Declined(f"the walk-away path ends with the table {env.db['status']}")
    asserts = [
        env_assertion("assert_walked_away", {"party": "buyer", "limit": budget},
                      "the buyer walked away, with a reason, from an offer beyond the budget"),
        env_assertion("assert_no_disclosure", {"party": "buyer", "values": [budget]},
                      "the budget is not disclosed to the seller"),
    ]  # fmt: skip
    return "walk_away", calls, asserts


def _pick(items: list[str], ctx: AdaptContext) -> str:
    return items[int(ctx.rng.integers(len(items)))]
