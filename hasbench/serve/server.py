"""The server: an application's pages, each behind its seat's private link, and the live channel.

:class:`Server` serves one :class:`Application` (a served episode, a study) on tornado,
in the event loop the application runs in, so the application's state is shared by every
page without locks. Its routes:

- ``/join/TOKEN`` and ``/watch/TOKEN``: the seat's page (a person's, the researcher's),
  after :class:`~hasbench.serve.tokens.Tokens` let the browser in; anything else gets 403.
- ``/live/TOKEN``: the page's WebSocket (:class:`~hasbench.serve.live.Room`), refused with
  403 unless the same browser came in through the link first.
- ``/asset/TOKEN/NAME``: a file the application makes for that seat (e.g. a graph).
- ``/static/...``: the pages' scripts and styles (they hold no data).

Every answer forbids caching, framing, referrers (the token is in the address) and any
script or style from elsewhere. The server binds to 127.0.0.1 unless told otherwise, and
binding beyond this computer needs ``open_to_network`` (:func:`check_host`).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from typing import Any, Protocol

import tornado.httpserver
import tornado.netutil
import tornado.web
import tornado.websocket

from hasbench.serve.live import Room
from hasbench.serve.pages import STATIC, render
from hasbench.serve.tokens import Refused, Seat, Tokens, cookie_name

LOG = logging.getLogger("hasbench.serve")
"""The pages, their scripts and styles."""
TOKEN = r"([^/]+)"
"""A token in a route: anything up to the next ``/`` (a wrong one is refused with 403)."""
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
REFUSED_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Link refused</title><link rel="stylesheet" href="/static/serve.css"></head>
<body class="hb-refused"><main><h1>This link does not open here</h1><p>{reason}.</p>
<p>Use the link the researcher gave you, in the browser where you first opened it. If you
lost it, ask the researcher for a new one.</p></main></body></html>"""
_REASONS = {
    "unknown link": "The link is not valid (mistyped, or replaced by a new one)",
    "this link was already opened in another browser": (
        "The link was already opened in another browser"
    ),
    "open the link first": "Open the page through your link first",
}


class Application(Protocol):
    """What the server serves (an episode, a study): seats, their states, their actions.

    The server calls :meth:`bind` once before it starts, :meth:`state` whenever a page
    needs its seat's state, and :meth:`act` for every action a page sends (in the order
    :class:`~hasbench.serve.live.Room` gives). The application calls
    ``server.room.changed()`` whenever what a page shows may have changed.
    """

    title: str
    """What the pages and the printed links are about (e.g. the task id)."""

    def seats(self) -> list[Seat]:
        """Every seat, in the order their simultaneous actions are applied."""
        ...

    def bind(self, server: Server) -> None:
        """Learn the server (its room, its links) before it starts."""
        ...

    def joined(self, seat: Seat) -> None:
        """A seat's page opened for the first time."""
        ...

    def state(self, seat: Seat) -> dict[str, Any]:
        """Everything the seat's page shows now (JSON; nothing another seat may not know)."""
        ...

    def act(self, seat: Seat, action: dict[str, Any]) -> None:
        """Apply an action of the seat's page.

        Raises:
            ValueError: the action is refused; the message is shown on that page.
        """
        ...

    def asset(self, seat: Seat, name: str) -> tuple[str, bytes] | None:
        """A file for the seat (content type, bytes), or None when there is none."""
        ...


def check_host(host: str, open_to_network: bool) -> str | None:
    """Refuse to bind beyond this computer unless asked to; return a warning when asked.

    Raises:
        ValueError: ``host`` is not a loopback address and ``open_to_network`` is off.
    """
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        return None
    if not open_to_network:
        raise ValueError(
            f"--host {host} would let other computers reach the server; add "
            "--open-to-network to do that on purpose (on a network you trust)"
        )
    return (
        f"warning: serving on {host}: anyone on the network who has a link can open its page. "
        "Traffic is not encrypted (plain http); hand each person only their own link, on a "
        "network you trust."
    )


class Server:
    """One application served on tornado in the running event loop.

    Args:
        app: what is served.
        host: the address to bind (127.0.0.1 unless ``open_to_network``).
        port: the port (0: any free one).
        open_to_network: allow an address beyond this computer.
        base_url: how people reach the server, for the printed links (default from the
            bound address).
        tick: see :class:`~hasbench.serve.live.Room`.

    Raises:
        ValueError: a host beyond this computer without ``open_to_network``.
    """

    def __init__(
        self,
        app: Application,
        host: str = "127.0.0.1",
        port: int = 8765,
        *,
        open_to_network: bool = False,
        base_url: str | None = None,
        tick: float = 0.05,
    ) -> None:
        self.warning = check_host(host, open_to_network)
        self.app = app
        self.host, self.port = host, port
        self.base_url = base_url.rstrip("/") if base_url else None
        seats = app.seats()
        self.tokens = Tokens(seats)
        self.room = Room(app.state, app.act, self.tokens.order, app.joined, tick)
        self._http: tornado.httpserver.HTTPServer | None = None
        app.bind(self)

    async def start(self) -> str:
        """Bind and serve; return the server's address (``http://host:port``)."""
        web = tornado.web.Application(
            [
                (r"/", _IndexHandler),
                (rf"/(join|watch)/{TOKEN}", _PageHandler, {"server": self}),
                (rf"/live/{TOKEN}", _LiveHandler, {"server": self}),
                (rf"/asset/{TOKEN}/([a-z0-9_.-]+)", _AssetHandler, {"server": self}),
                (r"/static/(.*)", _StaticHandler, {"path": str(STATIC)}),
            ],
            default_handler_class=_NotFoundHandler,
            log_function=_log,
            websocket_ping_interval=20,
            xsrf_cookies=False,  # no forms; actions travel over the same-origin WebSocket
        )
        sockets = tornado.netutil.bind_sockets(self.port, self.host, family=socket.AF_INET)
        self.port = sockets[0].getsockname()[1]
        self._http = tornado.httpserver.HTTPServer(web)
        self._http.add_sockets(sockets)
        if self.base_url is None:
            shown = socket.gethostname() if self.host in ("0.0.0.0", "") else self.host
            self.base_url = f"http://{shown}:{self.port}"
        return self.base_url

    def link(self, seat_id: str) -> str:
        """The private link of a seat."""
        seat = self.tokens.seats[seat_id]
        return f"{self.base_url}/{seat.path}/{self.tokens.token(seat_id)}"

    def reissue(self, seat_id: str) -> str:
        """A new link for a seat; its old link (and the browser that had it) is refused."""
        self.tokens.reissue(seat_id)
        self.room.close(seat_id)
        return self.link(seat_id)

    async def stop(self) -> None:
        """Stop accepting connections and close the open ones."""
        self.room.stop()
        if self._http is not None:
            self._http.stop()
            await self._http.close_all_connections()
            self._http = None


def _log(handler: tornado.web.RequestHandler) -> None:
    """Log a request without its token (addresses are private links)."""
    path = re.sub(r"^/(join|watch|live|asset)/[^/]+", r"/\1/…", handler.request.path)
    status = handler.get_status()
    level = logging.WARNING if status >= 500 else logging.DEBUG
    LOG.log(level, "%d %s %s", status, handler.request.method, path)


class _Secured(tornado.web.RequestHandler):
    def set_default_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.set_header(name, value)


class _IndexHandler(_Secured):
    def get(self) -> None:
        self.set_status(403)
        self.finish(REFUSED_PAGE.format(reason="This server opens only through a private link"))


class _NotFoundHandler(_Secured):
    def prepare(self) -> None:
        self.set_status(404)
        self.finish("Not found")


class _StaticHandler(tornado.web.StaticFileHandler):
    def set_default_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.set_header(name, value)


class _TokenHandler(_Secured):
    def initialize(self, server: Server) -> None:
        self.server = server

    def refuse(self, error: Refused) -> None:
        self.set_status(403)
        self.finish(REFUSED_PAGE.format(reason=_REASONS.get(str(error), str(error))))

    def browser(self, token: str) -> str | None:
        return self.get_cookie(cookie_name(token))


class _PageHandler(_TokenHandler):
    def get(self, path: str, token: str) -> None:
        try:
            if self.server.tokens.find(token).path != path:  # checked before any claim
                raise Refused("unknown link")
            seat, fresh = self.server.tokens.admit(token, self.browser(token))
        except Refused as error:
            self.refuse(error)
            return
        if fresh is not None:
            self.set_cookie(
                cookie_name(token), fresh, httponly=True, samesite="Strict", path="/",
                expires_days=7,
            )  # fmt: skip
        page = render(seat.page)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page)


class _AssetHandler(_TokenHandler):
    def get(self, token: str, name: str) -> None:
        try:
            seat = self.server.tokens.check(token, self.browser(token))
        except Refused as error:
            self.refuse(error)
            return
        found = self.server.app.asset(seat, name)
        if found is None:
            self.set_status(404)
            self.finish("Not found")
            return
        content_type, data = found
        self.set_header("Content-Type", content_type)
        self.finish(data)


class _LiveHandler(tornado.websocket.WebSocketHandler):
    """A page's live connection (see :mod:`hasbench.serve.live`)."""

    def initialize(self, server: Server) -> None:
        self.server = server
        self.seat: Seat | None = None

    def set_default_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.set_header(name, value)

    async def get(self, token: str) -> None:  # noqa: D102 - checks the link before upgrading
        try:
            self.seat = self.server.tokens.check(token, self.get_cookie(cookie_name(token)))
        except Refused:
            self.set_status(403)
            self.finish("Forbidden")
            return
        await super().get(token)

    def open(self, token: str) -> None:  # noqa: D102
        self.server.room.connect(self.seat, self)

    def on_message(self, message: str | bytes) -> None:  # noqa: D102
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
        self.server.room.receive(self.seat, self, text)

    def on_close(self) -> None:  # noqa: D102
        if self.seat is not None:
            self.server.room.disconnect(self.seat, self)

    def send(self, text: str) -> None:
        """Send a message to the page (dropped when it has gone)."""
        try:
            self.write_message(text)
        except tornado.websocket.WebSocketClosedError:
            pass
