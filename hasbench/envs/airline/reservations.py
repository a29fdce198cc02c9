"""Airline members and their reservations: lookups, payments, and the agent's tools.

Booking, cancelling and changing a reservation check everything before they write, and
write on private copies of the records they touch (copy-on-write). New reservation and
certificate ids come from fixed lists, as in τ²-bench.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

from hasbench.envs.airline.policy import BAG_FEE, INSURANCE_FEE, NOW
from hasbench.envs.base import ToolError, tool
from hasbench.envs.service import not_found

Cabin = Literal["business", "economy", "basic_economy"]
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")


class FlightInfo(TypedDict):
    """A flight on a date."""

    flight_number: str
    date: str


class PassengerInfo(TypedDict):
    """A passenger's name and date of birth (YYYY-MM-DD)."""

    first_name: str
    last_name: str
    dob: str


class PaymentInfo(TypedDict):
    """An amount to charge on one of the member's payment methods."""

    payment_id: str
    amount: float


class ReservationTools:
    """Member and reservation lookups, payments, and the agent's reservation tools.

    Mixed into :class:`~hasbench.envs.airline.environment.AirlineEnvironment`; books on
    the flights of :class:`~hasbench.envs.airline.flights.FlightTools`.
    """

    def _user(self, user_id: str) -> dict[str, Any]:
        user = self.db["users"].get(user_id)
        if user is None:
            raise not_found(f"User {user_id} not found")
        return user

    def _reservation(self, reservation_id: str) -> dict[str, Any]:
        reservation = self.db["reservations"].get(reservation_id)
        if reservation is None:
            raise not_found(f"Reservation {reservation_id} not found")
        return reservation

    def _active_reservation(self, reservation_id: str) -> dict[str, Any]:
        reservation = self._reservation(reservation_id)
        if reservation["status"] == "cancelled" and self.compat != "tau2":
            raise ToolError("precondition_failed", f"Reservation {reservation_id} is cancelled")
        return reservation

    def _update_method(self, user: dict[str, Any], payment_id: str, price: float) -> dict[str, Any]:
        """A payment method that may settle a change of ``price`` (checks only)."""
        method = user["payment_methods"].get(payment_id)
        if method is None:
            raise not_found("Payment method not found")
        if method["source"] == "certificate":
            raise ToolError(
                "precondition_failed", "Certificate cannot be used to update reservation"
            )
        if method["source"] == "gift_card" and method["amount"] < price:
            raise ToolError("precondition_failed", "Gift card balance is not enough")
        return method

    def _check_bags(self, total: int, nonfree: int) -> None:
        if not 0 <= nonfree <= total and self.compat != "tau2":
            raise ToolError(
                "invalid_arguments",
                "Bag counts must satisfy 0 <= nonfree_baggages <= total_baggages",
            )

    def _pay_change(
        self,
        reservation_id: str,
        user_id: str,
        method: dict[str, Any],
        payment_id: str,
        amount: float,
    ) -> None:
        """Record a change's payment on a reservation and take it off a gift card."""
        history = self.writable("reservations", reservation_id, "payment_history")
        history.append({"payment_id": payment_id, "amount": amount})
        if method["source"] == "gift_card":
            self._debit(self.writable("users", user_id, "payment_methods", payment_id), amount)

    def _debit(self, method: dict[str, Any], amount: float) -> None:
        """Take an amount off a gift card (rounded to cents unless in τ² mode)."""
        balance = method["amount"] - amount
        method["amount"] = balance if self.compat == "tau2" else round(balance, 2)

    @tool(kind="read")
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """A member's profile: contact, payment methods, saved passengers, reservations.

        Args:
            user_id: The user id, e.g. "sara_doe_496".
        """
        return self._user(user_id)

    @tool(kind="read")
    def get_reservation_details(self, reservation_id: str) -> dict[str, Any]:
        """A reservation's flights, passengers, payments, bags and insurance.

        Args:
            reservation_id: The 6-character reservation id, e.g. "ZFA04Y".
        """
        return self._reservation(reservation_id)

    @tool(kind="write", risk="high")
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: Literal["round_trip", "one_way"],
        cabin: Cabin,
        flights: list[FlightInfo],
        passengers: list[PassengerInfo],
        payment_methods: list[PaymentInfo],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Literal["yes", "no"],
    ) -> dict[str, Any]:
        """Book a reservation and charge it to the member's payment methods.

        Args:
            user_id: The member who books, e.g. "sara_doe_496".
            origin: IATA code of the trip's start, e.g. "SFO".
            destination: IATA code of the trip's end (turnaround city for a round trip).
            flight_type: "one_way" or "round_trip".
            cabin: "basic_economy", "economy" or "business" (same for every flight).
            flights: Every segment, each {"flight_number", "date"}.
            passengers: Every traveller, each {"first_name", "last_name", "dob"}.
            payment_methods: Each {"payment_id", "amount"}; amounts must sum to the total.
            total_baggages: Checked bags in total.
            nonfree_baggages: Bags that cost 50 each.
            insurance: "yes" (30 per passenger) or "no".
        """
        user = self._user(user_id)
        rid = next((r for r in NEW_RESERVATION_IDS if r not in self.db["reservations"]), None)
        if rid is None:
            raise ToolError("precondition_failed", "Too many reservations")
        self._check_bags(total_baggages, nonfree_baggages)
        segments = [
            self._bookable(f["flight_number"], f["date"], cabin, len(passengers)) for f in flights
        ]
        total = sum(s["price"] for s in segments) * len(passengers)
        total += INSURANCE_FEE * len(passengers) if insurance == "yes" else 0
        total += BAG_FEE * nonfree_baggages
        for payment in payment_methods:
            method = user["payment_methods"].get(payment["payment_id"])
            if method is None:
                raise not_found(f"Payment method {payment['payment_id']} not found")
            if (
                method["source"] in ("gift_card", "certificate")
                and method["amount"] < payment["amount"]
            ):
                raise ToolError(
                    "precondition_failed",
                    f"Not enough balance in payment method {payment['payment_id']}",
                )
        if sum(p["amount"] for p in payment_methods) != total:
            raise ToolError(
                "precondition_failed",
                f"Payment amount does not add up, total price is {total}, "
                f"but paid {plain_number(sum(p['amount'] for p in payment_methods))}",
            )
        for payment in payment_methods:  # only the member's changed parts are copied
            key, methods = payment["payment_id"], self.writable("users", user_id, "payment_methods")
            if methods[key]["source"] == "gift_card":
                card = self.writable("users", user_id, "payment_methods", key)
                self._debit(card, payment["amount"])
            elif methods[key]["source"] == "certificate":
                del methods[key]
        for segment in segments:
            seats = self.writable(
                "flights", segment["flight_number"], "dates", segment["date"], "available_seats"
            )
            seats[cabin] -= len(passengers)
        reservation = {
            "reservation_id": rid,
            "user_id": user_id,
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": segments,
            "passengers": [dict(p) for p in passengers],
            "payment_history": [
                {"payment_id": p["payment_id"], "amount": plain_number(p["amount"])}
                for p in payment_methods
            ],
            "created_at": NOW,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
            "status": None,
        }
        self.add_record("reservations", reservation, rid)
        self.writable("users", user_id, "reservations").append(rid)
        return reservation

    @tool(kind="write", risk="high")
    def cancel_reservation(self, reservation_id: str) -> dict[str, Any]:
        """Cancel a reservation; every payment is refunded to its method.

        Args:
            reservation_id: The reservation id, e.g. "ZFA04Y".
        """
        self._active_reservation(reservation_id)
        history = self.writable("reservations", reservation_id, "payment_history")
        history.extend([{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in history])
        reservation = self.db["reservations"][reservation_id]  # the write's copy of it alone
        reservation["status"] = "cancelled"
        return reservation

    @tool(kind="write", risk="medium")
    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> dict[str, Any]:
        """Set a reservation's checked bags; extra non-free bags cost 50 each.

        Args:
            reservation_id: The reservation id.
            total_baggages: New total number of checked bags.
            nonfree_baggages: New number of bags that are paid for.
            payment_id: Credit card or gift card that pays (certificates cannot).
        """
        reservation = self._active_reservation(reservation_id)
        self._check_bags(total_baggages, nonfree_baggages)
        user = self._user(reservation["user_id"])
        price = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        method = self._update_method(user, payment_id, price)
        reservation = self.writable("reservations", reservation_id, shallow=True)
        if price:
            self._pay_change(reservation_id, user["user_id"], method, payment_id, price)
        reservation["total_baggages"] = total_baggages
        reservation["nonfree_baggages"] = nonfree_baggages
        return reservation

    @tool(kind="write", risk="medium")
    def update_reservation_flights(
        self, reservation_id: str, cabin: Cabin, flights: list[FlightInfo], payment_id: str
    ) -> dict[str, Any]:
        """Replace a reservation's flights and/or cabin; the fare difference is settled.

        Segments kept on the same flight, date and cabin keep their original price.

        Args:
            reservation_id: The reservation id.
            cabin: The cabin for every segment.
            flights: The whole new itinerary, each {"flight_number", "date"}, including
                unchanged segments.
            payment_id: Credit card or gift card that pays or receives the difference.
        """
        reservation = self._active_reservation(reservation_id)
        user = self._user(reservation["user_id"])
        count = len(reservation["passengers"])
        segments = []
        for wanted in flights:
            kept = next(
                (
                    s
                    for s in reservation["flights"]
                    if s["flight_number"] == wanted["flight_number"]
                    and s["date"] == wanted["date"]
                    and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept is not None:
                segments.append(dict(kept))
            else:
                segments.append(
                    self._bookable(wanted["flight_number"], wanted["date"], cabin, count)
                )
        delta = (
            sum(s["price"] for s in segments) - sum(s["price"] for s in reservation["flights"])
        ) * count
        method = self._update_method(user, payment_id, delta)
        reservation = self.writable("reservations", reservation_id, shallow=True)
        if delta:
            self._pay_change(reservation_id, user["user_id"], method, payment_id, delta)
        reservation["flights"] = segments
        reservation["cabin"] = cabin
        return reservation

    @tool(kind="write", risk="low")
    def update_reservation_passengers(
        self, reservation_id: str, passengers: list[PassengerInfo]
    ) -> dict[str, Any]:
        """Replace the passengers' details; the number of passengers cannot change.

        Args:
            reservation_id: The reservation id.
            passengers: Every passenger, each {"first_name", "last_name", "dob"}.
        """
        reservation = self._active_reservation(reservation_id)
        if len(passengers) != len(reservation["passengers"]):
            raise ToolError("precondition_failed", "Number of passengers does not match")
        reservation = self.writable("reservations", reservation_id, shallow=True)
        reservation["passengers"] = [dict(p) for p in passengers]
        return reservation

    @tool(kind="write", risk="high")
    def send_certificate(self, user_id: str, amount: float) -> str:
        """Give a member a travel certificate as compensation.

        Args:
            user_id: The member, e.g. "sara_doe_496".
            amount: The certificate's value.
        """
        user = self._user(user_id)
        if amount <= 0 and self.compat != "tau2":
            raise ToolError("invalid_arguments", "Certificate amount must be positive")
        for cid in NEW_CERTIFICATE_IDS:  # the first id the member does not have
            if cid not in user["payment_methods"]:
                break
        else:
            raise ToolError("precondition_failed", "Too many certificates")
        methods = self.writable("users", user_id, "payment_methods")
        methods[cid] = {"source": "certificate", "id": cid, "amount": float(amount)}
        return f"Certificate {cid} added to user {user_id} with amount {plain_number(amount)}."


def plain_number(value: float) -> int | float:
    """Whole amounts as int (so 250 and 250.0 give the same stored state)."""
    return int(value) if float(value).is_integer() else value
