"""An OpenAI-compatible chat server for tests that fails on purpose.

:class:`FaultServer` answers ``POST /v1/chat/completions`` on 127.0.0.1 in a background
thread. Each request is either answered by a reply function (an ordinary chat completion)
or given one of the faults below, chosen by a ``faults`` function of the request number:

- ``rate_limit``: 429 with a ``Retry-After`` header;
- ``server``: 500 with an error body;
- ``auth``: 401 (its message echoes the Authorization header, as a careless proxy might);
- ``not_found``: 404 for an unknown model;
- ``not_json``: 200 with an HTML body;
- ``malformed_tool_call``: 200 with a tool call whose arguments are not JSON;
- ``slow``: the ordinary answer after ``slow_seconds``;
- ``die``: the connection is dropped and the server stops (it "dies mid-run").

:func:`random_faults` fails a given share of requests at random: seeded, and decided by the
request itself and how often the same request came before, so each episode meets the same
faults however concurrent episodes interleave.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], dict[str, Any]]
"""request body -> ``{"content": str | None, "tool_calls": [{"name", "arguments"}]}``."""
Faults = Callable[[int, dict[str, Any]], str | None]
"""(request number from 0, request body) -> a fault name or None."""

TRANSIENT_FAULTS = ("rate_limit", "server", "not_json", "malformed_tool_call", "slow")


def finishing_agent(body: dict[str, Any]) -> dict[str, Any]:
    """Call ``finish`` when it is offered, else answer in prose (a user simulator)."""
    names = {tool["function"]["name"] for tool in body.get("tools") or []}
    if "finish" in names:
        return {"tool_calls": [{"name": "finish", "arguments": {"deliverable": "All done."}}]}
    return {"content": "I can tell you what I know."}


def random_faults(share: float, seed: int, kinds: tuple[str, ...] = TRANSIENT_FAULTS) -> Faults:
    """Fail ``share`` of the requests with a fault drawn from ``kinds`` (see the module)."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def choose(number: int, body: dict[str, Any]) -> str | None:
        text = json.dumps(body, sort_keys=True)
        with lock:
            seen[text] = seen.get(text, 0) + 1
            nth = seen[text]
        rng = random.Random(f"{seed}:{nth}:{text}")
        return rng.choice(kinds) if rng.random() < share else None

    return choose


class FaultServer:
    """A chat-completions server on 127.0.0.1 that can fail on purpose.

    Args:
        reply: Answers an ordinary request.
        faults: Chooses the fault of each request (None: no faults).
        port: The port (0 picks a free one; a restarted server passes its old one).
        retry_after: The ``Retry-After`` header of a 429, in seconds.
        slow_seconds: How long a ``slow`` answer takes.

    Attributes:
        requests: Every request body received, in order.
        headers: The headers of every request (names in lower case), in order.
        served: Faults (or "ok") per request, in order.
    """

    def __init__(
        self,
        reply: Reply = finishing_agent,
        faults: Faults | None = None,
        port: int = 0,
        retry_after: str = "1",
        slow_seconds: float = 2.0,
    ) -> None:
        self.reply = reply
        self.faults = faults
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.served: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def api_base(self) -> str:
        """The OpenAI-style base URL of this server."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    number = len(server.requests)
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                fault = server.faults(number, body) if server.faults else None
                with server._lock:
                    server.served.append(fault or "ok")
                server._serve(self, fault, body)

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler, fault: str | None, body: dict) -> None:
        if fault == "die":
            handler.close_connection = True
            handler.connection.close()
            threading.Thread(target=self.stop, daemon=True).start()
            return
        if fault == "rate_limit":
            extra = {"Retry-After": self.retry_after}
            self._send(handler, 429, _error("Rate limit reached, slow down.", "rate_limit"), extra)
        elif fault == "server":
            self._send(handler, 500, _error("The server had an error.", "server_error"))
        elif fault == "auth":
            key = handler.headers.get("authorization", "")
            self._send(handler, 401, _error(f"Incorrect API key provided: {key}", "invalid_key"))
        elif fault == "not_found":
            model = body.get("model")
            self._send(handler, 404, _error(f"The model {model} does not exist", "not_found"))
        elif fault == "not_json":
            raw = b"<html><body>502 Bad Gateway</body></html>"
            self._send_bytes(handler, 200, raw, "text/html")
        else:
            if fault == "slow":
                time.sleep(self.slow_seconds)
            answer = self.reply(body)
            if fault == "malformed_tool_call":
                answer = {"tool_calls": [{"name": "finish", "arguments": '{"deliverable": "do'}]}
            self._send(handler, 200, _completion(body, answer))

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        raw = json.dumps(payload).encode("utf-8")
        self._send_bytes(handler, status, raw, "application/json", headers)

    @staticmethod
    def _send_bytes(
        handler: BaseHTTPRequestHandler,
        status: int,
        raw: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing to answer


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _completion(body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": call["arguments"]
                if isinstance(call["arguments"], str)
                else json.dumps(call["arguments"]),
            },
        }
        for index, call in enumerate(answer.get("tool_calls") or [])
    ]
    message: dict[str, Any] = {"role": "assistant", "content": answer.get("content")}
    if calls:
        message["tool_calls"] = calls
    prompt = len(json.dumps(body.get("messages", [])).split())
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fault"),
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5},
    }
