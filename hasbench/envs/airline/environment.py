"""The Airline environment: the airline's database and the agent's tools on it.

Tool names, parameters, checks, effects, id schemes and the fixed "now"
(2024-05-15 15:00 EST) follow τ²-bench's airline toolkit. Differences, all stricter:
cancelling or changing an already cancelled reservation is refused, baggage counts must
be consistent (0 <= nonfree <= total), a certificate must be worth more than 0, and gift
card balances are rounded to cents. Imported τ² tasks run with ``environment.compat:
tau2``, which accepts those calls and keeps balances unrounded, as τ²-bench does.
Policy rules the API does not enforce in τ²-bench (basic-economy changes, cancellation
eligibility, compensation) are left to the agent and checked by the task criteria.
Every check runs before any write, and writes change private copies of the records they
touch (copy-on-write).
"""

from __future__ import annotations

from typing import Any, ClassVar

from hasbench.envs.airline.checks import AirlineChecks
from hasbench.envs.airline.db import FlightDB, check_airline_db, generate_airline_db
from hasbench.envs.airline.flights import FlightTools
from hasbench.envs.airline.reservations import ReservationTools
from hasbench.envs.service import ServiceEnvironment


class AirlineEnvironment(FlightTools, ReservationTools, AirlineChecks, ServiceEnvironment):
    """An airline's flights, members and reservations, and the support agent's tools."""

    domain: ClassVar[str] = "airline"
    schema = FlightDB

    @classmethod
    def generate_db(cls, seed: int) -> dict[str, Any]:
        """The seeded airline (300 flights over May 2024, 500 users, 2,000 reservations)."""
        return generate_airline_db(seed)

    @classmethod
    def check_db(cls, db: dict[str, Any]) -> list[str]:
        """Dangling ids and key/id mismatches."""
        return check_airline_db(db)
