"""A page's side of the server without a browser: open a link, keep its cookie, use the channel."""

import asyncio
import json
from http.cookies import SimpleCookie

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect


async def fetch(url, cookie=None):
    """GET ``url``: (status, body, the cookie it set or was sent)."""
    headers = {"Cookie": cookie} if cookie else {}
    try:
        response = await AsyncHTTPClient().fetch(url, headers=headers, follow_redirects=False)
    except HTTPClientError as exc:
        return exc.code, exc.response.body.decode() if exc.response else "", cookie
    set_cookie = response.headers.get("Set-Cookie")
    if set_cookie:
        morsel = next(iter(SimpleCookie(set_cookie).values()))
        cookie = f"{morsel.key}={morsel.value}"
    return response.code, response.body.decode(), cookie


class Page:
    """One open page: the states it was sent, and actions it sends."""

    def __init__(self, connection):
        self.connection = connection
        self.states = []
        self.acks = {}
        self.sent = []  # every message the server sent, as text
        self._number = 0
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, link, cookie):
        base, token = link.rsplit("/", 1)
        live = base.replace("http://", "ws://").rsplit("/", 1)[0] + f"/live/{token}"
        request = HTTPRequest(live, headers={"Cookie": cookie} if cookie else {})
        page = cls(await websocket_connect(request))
        await page.until(lambda state: True)  # the whole state comes first
        return page

    async def _read(self):
        while (text := await self.connection.read_message()) is not None:
            self.sent.append(text)
            message = json.loads(text)
            if message["type"] == "state":
                self.states.append(message["state"])
            else:
                self.acks[message["id"]] = message["error"]

    @property
    def state(self):
        return self.states[-1]

    async def until(self, condition, timeout=20.0):
        for _ in range(int(timeout / 0.02)):
            if self.states and condition(self.state):
                return self.state
            await asyncio.sleep(0.02)
        raise AssertionError(f"the page never got there; last state: {self.states[-1:]}")

    async def send(self, action, message_id=None):
        """Send an action and wait for its acknowledgement; return its error (None: applied)."""
        self._number += 1
        message_id = message_id or f"m{self._number}"
        self.connection.write_message(json.dumps({"id": message_id, "action": action}))
        for _ in range(1000):
            if message_id in self.acks:
                return self.acks.pop(message_id)
            await asyncio.sleep(0.01)
        raise AssertionError(f"no acknowledgement of {action}")

    def close(self):
        self.connection.close()
