"""Airline database: the τ²-bench schema and a seeded generator of a month of flights.

The generated airline flies 300 flights (``HAT001``..``HAT300``) between the 20 fixed
airports every day of May 2024. "Now" is 2024-05-15 15:00 EST: earlier dates have
landed or were cancelled, today's flights are in every state, later ones are bookable
with seats and prices per cabin. 500 members hold 2,000 reservations.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from hasbench.envs import retail_db
from hasbench.envs.airline.policy import BAG_FEE, INSURANCE_FEE, NOW
from hasbench.envs.retail_db import (
    CITIES,
    FIRST_NAMES,
    LAST_NAMES,
    STREET_KINDS,
    STREETS,
    CreditCard,
    Name,
)
from hasbench.envs.service import id_mismatches

TODAY = NOW[:10]
CABINS = ("basic_economy", "economy", "business")
AIRPORTS = [
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
    ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"),
    ("MIA", "Miami"), ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"),
    ("LAS", "Las Vegas"), ("MCO", "Orlando"), ("EWR", "Newark"), ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"), ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
]  # fmt: skip
DATES = [f"2024-05-{day:02d}" for day in range(1, 31)]
CABIN_PRICES = {"basic_economy": (50, 100), "economy": (100, 200), "business": (200, 500)}
CABIN_SEATS = {"basic_economy": (0, 21), "economy": (0, 21), "business": (0, 21)}


class Available(BaseModel):
    """A bookable flight date."""

    status: Literal["available"]
    available_seats: dict[str, int]
    prices: dict[str, int]


class OnTime(BaseModel):
    """Today's flight, not departed yet, on schedule."""

    status: Literal["on time"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class Delayed(BaseModel):
    """Today's flight, not departed yet, late."""

    status: Literal["delayed"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class Flying(BaseModel):
    """Today's flight in the air."""

    status: Literal["flying"]
    actual_departure_time_est: str
    estimated_arrival_time_est: str


class Landed(BaseModel):
    """A flown flight."""

    status: Literal["landed"]
    actual_departure_time_est: str
    actual_arrival_time_est: str


class Cancelled(BaseModel):
    """A cancelled flight date."""

    status: Literal["cancelled"]


FlightDateStatus = Annotated[
    Available | OnTime | Delayed | Flying | Landed | Cancelled, Field(discriminator="status")
]


class Flight(BaseModel):
    """A scheduled flight and its state on each date."""

    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDateStatus]


class Address(retail_db.Address):
    """A postal address (``address2`` may be missing)."""

    address2: str | None = None


class GiftCard(BaseModel):
    """A gift card with its remaining amount."""

    source: Literal["gift_card"]
    id: str
    amount: float


class Certificate(BaseModel):
    """A travel certificate (used once, whatever the remainder)."""

    source: Literal["certificate"]
    id: str
    amount: float


PaymentMethod = Annotated[CreditCard | GiftCard | Certificate, Field(discriminator="source")]


class Passenger(BaseModel):
    """A traveller on a reservation."""

    first_name: str
    last_name: str
    dob: str


class User(BaseModel):
    """A member."""

    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Literal["gold", "silver", "regular"]
    reservations: list[str]


class ReservationFlight(BaseModel):
    """One segment of a reservation with its per-passenger price at booking time."""

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class Payment(BaseModel):
    """A charge (positive) or refund (negative) on a payment method."""

    payment_id: str
    amount: int


class Reservation(BaseModel):
    """A booking."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: Literal["round_trip", "one_way"]
    cabin: Literal["business", "economy", "basic_economy"]
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Literal["yes", "no"]
    status: Literal["cancelled"] | None = None


class FlightDB(BaseModel):
    """The whole airline database."""

    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]


def check_airline_db(db: dict[str, Any]) -> list[str]:
    """Cross-record problems: key/id mismatches, dangling user and flight ids."""
    problems = id_mismatches(
        db, {"flights": "flight_number", "users": "user_id", "reservations": "reservation_id"}
    )
    for rid, reservation in db["reservations"].items():
        if reservation["user_id"] not in db["users"]:
            problems.append(f"reservations.{rid}: unknown user_id {reservation['user_id']!r}")
        for segment in reservation["flights"]:
            if segment["flight_number"] not in db["flights"]:
                problems.append(f"reservations.{rid}: unknown flight {segment['flight_number']!r}")
    for user_id, user in db["users"].items():
        for rid in user["reservations"]:
            if rid not in db["reservations"]:
                problems.append(f"users.{user_id}.reservations: unknown reservation {rid!r}")
    return problems


# -- generator ------------------------------------------------------------------------


def generate_airline_db(
    seed: int, n_flights: int = 300, n_users: int = 500, n_reservations: int = 2000
) -> dict[str, Any]:
    """An airline database in τ²-bench format, fully determined by ``seed``."""
    rng = np.random.default_rng(seed)
    flights = _flights(rng, n_flights)
    users = _users(rng, n_users)
    reservations = _reservations(rng, flights, users, n_reservations)
    return {"flights": flights, "users": users, "reservations": reservations}


def _clock(minutes: int) -> str:
    """``HH:MM:SS`` for minutes after midnight, with ``+1`` past midnight."""
    day, rest = divmod(minutes, 24 * 60)
    return f"{rest // 60:02d}:{rest % 60:02d}:00" + ("+1" if day else "")


def _stamp(date: str, minutes: int) -> str:
    day, rest = divmod(minutes, 24 * 60)
    date = f"2024-05-{int(date[-2:]) + day:02d}"
    return f"{date}T{rest // 60:02d}:{rest % 60:02d}:00"


def _flights(rng: np.random.Generator, n: int) -> dict[str, Any]:
    codes = [code for code, _ in AIRPORTS]
    flights = {}
    now_minutes = 15 * 60
    for index in range(1, n + 1):
        origin, destination = (codes[int(i)] for i in rng.choice(len(codes), 2, replace=False))
        departure = int(rng.integers(5 * 4, 23 * 4)) * 15
        arrival = departure + int(rng.integers(4, 24)) * 15
        base = {cabin: int(rng.integers(*CABIN_PRICES[cabin])) for cabin in CABINS}
        dates: dict[str, Any] = {}
        for date in DATES:
            if date < TODAY or (date == TODAY and arrival <= now_minutes):
                if rng.random() < 0.08:
                    dates[date] = {"status": "cancelled"}
                else:
                    shift = int(rng.integers(-10, 60))
                    dates[date] = {
                        "status": "landed",
                        "actual_departure_time_est": _stamp(date, departure + shift),
                        "actual_arrival_time_est": _stamp(date, arrival + shift),
                    }
            elif date == TODAY:
                late = int(rng.integers(0, 4)) * 30
                if departure <= now_minutes:
                    dates[date] = {
                        "status": "flying",
                        "actual_departure_time_est": _stamp(date, departure),
                        "estimated_arrival_time_est": _stamp(date, arrival),
                    }
                else:
                    dates[date] = {
                        "status": "delayed" if late else "on time",
                        "estimated_departure_time_est": _stamp(date, departure + late),
                        "estimated_arrival_time_est": _stamp(date, arrival + late),
                    }
            else:
                dates[date] = {
                    "status": "available",
                    "available_seats": {c: int(rng.integers(*CABIN_SEATS[c])) for c in CABINS},
                    "prices": {c: int(base[c] * rng.uniform(0.85, 1.2)) for c in CABINS},
                }
        number = f"HAT{index:03d}"
        flights[number] = {
            "flight_number": number,
            "origin": origin,
            "destination": destination,
            "scheduled_departure_time_est": _clock(departure),
            "scheduled_arrival_time_est": _clock(arrival),
            "dates": dates,
        }
    return flights


def _person(rng: np.random.Generator) -> tuple[str, str, str]:
    first = FIRST_NAMES[int(rng.integers(len(FIRST_NAMES)))]
    last = LAST_NAMES[int(rng.integers(len(LAST_NAMES)))]
    year, month, day = (int(rng.integers(a, b)) for a, b in ((1950, 2010), (1, 13), (1, 29)))
    return first, last, f"{year}-{month:02d}-{day:02d}"


def _users(rng: np.random.Generator, n: int) -> dict[str, Any]:
    users: dict[str, Any] = {}
    used: set[str] = set()

    def new_id(prefix: str, digits: int) -> str:
        while True:
            value = f"{prefix}{int(rng.integers(10 ** (digits - 1), 10**digits))}"
            if value not in used:
                used.add(value)
                return value

    while len(users) < n:
        first, last, dob = _person(rng)
        user_id = new_id(f"{first.lower()}_{last.lower()}_", 4)
        methods: dict[str, Any] = {}
        for _ in range(int(rng.integers(1, 3))):
            method_id = new_id("credit_card_", 7)
            brand = ["visa", "mastercard", "amex"][int(rng.integers(3))]
            last_four = f"{int(rng.integers(10000)):04d}"
            methods[method_id] = {
                "source": "credit_card", "id": method_id, "brand": brand, "last_four": last_four
            }  # fmt: skip
        for source in ("gift_card", "certificate"):
            for _ in range(int(rng.integers(0, 3))):
                method_id = new_id(f"{source}_", 7)
                amount = float(
                    rng.integers(1, 51) * 10
                    if source == "gift_card"
                    else rng.choice([100, 150, 250, 500])
                )
                methods[method_id] = {"source": source, "id": method_id, "amount": amount}
        city, state, zip_prefix = CITIES[int(rng.integers(len(CITIES)))]
        street = f"{int(rng.integers(10, 9999))} {STREETS[int(rng.integers(len(STREETS)))]} "
        street += STREET_KINDS[int(rng.integers(len(STREET_KINDS)))]
        saved = []
        for _ in range(int(rng.integers(0, 3))):
            p_first, p_last, p_dob = _person(rng)
            saved.append({"first_name": p_first, "last_name": p_last, "dob": p_dob})
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": {
                "address1": street,
                "address2": f"Suite {int(rng.integers(100, 999))}" if rng.random() < 0.5 else None,
                "city": city,
                "country": "USA",
                "state": state,
                "zip": f"{zip_prefix}{int(rng.integers(100)):02d}",
            },
            "email": f"{first}.{last}{user_id[-4:]}@example.com".lower(),
            "dob": dob,
            "payment_methods": methods,
            "saved_passengers": saved,
            "membership": ["regular", "silver", "gold"][int(rng.choice(3, p=[0.5, 0.3, 0.2]))],
            "reservations": [],
        }
    return users


def _price(flight: dict[str, Any], date: str, cabin: str, rng: np.random.Generator) -> int:
    status = flight["dates"][date]
    if status["status"] == "available":
        return status["prices"][cabin]
    return int(rng.integers(*CABIN_PRICES[cabin]))


def _reservations(
    rng: np.random.Generator, flights: dict[str, Any], users: dict[str, Any], n: int
) -> dict[str, Any]:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    by_route: dict[tuple[str, str], list[str]] = {}
    for number, flight in flights.items():
        by_route.setdefault((flight["origin"], flight["destination"]), []).append(number)
    numbers = list(flights)
    user_list = list(users.values())
    reservations: dict[str, Any] = {}
    while len(reservations) < n:
        rid = "".join(alphabet[int(i)] for i in rng.integers(len(alphabet), size=6))
        if rid in reservations or rid.startswith("HAT"):
            continue
        user = user_list[int(rng.integers(len(user_list)))]
        outbound = flights[numbers[int(rng.integers(len(numbers)))]]
        day = int(rng.integers(1, 28))
        date = f"2024-05-{day:02d}"
        cabin = CABINS[int(rng.choice(3, p=[0.3, 0.5, 0.2]))]
        segments = [(outbound, date)]
        back = by_route.get((outbound["destination"], outbound["origin"]), [])
        if back and rng.random() < 0.6:
            return_day = min(30, day + int(rng.integers(1, 8)))
            segments.append(
                (flights[back[int(rng.integers(len(back)))]], f"2024-05-{return_day:02d}")
            )
        count = int(rng.integers(1, 4))
        passengers = [
            {
                "first_name": user["name"]["first_name"],
                "last_name": user["name"]["last_name"],
                "dob": user["dob"],
            }
        ]
        while len(passengers) < count:
            first, last, dob = _person(rng)
            passengers.append({"first_name": first, "last_name": last, "dob": dob})
        legs = [
            {
                "flight_number": flight["flight_number"],
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": leg_date,
                "price": _price(flight, leg_date, cabin, rng),
            }
            for flight, leg_date in segments
        ]
        insurance = "yes" if rng.random() < 0.35 else "no"
        total_bags = int(rng.integers(0, count + 2))
        nonfree = int(rng.integers(0, total_bags + 1)) if rng.random() < 0.3 else 0
        total = sum(leg["price"] for leg in legs) * count + BAG_FEE * nonfree
        total += INSURANCE_FEE * count if insurance == "yes" else 0
        cards = [m for m, v in user["payment_methods"].items() if v["source"] == "credit_card"]
        method = cards[int(rng.integers(len(cards)))]
        history = [{"payment_id": method, "amount": total}]
        created_day = max(1, day - int(rng.integers(1, 20)))
        hour, minute = int(rng.integers(0, 24)), int(rng.integers(0, 60))
        created = f"2024-05-{created_day:02d}T{hour:02d}:{minute:02d}:00"
        if created > NOW:
            created_day = int(rng.integers(1, 15))
            created = f"2024-05-{created_day:02d}{created[10:]}"
        status = None
        if rng.random() < 0.08:
            status = "cancelled"
            history.append({"payment_id": method, "amount": -total})
        reservations[rid] = {
            "reservation_id": rid,
            "user_id": user["user_id"],
            "origin": outbound["origin"],
            "destination": outbound["destination"],
            "flight_type": "round_trip" if len(legs) == 2 else "one_way",
            "cabin": cabin,
            "flights": legs,
            "passengers": passengers,
            "payment_history": history,
            "created_at": created,
            "total_baggages": total_bags,
            "nonfree_baggages": nonfree,
            "insurance": insurance,
            "status": status,
        }
        user["reservations"].append(rid)
    return reservations
