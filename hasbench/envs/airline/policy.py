"""The airline policy's numbers: one place for what ``data/policies/airline.md`` states.

The environment charges the fees, the task builder writes gold paths and the offline
stand-in's playbook applies the rules with these values; the policy text agents read
states the same numbers (``tests/envs/test_airline.py`` checks that it does).
"""

from __future__ import annotations

from datetime import datetime, timedelta

NOW = "2024-05-15T15:00:00"
"""The current time the policy states (US Eastern); the generated airline's "now"."""

FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
"""Free checked bags per passenger, by membership and cabin."""
BAG_FEE = 50
"""The price of each checked bag beyond the free ones."""
INSURANCE_FEE = 30
"""Travel insurance, per passenger."""
CANCELLED_FLIGHT_COMPENSATION = 100
"""The certificate per passenger for a flight the airline cancelled."""
FREE_CANCELLATION_HOURS = 24
"""A booking younger than this may be cancelled whatever its cabin and insurance."""
FREE_CANCELLATION_SINCE = (
    datetime.fromisoformat(NOW) - timedelta(hours=FREE_CANCELLATION_HOURS)
).isoformat()
"""Bookings created after this moment are within :data:`FREE_CANCELLATION_HOURS`."""


def free_bags(membership: str, cabin: str, passengers: int) -> int:
    """The checked bags a reservation carries free of charge."""
    return FREE_BAGS[membership][cabin] * passengers


def compensation_eligible(membership: str, insurance: str, cabin: str) -> bool:
    """Whether a member may be compensated at all: silver or gold, insured, or business."""
    return membership != "regular" or insurance == "yes" or cabin == "business"
