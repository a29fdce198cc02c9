"""Who may open which page: an unguessable link per seat, each kept by one browser.

Every seat of a served application (a person playing a human, a study participant, a
rater, the researcher) gets its own token from :mod:`secrets` (32 random bytes, URL-safe).
A person's link is *claimed* by the first browser that opens it: that browser gets a
secret of its own in a cookie, and from then on the link opens only there (a reload or a
dropped connection comes back in; a forwarded link is refused). The researcher can
:meth:`Tokens.reissue` a person's link (the old one stops working), e.g. when a person
changed laptops. Tokens are compared in constant time.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

TOKEN_BYTES = 32
"""Random bytes per token and per browser secret (256 bits)."""


@dataclass(frozen=True)
class Seat:
    """One place at a served application, with its own link and page.

    Attributes:
        id: the seat's id in its application (a human id, ``researcher``, ...).
        label: how it is named where links are handed out (``user_0 (customer)``).
        page: the page it opens (a file of the application's static pages, without
            ``.html``).
        path: the link's first part: ``join`` for people, ``watch`` for the researcher.
        claimed_by_one_browser: whether the link opens in the first browser only.
    """

    id: str
    label: str
    page: str
    path: str = "join"
    claimed_by_one_browser: bool = True


class Refused(Exception):
    """A link that does not open: unknown, replaced, or kept by another browser."""


class Tokens:
    """The tokens of a set of seats and the browsers that claimed them.

    Args:
        seats: the seats, in the order their actions are applied when they arrive at once.
    """

    def __init__(self, seats: list[Seat]) -> None:
        ids = [seat.id for seat in seats]
        if len(set(ids)) != len(ids):
            raise ValueError(f"seat ids must be unique: {ids}")
        self.seats = {seat.id: seat for seat in seats}
        self.order = {seat.id: index for index, seat in enumerate(seats)}
        self._token = {seat.id: secrets.token_urlsafe(TOKEN_BYTES) for seat in seats}
        self._browser: dict[str, str] = {}

    def keep(self, tokens: dict[str, str]) -> None:
        """Use earlier tokens for these seats (a restarted application keeps its links).

        Seats this set does not have are ignored.
        """
        for seat_id, token in tokens.items():
            if seat_id in self._token:
                self._token[seat_id] = token

    def token(self, seat_id: str) -> str:
        """The current token of a seat."""
        return self._token[seat_id]

    def find(self, token: str) -> Seat:
        """The seat whose current token is ``token``.

        Raises:
            Refused: no seat has this token.
        """
        found = None
        for seat_id, current in self._token.items():  # every token compared, in constant time
            if secrets.compare_digest(current.encode(), token.encode()):
                found = seat_id
        if found is None:
            raise Refused("unknown link")
        return self.seats[found]

    def admit(self, token: str, browser: str | None) -> tuple[Seat, str | None]:
        """Let a browser in through a link, claiming the link on its first visit.

        Args:
            token: the link's token.
            browser: the browser's secret for this link (its cookie), if it has one.

        Returns:
            The seat, and a new browser secret to set when this visit claimed the link.

        Raises:
            Refused: an unknown token, or a link another browser claimed.
        """
        seat = self.find(token)
        if not seat.claimed_by_one_browser:
            return seat, None
        kept = self._browser.get(seat.id)
        if kept is None:
            fresh = secrets.token_urlsafe(TOKEN_BYTES)
            self._browser[seat.id] = fresh
            return seat, fresh
        if browser is not None and secrets.compare_digest(kept.encode(), browser.encode()):
            return seat, None
        raise Refused("this link was already opened in another browser")

    def check(self, token: str, browser: str | None) -> Seat:
        """The seat of a browser that already came in through ``token`` (no new claim).

        Raises:
            Refused: an unknown token, or a browser that did not claim the link.
        """
        seat = self.find(token)
        if seat.claimed_by_one_browser:
            kept = self._browser.get(seat.id)
            if kept is None or browser is None:
                raise Refused("open the link first")
            if not secrets.compare_digest(kept.encode(), browser.encode()):
                raise Refused("this link was already opened in another browser")
        return seat

    def reissue(self, seat_id: str) -> str:
        """Give a seat a new token (its old link stops working) and free it for a browser."""
        self._token[seat_id] = secrets.token_urlsafe(TOKEN_BYTES)
        self._browser.pop(seat_id, None)
        return self._token[seat_id]

    def claimed(self, seat_id: str) -> bool:
        """Whether a browser has claimed the seat's link."""
        return seat_id in self._browser


def cookie_name(token: str) -> str:
    """The cookie holding a browser's secret for one link (named after a hash of it)."""
    return "hb-" + hashlib.sha256(token.encode()).hexdigest()[:16]
