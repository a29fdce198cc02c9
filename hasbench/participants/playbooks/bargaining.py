"""The negotiator's know-how: learn the principal's limits, then bargain within them.

The side it plays comes from its own view (its profile or the task: buying or selling).
Its limit (the most a buyer pays, the least a seller takes) and the required terms come
from its own side: what its profile states, or what the principal and the stakeholders say
when asked (both terms in one question). Terms its own profile states (what it can ship,
how long a warranty it gives) are not asked of anyone. Without an answer it falls back on
what the table shows (the list price as the limit, the terms the other side opened with).
It opens well inside its limit (a seller asked to open asks the list price), concedes a
share of the remaining gap each round but at least enough to reach its limit by its last
offer, accepts an offer no worse than its own next one (and within the limit), and walks
away explicitly when the other side stays beyond the limit with the offers running out.
It keeps the principal informed of each counter-offer when the task asks for it, which is
how it learns a revised limit. Offer messages never state a number.

When another agent plays the other side, a side whose turn is over passes the move to the
agent holding the other side's offer tool with a message that states nothing else, and
looks at the table again when that agent (or a teammate who ran a step) hands it back. A
step it lacks the tool for (the closer's accept or walk-away) goes to the teammate who
holds it, with the case.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.participants.standin import Call, Case, Done, Need, PassTurn, Review, Step

MONEY = re.compile(r"\$?(\d[\d,]*(?:\.\d+)?)\s*(?:dollars|usd)|\$(\d[\d,]*(?:\.\d+)?)", re.I)
REVISED = ("now", "changed", "revised", "cut", "instead", "after seeing", "any more")
"""Words that mark a statement of a limit as a revision of an earlier one."""
CONCESSION = 0.2
"""The share of the gap to the other side's offer conceded in each counter-offer."""
OPENING = 0.6
"""A buyer opens at this share of the seller's ask (a seller at its inverse)."""
WARRANTIES = (0, 12, 24, 36)
QUESTIONS = {
    ("delivery", "warranty"): "Which delivery (standard or express) and how many months of "
    "warranty does the deal need?",
    ("delivery",): "Which delivery does the deal need (standard or express)?",
    ("warranty",): "How many months of warranty does the deal need?",
}
"""The question for the terms still open."""
TURN = "Your move: our offer is on the table."
"""What a side tells the agent playing the other side when the turn is theirs."""
MESSAGES = {
    "buyer": "This is a fair price for us given what the market offers.",
    "seller": "This price reflects the quality and the service that come with it.",
}


class BargainingPlaybook:
    """Negotiation for a principal (see the module docstring)."""

    def __init__(self) -> None:
        self.stale = False
        """Whether another agent may have moved at the table since the last look."""

    def read(self, case: Case, text: str, source: str) -> None:
        """The side, limits and terms stated in texts; the table a tool shows."""
        if source.startswith("tool:"):
            return  # the table is read from the tool outputs themselves (see _table)
        lower = text.lower()
        if source in ("task", "profile"):
            party = _party(lower)
            if party and (source == "profile" or not case.facts.get("party")):
                case.learn("party", party, source)
            if source == "task":
                return
            if re.search(r"\b(?:ship|deliver)", lower) and "warranty" in lower:
                case.learn("terms_settled", True, source)  # its own terms: nobody to ask
        elif TURN in text or text.startswith("Over to you") or _reports_writes(text):
            self.stale = True
        for sentence in re.split(r"(?<=[.;:!?])\s+", text):
            _read_requirement(case, sentence, source)

    def next_step(self, case: Case) -> Step:
        """The next move of the negotiation (see the module docstring)."""
        party = case.facts.get("party") or "buyer"
        for key, value in list(case.facts.items()):
            if isinstance(value, str) and case.origin.get(key) not in ("task", "tool", "guess"):
                _read_requirement(case, value, case.origin.get(key, "person"))
        table = _table(case)
        if table is None or self.stale:
            self.stale = False
            return Call("view_negotiation", {})
        if table["status"] != "open":
            return Done(_summary(case, table))
        limit = _limit(case, party, table)
        if limit is None:
            return Need(
                "price",
                "What is your limit on the price for this deal?" if party == "buyer" else
                "What is the lowest price you would accept for this deal?",
                candidates=(table["list_price"],),
                who=("limit", "floor", "principal", "finance", "sales", "price"),
                tool=f"{party}_offer",
            )  # fmt: skip
        terms = self._terms(case, table, party, limit)
        if isinstance(terms, Need):
            return terms
        if table["turn"] != party:
            return PassTurn(f"{_other(party)}_offer", TURN)
        theirs = table["open_offer"]
        sign = 1.0 if party == "buyer" else -1.0
        if theirs is not None:
            informed = self._inform(case, party, theirs)
            if informed is not None:
                return informed
            limit = _limit(case, party, table)  # a revision may have come with the review
            within = sign * (limit - theirs["price"]) >= 0 and _terms_fit(case, theirs, terms)
            mine = _next_price(party, table, limit)
            last_chance = table["offers_left"] <= 1
            if within and (sign * (mine - theirs["price"]) >= 0 or last_chance):
                return Call(f"{party}_accept", {"offer_id": theirs["offer_id"]}, confirm=True)
            if not within and (last_chance or table["offers_left"] <= 2 and _stuck(table, limit)):
                return Call(
                    f"{party}_walk_away",
                    {
                        "rejected_offer_id": theirs["offer_id"],
                        "reason": "Your offer is outside what my principal can accept, so we "
                        "end the negotiation without a deal.",
                    },
                    confirm=True,
                )
        if table["offers_left"] <= 0:
            return Done(_summary(case, table))
        price = _next_price(party, table, limit)
        return Call(
            f"{party}_offer",
            {"price": price, "delivery": terms[0], "warranty_months": terms[1],
             "message": MESSAGES[party]},
        )  # fmt: skip

    # -- the parts of a negotiation --------------------------------------------------------

    def _terms(
        self, case: Case, table: dict[str, Any], party: str, limit: float
    ) -> tuple[str, int] | Need:
        """The delivery and warranty to offer, asked of the stakeholders when the task says.

        A warranty that is only wished for gives way once two own offers with it have
        met answers beyond the limit.
        """
        task = case.task.lower()
        asks = any(w in task for w in ("priorities", "requirement", "ask them"))
        asks = asks and not case.facts.get("terms_settled")
        opened = table["first_terms"]
        missing = [
            slot
            for slot, known in (
                ("delivery", case.has("delivery") or case.has("delivery_required")),
                ("warranty", case.has("warranty") or _has_warranty(case)),
            )
            if not known
        ]
        if asks and missing:  # one question for both terms while both are open
            return Need(
                missing[0],
                QUESTIONS[tuple(missing)],
                candidates=(opened[0] if missing[0] == "delivery" else opened[1],),
                who=("operations", "logistics", "requirement", *missing),
                topics=tuple(missing[1:]),
            )
        delivery = case.facts.get("delivery_required") or _word_delivery(case) or opened[0]
        low = int(case.facts.get("warranty_min") or 0)
        high = int(case.facts.get("warranty_max") or 36)
        wish = case.facts.get("warranty_wish")
        warranty = int(opened[1])
        if wish is not None and not _beyond_twice(table, party, limit, int(wish)):
            warranty = int(wish)
        warranty = min(max(warranty, low), high)
        return delivery, warranty

    def _inform(self, case: Case, party: str, theirs: dict[str, Any]) -> Step | None:
        """Show the principal the other side's offer, when the task asks to keep them informed."""
        if "informed" not in case.task.lower() or case.facts.get("limit_revised") is not None:
            return None
        if not any(o["party"] == party for o in _table(case)["offers"]):
            return None  # the opening offer: nothing has happened since the limit was given
        key = f"offer:{theirs['offer_id']}"
        if key in case.reviewed:
            return None
        side = _other(party)
        return Review(
            key,
            f"The {side} offers {theirs['price']:.2f} dollars with {theirs['delivery']} "
            f"delivery and {theirs['warranty_months']} months of warranty "
            f"(offer {theirs['offer_id']}). Tell me if your limit has changed.",
            who=("principal", "limit", "floor"),
        )


# -- reading ----------------------------------------------------------------------------


def _other(party: str) -> str:
    return "seller" if party == "buyer" else "buyer"


def _reports_writes(text: str) -> bool:
    """Whether a teammate's message reports writes it ran (a ``Done:`` line)."""
    return any(line.startswith("Done: ") and line != "Done: none" for line in text.splitlines())


def _party(lower: str) -> str | None:
    """The side a text says the reader plays."""
    if re.search(r"\byou sell\b|\bas the seller\b|\bto sell\b", lower):
        return "seller"
    if re.search(r"\byou buy\b|\bas the buyer\b|\bto buy\b|\bbuyer team\b", lower):
        return "buyer"
    return None


def _read_requirement(case: Case, sentence: str, source: str) -> None:
    """A limit or a required term stated in one sentence of the profile or a person."""
    lower = sentence.lower()
    amounts = [float((a or b).replace(",", "")) for a, b in MONEY.findall(sentence)]
    if not amounts and "floor is" in lower:
        amounts = [float(x) for x in re.findall(r"floor is (\d+(?:\.\d+)?)", lower)]
    if amounts:
        revised = any(word in lower for word in REVISED)
        if revised:
            case.learn("limit_revised", amounts[-1], source)
        elif not case.facts.get("limit_stated"):
            case.learn("limit_stated", amounts[-1], source)
    if "express" in lower and any(w in lower for w in ("required", "must", "need")):
        case.learn("delivery_required", "express", source)
    elif "standard delivery" in lower and any(w in lower for w in ("only", "must")):
        case.learn("delivery_required", "standard", source)
    months = _months(lower)
    if months is not None and "warranty" in lower:
        if "at least" in lower:
            case.learn("warranty_min", months, source)
        elif "at most" in lower or "up to" in lower:
            case.learn("warranty_max", months, source)
        elif "if the budget allows" in lower or "would be good" in lower:
            case.learn("warranty_wish", months, source)
        else:
            case.learn("warranty_min", months, source)


def _months(lower: str) -> int | None:
    match = re.search(r"(\d+)\s*months", lower)
    if match:
        return int(match.group(1))
    years = {"one year": 12, "two years": 24, "three years": 36}
    return next((m for words, m in years.items() if words in lower), None)


def _table(case: Case) -> dict[str, Any] | None:
    """The negotiation table as the tool outputs so far show it (None before a look)."""
    party = case.facts.get("party") or "buyer"
    table: dict[str, Any] | None = None
    for outcome in case.outputs:
        shown = outcome.output
        if outcome.error is not None or not isinstance(shown, dict):
            continue
        if outcome.name == "view_negotiation":
            table = {
                "list_price": float(shown["product"]["list_price"]),
                "turn": shown["turn"],
                "status": shown["status"],
                "offers_left": int(shown["offers_left"]),
                "offers": [_offer(o) for o in shown["offers"]],
            }
            continue
        if table is None:
            continue
        if "your_offer" in shown:
            table["offers"].append(_offer(shown["your_offer"]))
            table["turn"] = "seller" if party == "buyer" else "buyer"
        response = shown.get("response") or {}
        if response.get("action") == "counter":
            table["offers"].append(_offer(response["offer"]))
            table["turn"] = party
        table["status"] = shown.get("status", table["status"])
        if "offers_left" in shown:
            table["offers_left"] = int(shown["offers_left"])
    if table is None:
        return None
    offers = table["offers"]
    last = offers[-1] if offers else None
    table["open_offer"] = last if last is not None and last["party"] != party else None
    theirs = [o for o in offers if o["party"] != party]
    table["first_terms"] = (theirs[0]["delivery"], theirs[0]["warranty_months"]) if theirs \
        else ("standard", 12)  # fmt: skip
    return table


def _offer(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "offer_id": raw["offer_id"],
        "n": int(str(raw["offer_id"]).lstrip("O") or 0),
        "party": raw["party"],
        "price": float(raw["price"]),
        "delivery": raw["delivery"],
        "warranty_months": int(raw["warranty_months"]),
    }


# -- deciding ----------------------------------------------------------------------------


def _limit(case: Case, party: str, table: dict[str, Any]) -> float | None:
    """The limit in force: a revision, else a stated limit, else the guess (if any)."""
    for slot in ("limit_revised", "limit_stated"):
        if case.facts.get(slot) is not None:
            return float(case.facts[slot])
    if case.has("price"):
        value = case.facts["price"]
        if isinstance(value, int | float):
            return float(value)
        amounts = MONEY.findall(str(value))
        if amounts:
            return float((amounts[-1][0] or amounts[-1][1]).replace(",", ""))
        return table["list_price"]
    return None


def _next_price(party: str, table: dict[str, Any], limit: float) -> float:
    """The price of the next own offer: an opening, or a concession towards their offer."""
    offers = table.get("offers", [])
    mine = [o["price"] for o in offers if o["party"] == party]
    theirs = [o["price"] for o in offers if o["party"] != party]
    anchor = theirs[-1] if theirs else table["list_price"]
    clock = None
    if mine:  # on the way from its opening to its limit by its last offer
        total = len(mine) + (table["offers_left"] + 1) // 2
        clock = mine[0] + (limit - mine[0]) * len(mine) / max(total - 1, 1)
    if party == "buyer":
        price = mine[-1] + CONCESSION * (anchor - mine[-1]) if mine else OPENING * anchor
        price = min(max(price, clock if clock is not None else price), limit)
    else:
        price = mine[-1] - CONCESSION * (mine[-1] - anchor) if mine else anchor / OPENING
        if not offers:
            price = table["list_price"]  # asked to open: the list price is the ask
        price = max(min(price, clock if clock is not None else price), limit)
    bounds_low, bounds_high = 0.2 * table["list_price"], 2.0 * table["list_price"]
    return float(round(min(max(price, bounds_low), bounds_high)))


def _stuck(table: dict[str, Any], limit: float) -> bool:
    """Whether the other side's last two offers were both beyond the limit."""
    party_prices = [o["price"] for o in table.get("offers", []) if o is table["open_offer"] or
                    o["party"] == table["open_offer"]["party"]]  # fmt: skip
    last = party_prices[-2:]
    seller = table["open_offer"]["party"] == "seller"
    return len(last) == 2 and all((p > limit) if seller else (p < limit) for p in last)


def _terms_fit(case: Case, offer: dict[str, Any], terms: tuple[str, int]) -> bool:
    """Whether an offer's terms meet the requirements the side knows."""
    required = case.facts.get("delivery_required")
    if required and offer["delivery"] != required:
        return False
    low = case.facts.get("warranty_min")
    high = case.facts.get("warranty_max")
    return (low is None or offer["warranty_months"] >= int(low)) and (
        high is None or offer["warranty_months"] <= int(high)
    )


def _beyond_twice(table: dict[str, Any], party: str, limit: float, warranty: int) -> bool:
    """Whether two answers to own offers with this warranty were beyond the limit."""
    offers = table["offers"]
    answers = [
        later
        for mine, later in zip(offers, offers[1:], strict=False)
        if mine["party"] == party and mine["warranty_months"] == warranty
        and later["party"] != party
    ]  # fmt: skip
    sign = 1.0 if party == "buyer" else -1.0
    return sum(sign * (o["price"] - limit) > 0 for o in answers) >= 2


def _has_warranty(case: Case) -> bool:
    return any(case.has(s) for s in ("warranty_min", "warranty_max", "warranty_wish"))


def _word_delivery(case: Case) -> str | None:
    value = str(case.facts.get("delivery") or "").lower()
    return next((d for d in ("express", "standard") if d in value), None)


def _summary(case: Case, table: dict[str, Any]) -> str:
    status = table["status"]
    offers = table.get("offers", [])
    if status == "deal":
        last = next((o for o in reversed(offers)), None)
        if last is not None:
            return (f"Deal closed at {last['price']:.2f} dollars with {last['delivery']} "
                    f"delivery and {last['warranty_months']} months of warranty.")  # fmt: skip
        return "Deal closed."
    if status == "walked_away":
        return "We walked away: no offer within my principal's limit was possible."
    return "The negotiation is with the other side."
