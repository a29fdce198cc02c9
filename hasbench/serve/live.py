"""The live channel: each page gets its seat's state as it changes; actions come back in order.

A page holds one connection (a WebSocket) to the :class:`Room` of its application. On
connecting it gets the whole state of its seat, so a reload or a dropped connection
comes back exactly where the person was; after every change it gets the new state (only
when its own changed). What a page sends is an *action*, ``{"id": ..., "action": {...}}``:
the room applies it and acknowledges ``{"type": "ack", "id": ..., "error": ...}``. An
action sent twice (a resend after a reconnect) is applied once.

Actions that arrive within one :attr:`Room.tick` of each other are applied together, in
the order of their seats (the application's seat order, e.g. the humans' order in the
task), then in the order each page sent them; nothing else runs between them. So two
people acting at the same moment give the same result whatever the network did.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hasbench.serve.tokens import Seat

State = Callable[[Seat], dict[str, Any]]
"""A seat's whole state, as its page shows it (JSON-serializable)."""
Apply = Callable[[Seat, dict[str, Any]], None]
"""Apply one action of a seat; raise ValueError (its message shown on the page) to refuse."""


class Connection(Protocol):
    """One open page."""

    def send(self, text: str) -> None:
        """Send a message to the page (dropped when it has gone)."""
        ...

    def close(self) -> None:
        """Close the connection (its page tries to come back)."""
        ...


@dataclass
class _Arrival:
    order: int
    number: int
    seat: Seat
    connection: Connection
    message_id: str
    action: dict[str, Any]


@dataclass
class _Presence:
    seat: Seat
    connections: list[Connection] = field(default_factory=list)
    last: dict[int, str] = field(default_factory=dict)
    """id(connection) -> the last state text sent to it."""
    joined: bool = False
    done: dict[str, str | None] = field(default_factory=dict)
    """message id -> its error (None: applied), so a resent action is applied once."""


class Room:
    """Who is on which page of an application, what each page shows, and what they do.

    Args:
        state: a seat's state.
        apply: applies one action of a seat.
        order: each seat's place in the order of simultaneous actions, by seat id.
        joined: called with a seat whose page opened for the first time.
        tick: seconds during which arriving actions count as simultaneous, and the
            shortest time between two pushes of new states.
    """

    def __init__(
        self,
        state: State,
        apply: Apply,
        order: dict[str, int],
        joined: Callable[[Seat], None] | None = None,
        tick: float = 0.05,
    ) -> None:
        self._state = state
        self._apply = apply
        self._joined = joined
        self._order = order
        self.tick = tick
        self._presence: dict[str, _Presence] = {}
        self._arrived: list[_Arrival] = []
        self._arrivals = 0
        self._draining: asyncio.Task[None] | None = None
        self._pushing: asyncio.Task[None] | None = None
        self._stopped = False

    # -- presence -----------------------------------------------------------------------

    def connect(self, seat: Seat, connection: Connection) -> None:
        """A page of ``seat`` opened: it gets its whole state at once."""
        presence = self._presence.setdefault(seat.id, _Presence(seat))
        first = not presence.joined
        presence.joined = True
        presence.connections.append(connection)
        self._send_state(seat, connection, self._text(seat))
        if first:
            if self._joined is not None:
                self._joined(seat)
            self.changed()  # others may show who has joined

    def disconnect(self, seat: Seat, connection: Connection) -> None:
        """A page of ``seat`` closed or lost its connection."""
        presence = self._presence.get(seat.id)
        if presence is not None and connection in presence.connections:
            presence.connections.remove(connection)
            presence.last.pop(id(connection), None)
            self.changed()

    def close(self, seat_id: str) -> None:
        """Close every open page of a seat (e.g. its link was replaced)."""
        presence = self._presence.get(seat_id)
        for connection in list(presence.connections if presence else []):
            connection.close()

    def joined(self, seat_id: str) -> bool:
        """Whether the seat's page has been open at least once."""
        presence = self._presence.get(seat_id)
        return presence is not None and presence.joined

    def connected(self, seat_id: str) -> bool:
        """Whether the seat's page is open now."""
        presence = self._presence.get(seat_id)
        return presence is not None and bool(presence.connections)

    def stop(self) -> None:
        """Drop what is still to be pushed or applied, and push nothing more."""
        self._stopped = True
        for task in (self._pushing, self._draining):
            if task is not None:
                task.cancel()

    # -- states out ---------------------------------------------------------------------

    def changed(self) -> None:
        """Something changed: every page whose state differs gets it (within one tick)."""
        if self._stopped:
            return
        if self._pushing is None or self._pushing.done():
            self._pushing = asyncio.get_running_loop().create_task(self._push())

    async def _push(self) -> None:
        await asyncio.sleep(self.tick)
        for presence in list(self._presence.values()):
            if presence.connections:
                text = self._text(presence.seat)
                for connection in list(presence.connections):
                    self._send_state(presence.seat, connection, text)

    def _text(self, seat: Seat) -> str:
        return json.dumps({"type": "state", "state": self._state(seat)}, sort_keys=True)

    def _send_state(self, seat: Seat, connection: Connection, text: str) -> None:
        presence = self._presence[seat.id]
        if presence.last.get(id(connection)) != text:
            presence.last[id(connection)] = text
            connection.send(text)

    # -- actions in ---------------------------------------------------------------------

    def receive(self, seat: Seat, connection: Connection, text: str) -> None:
        """A page sent ``{"id": ..., "action": {...}}``: apply it with those arriving with it.

        A message that is not such an object is answered with an error at once.
        """
        try:
            message = json.loads(text)
            message_id, action = message["id"], message["action"]
            if not isinstance(message_id, str) or not isinstance(action, dict):
                raise TypeError("id must be a string and action an object")
        except (ValueError, KeyError, TypeError) as exc:
            connection.send(json.dumps({"type": "ack", "id": None, "error": f"bad message: {exc}"}))
            return
        self._arrivals += 1
        order = self._order.get(seat.id, len(self._order))
        self._arrived.append(_Arrival(order, self._arrivals, seat, connection, message_id, action))
        if self._draining is None or self._draining.done():
            self._draining = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        """Apply what arrived within one tick, in seat order, then send order."""
        await asyncio.sleep(self.tick)
        batch, self._arrived = self._arrived, []
        for arrival in sorted(batch, key=lambda a: (a.order, a.number)):
            presence = self._presence.setdefault(arrival.seat.id, _Presence(arrival.seat))
            if arrival.message_id in presence.done:
                error = presence.done[arrival.message_id]
            else:
                try:
                    self._apply(arrival.seat, arrival.action)
                    error = None
                except ValueError as exc:
                    error = str(exc)
                presence.done[arrival.message_id] = error
            reply = {"type": "ack", "id": arrival.message_id, "error": error}
            arrival.connection.send(json.dumps(reply))
        self.changed()
