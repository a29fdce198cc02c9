"""The on-disk response cache: model responses in SQLite, keyed by a hash of the request."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from hasbench.paths import CACHE_DIR
from hasbench.vocab import canonical_json

CACHE_FORMAT = 1
"""Bumped when the cached record layout changes; part of every cache key."""


def request_key(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    temperature: float,
    response_format: dict[str, Any] | None,
    seed: int | None,
    tool_choice: str | dict[str, Any] | None = None,
    endpoint: dict[str, Any] | None = None,
) -> str:
    """SHA-256 hex digest of the canonical request; the response cache key.

    ``endpoint`` is the :meth:`~hasbench.llm.base.Endpoint.identity` of where the request
    goes (its server and extra parameters, never its key); empty or None for the
    provider's own endpoint.
    """
    request = {
        "format": CACHE_FORMAT,
        "model": model,
        "messages": messages,
        "tools": tools,
        "temperature": temperature,
        "response_format": response_format,
        "seed": seed,
    }
    if tool_choice is not None:
        request["tool_choice"] = tool_choice
    if endpoint:
        request["endpoint"] = endpoint
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ResponseCache:
    """Model responses on disk in SQLite, keyed by :func:`request_key`.

    Safe for concurrent use from threads and coroutines of one process (one connection
    behind a lock) and from several processes (WAL journal, busy time-out).

    Args:
        path: The database file; parent directories are created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, timeout=60.0, isolation_level=None, check_same_thread=False
        )
        deadline = time.monotonic() + 60.0
        while True:  # switching to WAL is not covered by the busy time-out: wait here
            try:
                with self._lock:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("PRAGMA synchronous=NORMAL")
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS responses ("
                        "key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL)"
                    )
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @classmethod
    def default(cls) -> ResponseCache:
        """The workbench-wide cache under ``CACHE_DIR``."""
        return cls(CACHE_DIR / "responses.sqlite")

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Store ``response`` (a JSON-compatible dict) under ``key``."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, response) VALUES (?, ?, ?)",
                (key, model, canonical_json(response)),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()
