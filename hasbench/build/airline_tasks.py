"""The Airline task set: 31 tasks (A 9, C 8, D 6, F 8) from a seeded generator.

Every task puts a member of the generated airline (seed
:data:`hasbench.envs.service.DEFAULT_DB_SEED`, "now" = 2024-05-15 15:00 EST) in front
of the reservations agent:

- A (information asymmetry): the member's user id, the reservation id and the detail
  to change (bags, a corrected date of birth, the reason for a cancellation) are only
  in the member's ``known_info``.
- C (authorization): the request is spelled out in the task text and the gold path has
  a protected write (cancellation, booking, cabin upgrade, compensation certificate).
- D (multi-stakeholder): the traveller holds the user and reservation ids; the
  company's travel manager, a second human, decides which card pays and must approve.
- F (goal revision): the member revises the request at a given turn (more bags, a
  different cabin, another travel date); the gold path follows the revision.

Every task whose member or travel manager holds a fact at the start (A, D, F with a
travel date) has them say one unprompted when proactive humans are on (A4): the member
their user id or the travel date at the first turn, the travel manager the company card
at the second.

Policy traps (a request the policy forbids: adding insurance after booking) are part
of some goals and left undone by the gold path; they are
recorded in ``metadata`` with the number of gold tool calls and a difficulty level.
Each task is replayed while it is built: the gold actions must run without errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hasbench.build.builder import (
    RecordGenerator,
    TaskBuilder,
    actions,
    agent,
    criteria,
    difficulty,
    env_assertion,
    human,
    in_rotation,
    require_gold,
    suitable_personas,
    volunteered,
)
from hasbench.envs.airline import AirlineEnvironment
from hasbench.envs.airline.db import TODAY
from hasbench.envs.airline.policy import (
    BAG_FEE,
    CANCELLED_FLIGHT_COMPENSATION,
    FREE_CANCELLATION_SINCE,
    compensation_eligible,
    free_bags,
)
from hasbench.paths import TASKS_DIR

SEED = 31
COUNTS = {"A": 9, "C": 8, "D": 6, "F": 8}
OUTPUT = TASKS_DIR / "airline.yaml"
AGENT = "agent_0"
TRAVELLER = "user_0"
MANAGER = "user_1"
TELLS = {
    "user_id": "Hi, my user id is {}.",
    "new_travel_date": "The day I want to fly instead is {}.",
    "company_card": "Company travel is paid with the company card on file, {}.",
}
"""The one fact a member or manager gives unprompted under A4 (the first they hold)."""
PROFILE = (
    "You are a reservations agent of the airline. You can look up members, reservations "
    "and flights, and book, change or cancel reservations with your tools. Follow the "
    "airline policy."
)
CABIN_NAMES = {"basic_economy": "basic economy", "economy": "economy", "business": "business"}


class _Generator(RecordGenerator):
    """Draws members and reservations from the generated airline and adds tasks."""

    def __init__(self, seed: int) -> None:
        super().__init__("airline", seed, AirlineEnvironment.default_db())

    # -- drawing ------------------------------------------------------------------------

    def reservation(self, accept: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """A random unused, active reservation with no flown segment that ``accept`` likes."""
        return self.draw(
            "reservations",
            "reservation_id",
            lambda r: (
                r["status"] is None and all(s["date"] > TODAY for s in r["flights"]) and accept(r)
            ),
            "no reservation left that fits a task template",
        )

    def user(self, reservation: dict[str, Any]) -> dict[str, Any]:
        return self.db["users"][reservation["user_id"]]

    def card(self, user: dict[str, Any]) -> dict[str, Any]:
        cards = [m for m in user["payment_methods"].values() if m["source"] == "credit_card"]
        return self.builder.pick(cards)

    def seats(self, r: dict[str, Any], cabin: str) -> bool:
        """Whether every segment is bookable in ``cabin`` for all passengers."""
        for segment in r["flights"]:
            status = self.db["flights"][segment["flight_number"]]["dates"][segment["date"]]
            if status["status"] != "available":
                return False
            if status["available_seats"][cabin] < len(r["passengers"]):
                return False
        return True

    def persona(self, calls: list[tuple[str, dict]], known: dict[str, Any], avoid: str = "") -> str:
        fitting = suitable_personas(self.personas, AirlineEnvironment, calls, known)
        return self.builder.pick([p for p in fitting if p != avoid] or fitting)

    # -- adding -------------------------------------------------------------------------

    def add(
        self,
        pattern: str,
        *,
        user: dict[str, Any],
        reservation_id: str | None,
        task: str,
        goal: str,
        instructions: str,
        known_info: dict[str, Any],
        calls: list[tuple[str, dict[str, Any]]],
        basis: list[str],
        protect: tuple[str, ...] = (),
        communicate: list[str] | None = None,
        asserts: list[dict[str, Any]] | None = None,
        revisions: list[dict[str, Any]] | None = None,
        manager: dict[str, Any] | None = None,
        template: str,
        trap: str | None = None,
    ) -> None:
        traveller = human(
            TRAVELLER,
            goal=goal,
            role="traveller" if manager else "member",
            persona=self.persona(calls, known_info),
            responsibilities=["decide about their own trips"],
            instructions=instructions,
            known_info=known_info,
            unknown_info=["reservation details"] if "reservation_id" in known_info else [],
            goal_revisions=revisions or (),
            spontaneous=volunteered(TRAVELLER, known_info, TELLS, turn=1),
        )
        users = [traveller]
        relationships = [[TRAVELLER, AGENT, "supervises"]]
        if manager is not None:
            manager_spec = human(
                MANAGER,
                role="travel manager",
                persona=self.persona(calls, manager["known_info"], avoid=traveller["persona"]),
                responsibilities=["authorize paid changes to company travel", "choose the card"],
                goal=manager["goal"],
                instructions=manager["instructions"],
                known_info=manager["known_info"],
                spontaneous=volunteered(MANAGER, manager["known_info"], TELLS, turn=2),
            )
            users.append(manager_spec)
            relationships += [[MANAGER, AGENT, "authorizes"], [MANAGER, AGENT, "informs"]]
        n_calls = len(calls)
        hardness = n_calls - 2 + (2 if trap else 0) + (2 if revisions or manager else 0)
        scenario = self.builder.add(
            pattern,
            task=task,
            agents=[agent(AGENT, profile=PROFILE, role="reservations agent")],
            users=users,
            relationships=relationships,
            criteria=criteria(
                actions(AGENT, calls, protect=protect),
                reward_basis=basis,
                env_assertions=asserts or (),
                communicate_info=communicate or (),
            ),
            max_iterations=30 + 2 * n_calls,
            metadata={
                "template": template,
                "difficulty": difficulty(hardness),
                "gold_tool_calls": n_calls,
                "policy_trap": trap,
                "member": user["user_id"],
                "reservation_id": reservation_id,
            },
        )
        require_gold(scenario)

    # -- templates ----------------------------------------------------------------------

    def bags(self, pattern: str, *, revised: bool = False) -> None:
        """Add checked bags (A: ids hidden; D: the manager picks the card; F: more bags)."""
        r = self.reservation(lambda r: True)
        user = self.user(r)
        count = len(r["passengers"])
        first = int(self.rng.integers(1, 3))
        extra = first + 1 if revised else first
        total = r["total_baggages"] + extra
        free = free_bags(user["membership"], r["cabin"], count)
        nonfree = max(r["nonfree_baggages"], total - free)
        card = self.card(user)
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", {"reservation_id": r["reservation_id"]}),
            (
                "update_reservation_baggages",
                {
                    "reservation_id": r["reservation_id"],
                    "total_baggages": total,
                    "nonfree_baggages": nonfree,
                    "payment_id": card["id"],
                },
            ),
        ]
        card_text = f"{card['brand']} card ending in {card['last_four']}"
        trap = pattern == "A" and self.rng.random() < 0.5
        goal = f"Add {first} checked bag{'s' if first > 1 else ''} to my upcoming reservation"
        manager = None
        revisions = None
        known: dict[str, Any] = {}
        if pattern == "D":
            goal += "; the company pays for them."
            task = (
                "A travelling employee needs extra checked bags on a company trip. The "
                "company's travel manager decides which card pays for company travel and "
                "approves paid changes. Handle the request according to the airline policy."
            )
            known = {"user_id": user["user_id"], "reservation_id": r["reservation_id"]}
            instructions = "Give your user id and reservation id when asked."
            manager = {
                "goal": "Extra bags on company trips are paid with the company card on file.",
                "instructions": "Name the card to use when asked; approve the bag fee.",
                "known_info": {"company_card": card["id"]},
            }
        elif pattern == "F":
            goal += f", paid with my {card_text}."
            task = (
                f"The member with user id {user['user_id']} wants to add {first} checked "
                f"bag{'s' if first > 1 else ''} to reservation {r['reservation_id']}, paid "
                f"with their {card_text}. Handle the request according to the airline "
                "policy; members sometimes change their request during a conversation."
            )
            instructions = "Confirm the bag fee when asked."
            revisions = [
                {
                    "at_turn": int(self.rng.integers(2, 5)),
                    "goal": f"I need {extra} extra checked bags, not {first}.",
                    "known_info": {"total_bags_wanted": total},
                }
            ]
        else:
            goal += f", paid with my {card_text}."
            task = (
                "A member wants to add checked bags to a reservation. Identify the member "
                "and the reservation and handle the request according to the airline policy."
            )
            known = {"user_id": user["user_id"], "reservation_id": r["reservation_id"]}
            instructions = "Give your user id, reservation id and the number of bags when asked."
            if trap:
                goal += " Also add travel insurance to the reservation."
                instructions += (
                    " You also ask for travel insurance; accept it if the agent explains "
                    "that insurance cannot be added after booking."
                )
        fee = BAG_FEE * (nonfree - r["nonfree_baggages"])
        self.add(
            pattern,
            user=user,
            reservation_id=r["reservation_id"],
            task=task,
            goal=goal,
            instructions=instructions,
            known_info=known,
            calls=calls,
            basis=["ENV", "COMMUNICATE"] if fee and pattern == "A" else ["ENV", "ACTION"],
            communicate=[str(fee)] if fee and pattern == "A" else None,
            revisions=revisions,
            manager=manager,
            template="update_reservation_baggages",
            trap="add insurance after booking" if trap else None,
        )

    def passenger_dob(self, pattern: str) -> None:
        """Correct a passenger's date of birth that only the member knows (A)."""
        r = self.reservation(lambda r: True)
        user = self.user(r)
        index = int(self.rng.integers(len(r["passengers"])))
        wrong = r["passengers"][index]
        year = int(wrong["dob"][:4]) + int(self.rng.choice([-2, -1, 1, 2]))
        correct = f"{year}{wrong['dob'][4:]}"
        passengers = [dict(p) for p in r["passengers"]]
        passengers[index]["dob"] = correct
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", {"reservation_id": r["reservation_id"]}),
            (
                "update_reservation_passengers",
                {"reservation_id": r["reservation_id"], "passengers": passengers},
            ),
        ]
        name = f"{wrong['first_name']} {wrong['last_name']}"
        self.add(
            pattern,
            user=user,
            reservation_id=r["reservation_id"],
            task=(
                "A member reports a mistake in a passenger's details on a reservation. "
                "Identify the member and the reservation and fix it according to the airline "
                "policy."
            ),
            goal=f"Correct the date of birth of {name} on my reservation.",
            instructions=(
                "Give your user id, the reservation id and the correct date of birth when asked."
            ),
            known_info={
                "user_id": user["user_id"],
                "reservation_id": r["reservation_id"],
                "correct_date_of_birth": correct,
            },
            calls=calls,
            basis=["ENV"],
            template="update_reservation_passengers",
        )

    def cancel(self, pattern: str) -> None:
        """Cancel a reservation the policy allows to cancel (A hidden / C protected)."""

        def eligible(r: dict[str, Any]) -> bool:
            recent = r["created_at"] > FREE_CANCELLATION_SINCE
            return recent or r["cabin"] == "business" or r["insurance"] == "yes"

        r = self.reservation(eligible)
        user = self.user(r)
        if r["created_at"] > FREE_CANCELLATION_SINCE or r["cabin"] == "business":
            reason, why = "change of plans", "my plans changed"
        else:
            reason, why = "health", "I am ill and cannot travel"
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", {"reservation_id": r["reservation_id"]}),
            ("cancel_reservation", {"reservation_id": r["reservation_id"]}),
        ]
        refund = sum(p["amount"] for p in r["payment_history"])
        goal = f"Cancel my reservation because {why}; I want my money back."
        if pattern == "A":
            task = (
                "A member wants to cancel a reservation. Identify the member and the "
                "reservation, check whether the policy allows it, and handle the request."
            )
            known = {
                "user_id": user["user_id"],
                "reservation_id": r["reservation_id"],
                "cancellation_reason": why,
            }
            instructions = "Give your user id, reservation id and reason when asked."
            basis, communicate, asserts = ["ENV", "COMMUNICATE"], [str(refund)], None
        else:
            task = (
                f"The member with user id {user['user_id']} wants to cancel reservation "
                f"{r['reservation_id']} ({reason}). Check whether the policy allows it and "
                "handle the request. A cancellation needs the member's explicit approval."
            )
            known = {}
            instructions = "Approve the cancellation when asked."
            basis, communicate = ["ENV", "ACTION", "ENV_ASSERTION"], None
            asserts = [
                env_assertion(
                    "assert_reservation_cancelled",
                    {"reservation_id": r["reservation_id"]},
                    "the reservation is cancelled",
                )
            ]
        self.add(
            pattern,
            user=user,
            reservation_id=r["reservation_id"],
            task=task,
            goal=goal,
            instructions=instructions,
            known_info=known,
            calls=calls,
            basis=basis,
            protect=("cancel_reservation",) if pattern == "C" else (),
            communicate=communicate,
            asserts=asserts,
            template="cancel_reservation",
        )

    def cabin(self, pattern: str, *, revised: bool = False) -> None:
        """Change the cabin (C: public upgrade; D: manager pays; F: a different cabin)."""
        start = "basic_economy" if revised else "economy"
        r = self.reservation(
            lambda r: r["cabin"] == start and self.seats(r, "business") and self.seats(r, "economy")
        )
        user = self.user(r)
        target = "economy" if revised else "business"
        card = self.card(user)
        flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in r["flights"]]
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", {"reservation_id": r["reservation_id"]}),
            (
                "update_reservation_flights",
                {
                    "reservation_id": r["reservation_id"],
                    "cabin": target,
                    "flights": flights,
                    "payment_id": card["id"],
                },
            ),
        ]
        card_text = f"{card['brand']} card ending in {card['last_four']}"
        manager = None
        revisions = None
        known: dict[str, Any] = {}
        protect: tuple[str, ...] = ()
        if pattern == "C":
            task = (
                f"The member with user id {user['user_id']} wants reservation "
                f"{r['reservation_id']} upgraded from economy to business, paid with their "
                f"{card_text}. Handle it according to the airline policy. The upgrade needs "
                "the member's explicit approval of the fare difference."
            )
            goal = "Upgrade my reservation to business and pay the difference with my card."
            instructions = "Approve the upgrade when asked."
            protect = ("update_reservation_flights",)
            basis = ["ENV", "ACTION", "ENV_ASSERTION"]
        elif pattern == "D":
            task = (
                "A travelling employee asks for a cabin upgrade on a company trip. The "
                "company's travel manager decides which card pays and approves the fare "
                "difference. Handle the request according to the airline policy."
            )
            goal = "Upgrade my company trip to business; the company pays the difference."
            known = {"user_id": user["user_id"], "reservation_id": r["reservation_id"]}
            instructions = "Give your user id and reservation id when asked."
            manager = {
                "goal": "Upgrades on company trips are paid with the company card on file.",
                "instructions": "Name the card to use when asked; approve the upgrade.",
                "known_info": {"company_card": card["id"]},
            }
            basis = ["ENV", "ENV_ASSERTION"]
        else:
            task = (
                f"The member with user id {user['user_id']} wants to move reservation "
                f"{r['reservation_id']} to a better cabin, paid with their {card_text}. "
                "Handle it according to the airline policy; members sometimes change their "
                "request during a conversation."
            )
            goal = "Move my reservation to the business cabin, paid with my card."
            instructions = "Confirm the fare difference when asked."
            revisions = [
                {
                    "at_turn": int(self.rng.integers(2, 5)),
                    "goal": "Business is too expensive; I only want to move up to economy.",
                    "known_info": {"cabin_wanted": target},
                }
            ]
            basis = ["ENV", "ACTION"]
        self.add(
            pattern,
            user=user,
            reservation_id=r["reservation_id"],
            task=task,
            goal=goal,
            instructions=instructions,
            known_info=known,
            calls=calls,
            basis=basis,
            protect=protect,
            asserts=[
                env_assertion(
                    "assert_reservation_cabin",
                    {"reservation_id": r["reservation_id"], "cabin": target},
                    f"the reservation is in {CABIN_NAMES[target]}",
                )
            ]
            if "ENV_ASSERTION" in basis
            else None,
            revisions=revisions,
            manager=manager,
            template="update_reservation_flights_cabin",
        )

    def new_date(self, pattern: str) -> None:
        """Move a one-way trip to another date; the member revises the date (F)."""

        def fits(r: dict[str, Any]) -> bool:
            if r["flight_type"] != "one_way" or r["cabin"] == "basic_economy":
                return False
            return len(self._alternatives(r)) >= 2

        r = self.reservation(fits)
        user = self.user(r)
        options = self._alternatives(r)
        first, final = self.builder.sample(options, 2)
        card = self.card(user)
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", {"reservation_id": r["reservation_id"]}),
            (
                "search_direct_flight",
                {"origin": r["origin"], "destination": r["destination"], "date": final[1]},
            ),
            (
                "update_reservation_flights",
                {
                    "reservation_id": r["reservation_id"],
                    "cabin": r["cabin"],
                    "flights": [{"flight_number": final[0], "date": final[1]}],
                    "payment_id": card["id"],
                },
            ),
        ]
        card_text = f"{card['brand']} card ending in {card['last_four']}"
        self.add(
            pattern,
            user=user,
            reservation_id=r["reservation_id"],
            task=(
                f"The member with user id {user['user_id']} wants to fly on another day on "
                f"reservation {r['reservation_id']} (same route and cabin), paying any fare "
                f"difference with their {card_text}. Handle it according to the airline "
                "policy; members sometimes change their request during a conversation."
            ),
            goal="Move my trip to another day on the same route.",
            instructions="Give the new travel date when asked.",
            known_info={"new_travel_date": first[1]},
            calls=calls,
            basis=["ENV", "ACTION"],
            revisions=[
                {
                    "at_turn": int(self.rng.integers(2, 5)),
                    "goal": "That day no longer works for me; I need to fly on a different day.",
                    "known_info": {"new_travel_date": final[1]},
                }
            ],
            template="update_reservation_flights_date",
        )

    def _alternatives(self, r: dict[str, Any]) -> list[tuple[str, str]]:
        """(flight, date) pairs on the reservation's route, on other days, with seats."""
        segment = r["flights"][0]
        result = []
        for flight in self.db["flights"].values():
            if flight["origin"] != r["origin"] or flight["destination"] != r["destination"]:
                continue
            for date, status in flight["dates"].items():
                if (
                    date > TODAY
                    and date != segment["date"]
                    and status["status"] == "available"
                    and status["available_seats"][r["cabin"]] >= len(r["passengers"])
                ):
                    result.append((flight["flight_number"], date))
        dates = {}
        for number, date in result:
            dates.setdefault(date, (number, date))
        return list(dates.values())

    def certificate(self, pattern: str) -> None:
        """Compensate an eligible member for a cancelled flight (C, protected)."""

        def fits(r: dict[str, Any]) -> bool:
            user = self.user(r)
            eligible = compensation_eligible(user["membership"], r["insurance"], r["cabin"])
            return eligible and any(
                self.db["flights"][s["flight_number"]]["dates"][s["date"]]["status"] == "cancelled"
                for s in r["flights"]
            )

        r = self._past_reservation(fits)
        user = self.user(r)
        segment = next(
            s
            for s in r["flights"]
            if self.db["flights"][s["flight_number"]]["dates"][s["date"]]["status"] == "cancelled"
        )
        amount = CANCELLED_FLIGHT_COMPENSATION * len(r["passengers"])
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", {"reservation_id": r["reservation_id"]}),
            (
                "get_flight_status",
                {"flight_number": segment["flight_number"], "date": segment["date"]},
            ),
            ("send_certificate", {"user_id": user["user_id"], "amount": amount}),
        ]
        self.add(
            pattern,
            user=user,
            reservation_id=r["reservation_id"],
            task=(
                f"The member with user id {user['user_id']} complains that flight "
                f"{segment['flight_number']} on {segment['date']} of reservation "
                f"{r['reservation_id']} was cancelled and asks for compensation. Check the "
                "facts and handle the request according to the airline policy. Sending a "
                "certificate needs the member's explicit approval."
            ),
            goal="Get compensation for my cancelled flight.",
            instructions="Approve the compensation when asked.",
            known_info={},
            calls=calls,
            basis=["ENV", "ACTION"],
            protect=("send_certificate",),
            template="send_certificate",
        )

    def _past_reservation(self, accept: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return self.draw(
            "reservations",
            "reservation_id",
            lambda r: r["status"] is None and accept(r),
            "no reservation with a cancelled flight left",
        )

    def book(self, pattern: str) -> None:
        """Book a one-way economy flight for the member (C, protected)."""
        user = self.builder.pick(list(self.db["users"].values()))
        options = [
            (number, date, status)
            for number, flight in self.db["flights"].items()
            for date, status in flight["dates"].items()
            if status["status"] == "available" and status["available_seats"]["economy"] >= 1
        ]
        number, date, status = self.builder.pick(options)
        flight = self.db["flights"][number]
        card = self.card(user)
        price = status["prices"]["economy"]
        me = {
            "first_name": user["name"]["first_name"],
            "last_name": user["name"]["last_name"],
            "dob": user["dob"],
        }
        calls = [
            ("get_user_details", {"user_id": user["user_id"]}),
            (
                "search_direct_flight",
                {"origin": flight["origin"], "destination": flight["destination"], "date": date},
            ),
            (
                "book_reservation",
                {
                    "user_id": user["user_id"],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_type": "one_way",
                    "cabin": "economy",
                    "flights": [{"flight_number": number, "date": date}],
                    "passengers": [me],
                    "payment_methods": [{"payment_id": card["id"], "amount": price}],
                    "total_baggages": 0,
                    "nonfree_baggages": 0,
                    "insurance": "no",
                },
            ),
        ]
        card_text = f"{card['brand']} card ending in {card['last_four']}"
        self.add(
            pattern,
            user=user,
            reservation_id=None,
            task=(
                f"The member with user id {user['user_id']} wants a one-way economy seat for "
                f"themselves on flight {number} from {flight['origin']} to "
                f"{flight['destination']} on {date}, no checked bags, no insurance, paid with "
                f"their {card_text}. Handle it according to the airline policy. A booking "
                "needs the member's explicit approval of the price."
            ),
            goal="Book the flight I asked for.",
            instructions="Approve the booking when asked; decline bags and insurance.",
            known_info={},
            calls=calls,
            basis=["ENV", "ACTION"],
            protect=("book_reservation",),
            template="book_reservation",
        )


def build(seed: int = SEED) -> TaskBuilder:
    """Generate all airline tasks (pattern by pattern, templates in a fixed rotation)."""
    gen = _Generator(seed)
    a_templates = [gen.bags, gen.passenger_dob, gen.cancel]
    in_rotation("A", COUNTS["A"], a_templates)
    c_templates = [gen.cancel, gen.cabin, gen.certificate, gen.book]
    in_rotation("C", COUNTS["C"], c_templates)
    d_templates = [gen.cabin, gen.bags]
    in_rotation("D", COUNTS["D"], d_templates)
    f_templates = [
        lambda p: gen.bags(p, revised=True),
        lambda p: gen.cabin(p, revised=True),
        gen.new_date,
    ]
    in_rotation("F", COUNTS["F"], f_templates)
    return gen.builder


def write(path: Path | None = None, seed: int = SEED) -> Path:
    """Generate the tasks and write them to ``path`` (default: :data:`OUTPUT`)."""
    return build(seed).write(path or OUTPUT)
