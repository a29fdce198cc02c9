"""The local provider: ``local/<name>`` models run by llama.cpp in a process of their own.

The client answers them with :func:`reply`, without litellm (importing it costs about
3 CPU-s, which an offline run need not pay). Each local model used by a process runs in
one child process (``python -m hasbench.llm serve NAME``,
:mod:`hasbench.llm.llama`), started on the first call and kept for the next ones. When
that process dies (llama.cpp crashing with SIGSEGV, an out-of-memory kill), the call it was
answering fails with the ``died`` kind of :class:`~hasbench.llm.base.ModelError`, a
recorded error of that episode, and the next call starts a new process; the process that
asked goes on. Replies depend on the request alone, so a restarted model answers as the
old one would have.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any

from hasbench.llm.base import ModelError, ModelResponse, tool_call_requests
from hasbench.llm.llama import missing
from hasbench.paths import at_process_exit
from hasbench.trace import Usage

REQUEST_PARAMS = ("tools", "tool_choice", "seed", "temperature", "response_format")
"""The request parameters a local model reads."""


class ModelProcess:
    """One local model's process, owned by the process that started it.

    Args:
        name: the local model (a key of :data:`~hasbench.llm.llama.LOCAL_MODELS`).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.process: subprocess.Popen[bytes] | None = None
        self.busy = False
        """Whether a request is being answered."""
        self.requests = 0
        """Requests sent to this model's processes so far."""
        self._owner = os.getpid()
        self._log: IO[bytes] | None = None
        self._lock = threading.Lock()

    def ask(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        """One request; returns the model's answer (``reply`` and ``usage``).

        Raises:
            ModelError: the model refused the request (its kind), or its process died.
        """
        request = {"messages": messages, "params": {k: params.get(k) for k in REQUEST_PARAMS}}
        line = (json.dumps(request) + "\n").encode("utf-8")
        with self._lock:
            process = self._running()
            assert process.stdin is not None and process.stdout is not None
            self.busy = True
            self.requests += 1
            try:
                process.stdin.write(line)
                process.stdin.flush()
                answer = process.stdout.readline()
            except OSError:  # the pipe broke: it died before or while reading the request
                answer = b""
            finally:
                self.busy = False
            if not answer:
                raise ModelError("died", self._obituary(process))
        found = json.loads(answer)
        if "error" in found:
            raise ModelError(found["error"]["kind"], found["error"]["message"])
        return found

    def stop(self) -> None:
        """End the process (the next request starts a new one)."""
        process, self.process = self.process, None
        if process is not None and self._owner == os.getpid():
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._owner != os.getpid():  # a forked copy: the process belongs to the parent
            self.process, self._owner = None, os.getpid()
        if self.process is not None and self.process.poll() is None:
            return self.process
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hasbench.llm", "serve", self.name, str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
        )  # fmt: skip
        return self.process

    def _obituary(self, process: subprocess.Popen[bytes]) -> str:
        """What a call says when the model's process died."""
        try:
            code = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        self.process = None
        how = f"exit status {code}"
        if code < 0:
            how = f"signal {signal.Signals(-code).name}"
        tail = ""
        if self._log is not None:
            self._log.seek(0)
            lines = self._log.read().decode(errors="replace").strip().splitlines()
            tail = f"; its last words: {lines[-1][-300:]}" if lines else ""
        return (
            f"the model's process died ({how}) while answering{tail}. The next call starts it "
            "again; if it dies every time, check the llama.cpp build "
            "(python -m hasbench.llm check-build)"
        )


_PROCESSES: dict[str, ModelProcess] = {}
_PROCESSES_LOCK = threading.Lock()


def model_process(name: str) -> ModelProcess:
    """The process of the local model ``name`` (started on its first request).

    Raises:
        ModelError: (not_found) an unknown model, or the ``[local]`` extra is missing.
    """
    problem = missing(name)
    if problem is not None:
        raise ModelError("not_found", problem)
    with _PROCESSES_LOCK:
        if not _PROCESSES:
            at_process_exit(stop_models)
        return _PROCESSES.setdefault(name, ModelProcess(name))


def stop_models() -> None:
    """End every local model's process of this process (the next call starts them again)."""
    with _PROCESSES_LOCK:
        for process in _PROCESSES.values():
            process.stop()


async def reply(name: str, kwargs: dict[str, Any]) -> ModelResponse:
    """Answer a ``local/<name>`` request (the client's keyword arguments) in its process.

    Raises:
        ModelError: the model refused the request (its kind), or its process died.
    """
    model, messages = f"local/{name}", kwargs["messages"]
    answer = await asyncio.to_thread(model_process(name).ask, messages, kwargs)
    calls = answer["reply"].get("tool_calls") or []
    return ModelResponse(
        model=model,
        content=answer["reply"].get("content"),
        tool_calls=tool_call_requests(model, messages, calls),
        usage=Usage.model_validate(answer["usage"]),
        cost=0.0,
        attempts=1,
    )
