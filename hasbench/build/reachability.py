"""Which gold-path values a team can know, and the lookups that make the rest known.

An agent can only use an identifier (an order id, a payment method id, a flight number, a
date) that it has seen: in its task, profile or policy, in a tool result, or in what a
human told it. τ²-bench gold paths often skip the reads a real agent makes first (the
retail tasks from 70 on list only writes), and some values the customer's text never
states (a name only inside "daiki_johnson_9523", a date "the day after"). :func:`make_reachable`
walks a gold path the way the oracle does (the same rule: a whitespace-free string
argument must have been observed) and, for each value nobody could know yet:

1. inserts the read a support agent would make (authenticate the customer, open their
   profile, an order, a product, a reservation, search the flights of a route, list the
   airports), recursively for the values that read needs; the inserted steps change no
   state and are only inserted when ACTION is not scored, so scoring is untouched;
2. otherwise leaves it unreachable (reported by the importer).

A value the customer's text states (literally, a date in words, or a date one day from
one of their bookings that the text moves "by one day") is given to the customer as a
``known_info`` fact before any lookup; nothing else is: facts are never invented for the
customer (a name appearing only inside a user id is not stated).

Per gold argument it also says where its value comes from: ``stated`` (the customer's
known facts or text), ``lookup`` (a tool result before it) or ``neither``.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Any

from hasbench.envs.base import Environment
from hasbench.scenario import Scenario, scalar_leaves, scalar_values

LOOKUP_INFO = "added on import: a read that makes {value} known ({why})"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ONE_DAY = re.compile(
    r"\b(?:next|following) day\b|\bday (?:after|before)\b|\bby one day\b"
    r"|\b(?:one|a) day (?:later|earlier)\b"
)
"""Words that move a date by one day."""


@dataclass
class Reach:
    """What :func:`make_reachable` did to one task and what is still out of reach."""

    actions: list[dict[str, Any]]
    """The gold actions, with inserted lookups."""
    known_info: dict[str, Any]
    """The customer's facts, with the ones given on import."""
    inserted: list[str] = field(default_factory=list)
    """``"name {arguments}"`` of each inserted lookup."""
    given: list[str] = field(default_factory=list)
    """``"key=value"`` of each fact given to the customer."""
    unreachable: list[str] = field(default_factory=list)
    """``"action_id.name.argument: value"`` of identifiers nothing makes known."""
    sources: dict[str, list[str]] = field(
        default_factory=lambda: {"stated": [], "lookup": [], "neither": []}
    )
    failing_reads: list[str] = field(default_factory=list)
    """Gold reads that fail in the initial state (τ² keeps a customer's wrong id)."""


def is_identifier(value: Any) -> bool:
    """A value an agent cannot invent: a non-empty string without whitespace."""
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)


class _Walker:
    """Replays a gold path on a fresh environment, tracking what the team has seen."""

    def __init__(self, scenario: Scenario, env: Environment, may_insert: bool) -> None:
        self.env = env
        self.domain = scenario.domain
        self.may_insert = may_insert
        user = scenario.users[0]
        self.user_id = user.user_id
        self.facts = dict(user.known_info)
        self.said = " ".join([user.goal, user.task_instructions]).lower()
        self.public = " ".join(
            [scenario.task, *(a.profile for a in scenario.agents), env.policy]
        ).lower()
        self.outputs: list[str] = []
        self.inserted: list[dict[str, Any]] = []
        self.inserted_text: list[str] = []
        self.given: list[str] = []
        self.customers = _customers(self.domain, env.db, scenario)
        self.open_reads = {
            spec.name: env.call(spec.name, {}, "agent").content()
            for spec in env.tools("agent")
            if spec.kind == "read" and not spec.parameters.get("required")
        }
        """Reads without arguments (airports, product types): anyone can see their output."""

    # -- what the team has seen -----------------------------------------------------

    def observed(self, value: str) -> bool:
        text = value.lower()
        if any(str(v).lower() == text for v in self.facts.values()):
            return True
        return text in self.public or any(text in out for out in self.outputs)

    def run(self, name: str, arguments: dict[str, Any], side: str = "agent") -> bool:
        result = self.env.call(name, arguments, side)
        if not result.error:
            self.outputs.append(result.content().lower())
        return not result.error

    # -- making a value known ---------------------------------------------------------

    def ensure(self, value: str, action: dict[str, Any], key: str, depth: int = 0) -> bool:
        """Make ``value`` observed before ``action``.

        In order: a read without arguments shows it (public data such as airport codes);
        the customer's text states it (the customer is given it as a fact); a lookup shows
        it. Nothing the text does not state is given to the customer: a name only inside a
        user id ("mei_kovacs_8020") is looked up in the profile, not told.
        """
        if self.observed(value):
            return True
        for name, output in self.open_reads.items():
            if self.may_insert and _shows(output, value):
                self.outputs.append(output.lower())
                self.inserted.append({"name": name, "arguments": {}, "why": "public data"})
                return True
        if stated(value, self.said) or self.shifted_by_a_day(value):
            self.give(key, value)
            return True
        if depth < 4 and self.may_insert:
            for name, arguments, why in self.lookups(value, action):
                needed = [(p, v) for p, v in scalar_leaves(arguments) if is_identifier(v)]
                if not all(self.ensure(v, action, _key(p), depth + 1) for p, v in needed):
                    continue
                result = self.env.call(name, arguments, "agent")
                if result.error or not _shows(result.content(), value):
                    continue
                self.outputs.append(result.content().lower())
                self.inserted.append({"name": name, "arguments": arguments, "why": why})
                return True
        return False

    def shifted_by_a_day(self, value: str) -> bool:
        """Whether the text states a date as one day from one of the customer's bookings.

        "The day after the original reservation", "delay by one day": the customer states
        the new date relative to a date of their own reservation (a record the gold path
        touches), so they know it.
        """
        if not _DATE.fullmatch(value) or not _ONE_DAY.search(self.said):
            return False
        try:
            day = datetime.date.fromisoformat(value)
        except ValueError:
            return False
        near = {str(day + datetime.timedelta(days=d)) for d in (-1, 1)}
        reservations = self.env.db.get("reservations", {})
        booked = {
            str(v)
            for uid in self.customers
            for rid in self.env.db.get("users", {}).get(uid, {}).get("reservations", [])
            for v in scalar_values(reservations.get(rid, {}))
        }
        return bool(near & booked)

    def give(self, key: str, value: str) -> None:
        name, number = key, 1
        while name in self.facts and self.facts[name] != value:
            number += 1
            name = f"{key}_{number}"
        self.facts[name] = value
        self.given.append(f"{name}={value}")

    def lookups(self, value: str, action: dict[str, Any]) -> list[tuple[str, dict, str]]:
        """Candidate reads, best first, whose result may show ``value``."""
        if self.domain == "retail":
            return _retail_lookups(self, value, action)
        if self.domain == "airline":
            return _airline_lookups(self, value, action)
        return []


def _customers(domain: str, db: dict[str, Any], scenario: Scenario) -> list[str]:
    """The customers whose records the gold path touches (user ids, in order)."""
    found: list[str] = []
    for action in scenario.evaluation_criteria.actions:
        for value in scalar_values(action.arguments):
            if not isinstance(value, str):
                continue
            owner = None
            if value in db.get("users", {}):
                owner = value
            elif value in db.get("orders", {}):
                owner = db["orders"][value].get("user_id")
            elif value in db.get("reservations", {}):
                owner = db["reservations"][value].get("user_id")
            if owner and owner not in found:
                found.append(owner)
    return found


def _owner_of_payment(db: dict[str, Any], payment_id: str, customers: list[str]) -> str | None:
    for uid in customers:
        if payment_id in db["users"].get(uid, {}).get("payment_methods", {}):
            return uid
    return None


def _retail_lookups(w: _Walker, value: str, action: dict[str, Any]) -> list[tuple]:
    db = w.env.db
    found: list[tuple[str, dict, str]] = []
    if value in db["users"]:
        user = db["users"][value]
        email = user.get("email", "")
        name = user.get("name", {})
        zip_code = user.get("address", {}).get("zip", "")
        by_name = {
            "first_name": name.get("first_name", ""),
            "last_name": name.get("last_name", ""),
            "zip": zip_code,
        }
        if email.lower() in w.said or not all(v.lower() in w.said for v in by_name.values()):
            found.append(("find_user_id_by_email", {"email": email}, "authenticate the customer"))
        found.append(("find_user_id_by_name_zip", by_name, "authenticate the customer"))
        return found
    owner = _owner_lookup(w, value, "orders", "customer")
    if owner:
        return owner
    found += _record_lookups(w, value, action, "orders", "order_id", "get_order_details")
    found += _profile_lookups(w, value, "customer")
    for product_id, product in db["products"].items():
        if value in product.get("variants", {}):
            found.append(("get_product_details", {"product_id": product_id}, "the variants"))
    return found


def _airline_lookups(w: _Walker, value: str, action: dict[str, Any]) -> list[tuple]:
    db = w.env.db
    if value in db["users"]:
        return []  # members give their user id; nothing looks it up
    owner = _owner_lookup(w, value, "reservations", "member")
    if owner:
        return owner
    found = _record_lookups(
        w, value, action, "reservations", "reservation_id", "get_reservation_details"
    )
    if value in db["flights"]:
        flight = db["flights"][value]
        dates = [
            leg.get("date")
            for leg in action["arguments"].get("flights", [])
            if isinstance(leg, dict) and leg.get("flight_number") == value
        ]
        dates += [action["arguments"]["date"]] if "date" in action["arguments"] else []
        for date in dates:
            route = {"origin": flight["origin"], "destination": flight["destination"]}
            found.append(("search_direct_flight", route | {"date": date}, "flights of the route"))
    return found + _profile_lookups(w, value, "member")


def _owner_lookup(w: _Walker, value: str, records: str, person: str) -> list[tuple]:
    """The owner's details when ``value`` is one of their ``records`` or payment methods."""
    db = w.env.db
    if value in db[records]:
        owner = db[records][value]["user_id"]
        return [("get_user_details", {"user_id": owner}, f"the {person}'s {records}")]
    owner = _owner_of_payment(db, value, w.customers)
    if owner:
        return [("get_user_details", {"user_id": owner}, f"the {person}'s payment methods")]
    return []


def _record_lookups(w: _Walker, value: str, action: dict[str, Any], records: str, key: str,
                    tool: str) -> list[tuple]:  # fmt: skip
    """Reads of the ``records`` (the action's, then the customers') whose fields hold ``value``."""
    db = w.env.db
    ids = [v for v in scalar_values(action["arguments"]) if isinstance(v, str) and v in db[records]]
    for uid in w.customers:
        ids += [i for i in db["users"].get(uid, {}).get(records, []) if i not in ids]
    label = f"the {key.removesuffix('_id')}"
    return [(tool, {key: i}, label) for i in ids if value in _values(db[records].get(i, {}))]


def _profile_lookups(w: _Walker, value: str, person: str) -> list[tuple]:
    """Reads of the customers' profiles that hold ``value``."""
    return [
        ("get_user_details", {"user_id": uid}, f"the {person}'s profile")
        for uid in w.customers
        if value in _values(w.env.db["users"].get(uid, {}))
    ]


def make_reachable(scenario: Scenario, env: Environment) -> Reach:
    """Walk the gold path on ``env`` (fresh, in the task's initial state) and fill gaps.

    Lookups are inserted only when ``ACTION`` is not in the reward basis (inserted reads
    would otherwise change what is scored); customer facts are given in any case.
    """
    may_insert = "ACTION" not in scenario.evaluation_criteria.reward_basis
    walker = _Walker(scenario, env, may_insert)
    users = {u.user_id for u in scenario.users}
    first_agent = scenario.agents[0].agent_id
    actions: list[dict[str, Any]] = []
    unreachable: list[str] = []
    failing: list[str] = []
    sources: dict[str, list[str]] = {"stated": [], "lookup": [], "neither": []}
    for gold in scenario.evaluation_criteria.actions:
        action = gold.model_dump(exclude_defaults=True)
        spec = env.tool_spec(gold.name)
        enums = spec.enum_values() if spec else set()
        before = len(walker.inserted)
        side = scenario.side_of(gold)
        spec = env.tool_spec(gold.name)
        if (
            spec is not None
            and spec.kind != "write"
            and env.call(gold.name, gold.arguments, side).error
        ):
            failing.append(f"{gold.action_id}.{gold.name}")
            actions.append(action)
            continue
        for path, value in scalar_leaves(gold.arguments, f"{gold.action_id}.{gold.name}"):
            if not is_identifier(value) or value in enums:
                continue
            if not walker.ensure(value, action, _key(path)):
                unreachable.append(f"{path.lstrip('.')}: {value}")
        for lookup in walker.inserted[before:]:
            number = len(walker.inserted_text) + 1
            actions.append(
                {
                    "action_id": f"lookup_{number}",
                    "requestor": gold.requestor if gold.requestor not in users else first_agent,
                    "name": lookup["name"],
                    "arguments": lookup["arguments"],
                    "info": LOOKUP_INFO.format(value=_short(lookup), why=lookup["why"]),
                }
            )
            walker.inserted_text.append(f"{lookup['name']} {lookup['arguments']}")
        for path, value in scalar_leaves(gold.arguments, f"{gold.action_id}.{gold.name}"):
            sources[_source(walker, value)].append(path.lstrip("."))
        walker.run(gold.name, gold.arguments, side)
        actions.append(action)
    return Reach(
        actions=actions,
        known_info=walker.facts,
        inserted=walker.inserted_text,
        given=walker.given,
        unreachable=unreachable,
        sources=sources,
        failing_reads=failing,
    )


def stated(value: str, text: str) -> bool:
    """Whether a (lower-case) text states a value: as a whole token, or a date in words.

    ``2024-05-26`` is stated by "May 26", "may 26th" or "26 May"; "the day after" states
    no date.
    """
    if len(value) >= 2 and re.search(rf"(?<!\w){re.escape(value.lower())}(?!\w)", text):
        return True
    if not _DATE.fullmatch(value):
        return False
    try:
        day = datetime.date.fromisoformat(value)
    except ValueError:
        return False
    month = day.strftime("%B").lower()
    months = f"(?:{month}|{month[:3]})\\.?"
    number = f"{day.day}(?:st|nd|rd|th)?"
    return re.search(rf"\b{months} {number}\b|\b{number} (?:of )?{months}\b", text) is not None


def _shows(text: str, value: str) -> bool:
    """Whether ``value`` occurs in a tool result as a whole token."""
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", text, re.IGNORECASE) is not None


def _values(record: Any) -> list[str]:
    return [str(v) for v in scalar_values(record)]


def _key(path: str) -> str:
    """The fact name for a value at an argument path: its last field name.

    An element of a list gives the singular (``item_ids[0]`` gives ``item_id``).
    """
    name = re.sub(r"\[\d+\]", "", path).rsplit(".", 1)[-1] or "value"
    return name.removesuffix("s") if path.endswith("]") else name


def _short(lookup: dict[str, Any]) -> str:
    return ", ".join(str(v) for v in lookup["arguments"].values()) or lookup["name"]


def _source(walker: _Walker, value: Any) -> str:
    text = str(value).lower()
    if isinstance(value, bool) or text in ("", "yes", "no"):
        return "stated"
    if any(str(v).lower() == text for v in walker.facts.values()) or text in walker.said:
        return "stated"
    if any(text in out for out in walker.outputs) or isinstance(value, int | float):
        return "lookup"
    return "neither"
