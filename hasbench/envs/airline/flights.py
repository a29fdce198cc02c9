"""Airline flights: finding a flight on a date, searching, and what a segment costs."""

from __future__ import annotations

from typing import Any

from hasbench.envs.airline.db import AIRPORTS
from hasbench.envs.base import ToolError, tool
from hasbench.envs.service import not_found


class FlightTools:
    """Flight lookups and the agent's flight search tools.

    Mixed into :class:`~hasbench.envs.airline.environment.AirlineEnvironment`.
    """

    def _flight_date(self, flight_number: str, date: str) -> dict[str, Any]:
        flight = self.db["flights"].get(flight_number)
        if flight is None:
            raise not_found(f"Flight {flight_number} not found")
        status = flight["dates"].get(date)
        if status is None:
            raise not_found(f"Flight {flight_number} not found on date {date}")
        return status

    def _bookable(self, flight_number: str, date: str, cabin: str, seats: int) -> dict[str, Any]:
        """The segment record for a bookable flight, with today's price for the cabin."""
        status = self._flight_date(flight_number, date)
        if status["status"] != "available":
            raise ToolError(
                "precondition_failed", f"Flight {flight_number} not available on date {date}"
            )
        if status["available_seats"][cabin] < seats:
            raise ToolError("precondition_failed", f"Not enough seats on flight {flight_number}")
        flight = self.db["flights"][flight_number]
        return {
            "flight_number": flight_number,
            "origin": flight["origin"],
            "destination": flight["destination"],
            "date": date,
            "price": status["prices"][cabin],
        }

    @staticmethod
    def _direct(flight: dict[str, Any], status: dict[str, Any], date: str | None) -> dict:
        return {
            "flight_number": flight["flight_number"],
            "origin": flight["origin"],
            "destination": flight["destination"],
            "status": "available",
            "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
            "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
            "date": date,
            "available_seats": status["available_seats"],
            "prices": status["prices"],
        }

    @tool(kind="read")
    def list_all_airports(self) -> list[dict[str, str]]:
        """Every airport served, as IATA code and city."""
        return [{"iata": code, "city": city} for code, city in AIRPORTS]

    @tool(kind="read")
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict]:
        """Bookable nonstop flights between two airports on a date.

        Args:
            origin: IATA code of the departure airport, e.g. "JFK".
            destination: IATA code of the arrival airport, e.g. "LAX".
            date: Date as YYYY-MM-DD, e.g. "2024-05-20".
        """
        results = []
        for flight in self.db["flights"].values():
            status = flight["dates"].get(date)
            if (
                flight["origin"] == origin
                and flight["destination"] == destination
                and status is not None
                and status["status"] == "available"
            ):
                results.append(self._direct(flight, status, None))
        return results

    @tool(kind="read")
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[dict]]:
        """Bookable connections with one stop; the second leg leaves after the first lands.

        Args:
            origin: IATA code of the departure airport.
            destination: IATA code of the final airport.
            date: Departure date of the first leg, YYYY-MM-DD.
        """
        results = []
        for first in self.db["flights"].values():
            status = first["dates"].get(date)
            if first["origin"] != origin or status is None or status["status"] != "available":
                continue
            if first["destination"] == destination:
                continue
            arrival = first["scheduled_arrival_time_est"]
            second_date = date
            if arrival.endswith("+1"):
                second_date = f"{date[:8]}{int(date[8:]) + 1:02d}"
                arrival = arrival[:-2]
            for second in self.db["flights"].values():
                leg = second["dates"].get(second_date)
                if (
                    second["origin"] == first["destination"]
                    and second["destination"] == destination
                    and leg is not None
                    and leg["status"] == "available"
                    and second["scheduled_departure_time_est"] >= arrival
                ):
                    results.append(
                        [self._direct(first, status, date), self._direct(second, leg, second_date)]
                    )
        return results

    @tool(kind="read")
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """The status of a flight on a date (available, on time, delayed, flying, ...).

        Args:
            flight_number: The flight number, e.g. "HAT001".
            date: Date as YYYY-MM-DD.
        """
        return self._flight_date(flight_number, date)["status"]
