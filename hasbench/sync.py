"""Running coroutines from synchronous code, in a terminal or inside Jupyter's event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, also from inside a running loop (e.g. Jupyter).

    Inside a running loop the coroutine runs on a fresh loop in a helper thread, so a
    notebook cell can call it like any function.

    The result is handed over beside the loop's main task, never as its result: on the
    main thread ``asyncio.run`` formats its SIGINT handler, and with it the finished task
    and its result, into an error message it discards (CPython 3.11's
    ``signal.getsignal``), which took half a second for a study's results.
    """
    box: dict[str, Any] = {}

    async def held() -> None:
        box["value"] = await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(held())
        return box["value"]

    def target() -> None:
        try:
            asyncio.run(held())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
