"""The airline's know-how: identify the member and the reservation, then do what was asked.

The request is read from the task text and from what people say (a later change replaces
it): add bags, correct a passenger, cancel, change the cabin, fly on another day, be
compensated for a cancelled flight, book a flight. The member's user id and reservation,
the number of bags, the card, the reason and the new date come from the texts, or are
asked for (the card for company travel from the travel manager), or taken from what the
tools show. The policy's rules are applied as a competent agent would: free bags by
membership and cabin, when a cancellation is allowed, who is owed compensation (the
numbers come from :mod:`hasbench.envs.airline.policy`, which the policy text states). Every
change is first put to the person who decides, as the policy asks.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.envs.airline.policy import (
    BAG_FEE,
    CANCELLED_FLIGHT_COMPENSATION,
    FREE_CANCELLATION_SINCE,
    NOW,
    compensation_eligible,
    free_bags,
)
from hasbench.participants.playbooks.common import failed, output, read_requests, settled, summary
from hasbench.participants.standin import Call, Case, Done, GiveUp, Need, NotUnderstood, Step

USER_ID = re.compile(r"user id ([a-z]+_[a-z]+_\d+)")
SAID_USER_ID = re.compile(r"\b([a-z]+_[a-z]+_\d{4})\b")
RESERVATION = re.compile(r"reservation ([A-Z0-9]{6})\b")
SAID_RESERVATION = re.compile(r"reservation(?: id)?(?: is|:)? ([A-Z0-9]{6})\b")
CARD = re.compile(r"card ending in (\d{4})")
FLIGHT = re.compile(r"flight (HAT\d{3}) (?:from ([A-Z]{3}) to ([A-Z]{3}) )?on (\d{4}-\d{2}-\d{2})")
DATE = re.compile(r"\b(2024-\d{2}-\d{2})\b")
CHANGED = ("changed",)
"""Words by which a member replaces their request rather than adds to it."""
COVERED = ("health", "ill", "sick", "weather")
"""Reasons the travel insurance covers."""
WHO = ("member", "traveller", "customer")
PAYER = ("card", "travel manager", "authoriz")


def requests_in(text: str) -> list[str]:
    """The requests a text states."""
    lower = text.lower()
    found = []
    if "book" in lower and "seat" in lower or "one-way" in lower:
        found.append("book")
    if "bag" in lower:
        found.append("bags")
    if "date of birth" in lower or "passenger's details" in lower:
        found.append("passenger")
    if re.search(r"\bcancel (my|a|the)? ?reservation|wants to cancel", lower):
        found.append("cancel")
    if any(w in lower for w in ("upgrade", "cabin", "move up")):
        found.append("cabin")
    if "another day" in lower or "different day" in lower:
        found.append("date")
    if "compensation" in lower:
        found.append("certificate")
    return found


class AirlinePlaybook:
    """Requests of an airline member (see the module docstring)."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def read(self, case: Case, text: str, source: str) -> None:
        """Ids, cards, counts and requests stated in texts."""
        if source.startswith("tool:") or source == "profile":
            return
        read_requests(case, self.said, text, source, requests_in, CHANGED)
        found = (USER_ID if source == "task" else SAID_USER_ID).search(text)
        if found and not case.facts.get("user_id"):
            case.learn("user_id", found.group(1), source)
        found = (RESERVATION if source == "task" else SAID_RESERVATION).search(text)
        if found and not case.facts.get("reservation_id"):
            case.learn("reservation_id", found.group(1), source)
        card = re.search(r"\b(credit_card_\d+)\b", text)
        if card and source != "task" and "company" in text.lower():
            case.learn("company_card", card.group(1), source)
        bags = re.search(r"(\d+) (?:extra )?checked bags?", text)
        if bags:  # the latest count stated replaces an earlier one
            case.learn("bags_to_add", int(bags.group(1)), source)
        if source != "task" and (date := DATE.search(text)) and "day" in text.lower():
            case.learn("new_travel_date", date.group(1), source)

    def _text(self, case: Case) -> str:
        return " ".join([case.task, *self.said])

    # -- deciding --------------------------------------------------------------------------

    def next_step(self, case: Case) -> Step:
        """The next step of the request (see the module docstring)."""
        user_id = case.facts.get("user_id")
        if not user_id:
            if case.has("user_id"):
                return GiveUp(
                    "I could not identify you without your user id, so I changed nothing."
                )
            return Need(
                "user_id",
                "What is your user id, which reservation is it about, and what would you like?",
                who=WHO,
                topics=("reservation_id", "request"),
            )
        user = output(case, "get_user_details", user_id=user_id)
        if user is None:
            if failed(case, "get_user_details"):
                return GiveUp(f"I found no member with the user id {user_id}.")
            return Call("get_user_details", {"user_id": user_id})
        requests = case.facts.get("requests") or []
        if not requests:
            return NotUnderstood("I could not tell what you would like done with your booking.")
        if "book" in requests:
            return self._book(case, user) or Done(self._summary(case))
        reservation = self._reservation(case, user)
        if not isinstance(reservation, dict):
            return reservation
        for request in requests:
            step = getattr(self, f"_{request}")(case, user, reservation)
            if step is not None:
                return step
        return Done(self._summary(case))

    def _reservation(self, case: Case, user: dict[str, Any]) -> dict[str, Any] | Step:
        reservation_id = case.facts.get("reservation_id")
        if reservation_id is None and not case.has("reservation_id"):
            return Need(
                "reservation_id",
                "Which reservation is it about, and what would you like done?",
                candidates=tuple(user["reservations"][:1]),
                who=WHO,
                topics=("request",),
            )
        if reservation_id is None:
            return GiveUp("I could not tell which reservation you mean, so I changed nothing.")
        reservation = output(case, "get_reservation_details", reservation_id=reservation_id)
        if reservation is None:
            if failed(case, "get_reservation_details"):
                return GiveUp(f"I could not find the reservation {reservation_id}.")
            return Call("get_reservation_details", {"reservation_id": reservation_id})
        return reservation

    def _payment(self, case: Case, user: dict[str, Any], company: bool) -> str | Step:
        """The card that pays: named by its last digits, or the company's from the manager."""
        if company:
            card = case.facts.get("company_card")
            if card is None and not case.has("company_card"):
                return Need("company_card", "Which card pays for company travel?", who=PAYER)
            if card:
                return str(card)
        digits = CARD.findall(self._text(case))
        cards = [m for m in user["payment_methods"].values() if m["source"] == "credit_card"]
        named = [m["id"] for m in cards if digits and m.get("last_four") == digits[-1]]
        if named:
            return named[0]
        payment = case.facts.get("payment_id")
        if payment is None and not case.has("payment_id"):
            return Need(
                "payment_id",
                "Which card should pay?",
                candidates=tuple(m["id"] for m in cards[:1]),
                who=WHO,
            )
        if payment is None:
            return GiveUp("I could not tell which card pays, so I changed nothing.")
        return str(payment)

    def _paid_change(self, case: Case, user: dict[str, Any], r: dict[str, Any], tool: str,
                     company: bool, changes: dict[str, Any]) -> Step:  # fmt: skip
        """``tool`` making ``changes`` to reservation ``r``, paid with the card that pays."""
        payment = self._payment(case, user, company)
        if not isinstance(payment, str):
            return payment
        arguments = {"reservation_id": r["reservation_id"], **changes, "payment_id": payment}
        return Call(tool, arguments, confirm=True)

    # -- the requests ----------------------------------------------------------------------

    def _bags(self, case: Case, user: dict[str, Any], r: dict[str, Any]) -> Step | None:
        tool = "update_reservation_baggages"
        if settled(case, tool):
            return None
        total = case.facts.get("total_bags_wanted")
        added = case.facts.get("bags_to_add")
        if total is None and added is None:
            if not case.has("bags_to_add"):
                return Need("bags_to_add", "How many checked bags do you want to add?", who=WHO)
            return None
        total = int(total) if total is not None else r["total_baggages"] + int(added)
        free = free_bags(user["membership"], r["cabin"], len(r["passengers"]))
        nonfree = max(r["nonfree_baggages"], total - free)
        changes = {"total_baggages": total, "nonfree_baggages": nonfree}
        return self._paid_change(case, user, r, tool, self._company(case), changes)

    def _passenger(self, case: Case, user: dict[str, Any], r: dict[str, Any]) -> Step | None:
        tool = "update_reservation_passengers"
        if settled(case, tool):
            return None
        dob = case.facts.get("correct_date_of_birth")
        if dob is None:
            if not case.has("correct_date_of_birth"):
                return Need(
                    "correct_date_of_birth",
                    "Whose date of birth is wrong, and what is the correct one?",
                    who=WHO,
                    topics=("request",),
                )
            return None
        text = self._text(case).lower()
        named = [
            p for p in r["passengers"] if f"{p['first_name']} {p['last_name']}".lower() in text
        ]
        if len(named) != 1 and len(r["passengers"]) != 1:
            return GiveUp("I could not tell whose date of birth to correct, so I changed nothing.")
        target = named[0] if named else r["passengers"][0]
        passengers = [{**p, "dob": dob} if p is target else dict(p) for p in r["passengers"]]
        arguments = {"reservation_id": r["reservation_id"], "passengers": passengers}
        return Call(tool, arguments, confirm=True)

    def _cancel(self, case: Case, user: dict[str, Any], r: dict[str, Any]) -> Step | None:
        tool = "cancel_reservation"
        if settled(case, tool) or r.get("status") == "cancelled":
            return None
        reason = case.facts.get("cancellation_reason") or _reason(self._text(case))
        if reason is None and not case.has("cancellation_reason"):
            return Need(
                "cancellation_reason",
                "Why do you want to cancel the reservation?",
                candidates=("change of plans",),
                who=WHO,
            )
        if any(f["date"] < NOW[:10] for f in r["flights"]):
            return Done("A flight of this reservation has already been flown, so I cannot cancel.")
        covered = r["insurance"] == "yes" and any(w in str(reason).lower() for w in COVERED)
        allowed = r["created_at"] > FREE_CANCELLATION_SINCE or r["cabin"] == "business" or covered
        if not allowed:
            return Done("The policy does not allow cancelling this reservation.")
        return Call(tool, {"reservation_id": r["reservation_id"]}, confirm=True)

    def _cabin(self, case: Case, user: dict[str, Any], r: dict[str, Any]) -> Step | None:
        tool = "update_reservation_flights"
        if settled(case, tool):
            return None
        cabin = case.facts.get("cabin_wanted") or _cabin(self._text(case))
        if cabin is None:
            if not case.has("cabin_wanted"):
                return Need(
                    "cabin_wanted", "Which cabin would you like?", who=WHO, topics=("request",)
                )
            return None
        if cabin == r["cabin"]:
            return None
        flights = [{"flight_number": f["flight_number"], "date": f["date"]} for f in r["flights"]]
        changes = {"cabin": cabin, "flights": flights}
        return self._paid_change(case, user, r, tool, self._company(case), changes)

    def _date(self, case: Case, user: dict[str, Any], r: dict[str, Any]) -> Step | None:
        tool = "update_reservation_flights"
        if settled(case, tool):
            return None
        date = case.facts.get("new_travel_date")
        if date is None:
            if not case.has("new_travel_date"):
                return Need("new_travel_date", "Which day would you like to fly?", who=WHO)
            return None
        search = {"origin": r["origin"], "destination": r["destination"], "date": date}
        found = output(case, "search_direct_flight", **search)
        if found is None:
            return Call("search_direct_flight", search)
        seats = len(r["passengers"])
        fitting = [f for f in found if f["available_seats"][r["cabin"]] >= seats]
        if not fitting:
            return Done(f"There is no flight with free seats on {date}.")
        flights = [{"flight_number": fitting[0]["flight_number"], "date": date}]
        changes = {"cabin": r["cabin"], "flights": flights}
        return self._paid_change(case, user, r, tool, False, changes)

    def _certificate(self, case: Case, user: dict[str, Any], r: dict[str, Any]) -> Step | None:
        tool = "send_certificate"
        if settled(case, tool):
            return None
        flight = FLIGHT.search(self._text(case))
        if flight is None:
            return GiveUp("I could not tell which flight you mean.")
        number, date = flight.group(1), flight.group(4)
        status = output(case, "get_flight_status", flight_number=number, date=date)
        if status is None:
            return Call("get_flight_status", {"flight_number": number, "date": date})
        eligible = compensation_eligible(user["membership"], r["insurance"], r["cabin"])
        if str(status) != "cancelled" or not eligible:
            return Done("The policy offers no compensation in this case.")
        amount = CANCELLED_FLIGHT_COMPENSATION * len(r["passengers"])
        return Call(tool, {"user_id": user["user_id"], "amount": amount}, confirm=True)

    def _book(self, case: Case, user: dict[str, Any]) -> Step | None:
        tool = "book_reservation"
        if settled(case, tool):
            return None
        flight = FLIGHT.search(case.task)
        if flight is None or flight.group(2) is None:
            return GiveUp("I could not tell which flight to book.")
        number, origin, destination, date = flight.groups()
        search = {"origin": origin, "destination": destination, "date": date}
        found = output(case, "search_direct_flight", **search)
        if found is None:
            return Call("search_direct_flight", search)
        cabin = _cabin(case.task) or "economy"
        offer = next((f for f in found if f["flight_number"] == number), None)
        if offer is None or offer["available_seats"][cabin] < 1:
            return Done(f"Flight {number} on {date} has no free {cabin} seat.")
        payment = self._payment(case, user, company=False)
        if not isinstance(payment, str):
            return payment
        me = {**user["name"], "dob": user["dob"]}
        arguments = {
            "user_id": user["user_id"],
            "origin": origin,
            "destination": destination,
            "flight_type": "one_way",
            "cabin": cabin,
            "flights": [{"flight_number": number, "date": date}],
            "passengers": [me],
            "payment_methods": [{"payment_id": payment, "amount": offer["prices"][cabin]}],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        }
        return Call(tool, arguments, confirm=True)

    @staticmethod
    def _company(case: Case) -> bool:
        return "company" in case.task.lower()

    def _summary(self, case: Case) -> str:
        return summary(
            case, lambda name, arguments, result: _describe(name, arguments, result, case)
        )


def _reason(text: str) -> str | None:
    lower = text.lower()
    if "(health)" in lower or "ill" in lower.split() or "health" in lower:
        return "health"
    if "plans changed" in lower or "change of plans" in lower:
        return "change of plans"
    if "weather" in lower:
        return "weather"
    return None


def _cabin(text: str) -> str | None:
    """The cabin a text asks for (the latest one named after 'to')."""
    named = re.findall(r"\bto (?:the )?(business|economy|basic economy)\b", text.lower())
    return named[-1].replace(" ", "_") if named else None


def _describe(name: str, arguments: dict[str, Any], result: Any, case: Case) -> str:
    reservation = arguments.get("reservation_id", "")
    if name == "cancel_reservation" and isinstance(result, dict):
        refund = sum(p["amount"] for p in result["payment_history"] if p["amount"] > 0)
        return f"Reservation {reservation} is cancelled; {refund} will be refunded."
    if name == "update_reservation_baggages":
        before = next(
            (
                o.output
                for o in case.outputs
                if o.name == "get_reservation_details" and isinstance(o.output, dict)
            ),
            None,
        )
        paid = arguments["nonfree_baggages"] - (before["nonfree_baggages"] if before else 0)
        return (
            f"Reservation {reservation} now has {arguments['total_baggages']} checked bags; "
            f"the bag fee is {BAG_FEE * max(paid, 0)}."
        )
    if name == "send_certificate":
        return f"A certificate of {arguments['amount']} is sent to your account."
    if name == "book_reservation":
        return "Your flight is booked."
    return f"Reservation {reservation} is updated ({name.replace('_', ' ')})."
