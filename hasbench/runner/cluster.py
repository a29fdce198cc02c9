"""Running a grid's episodes on a Dask distributed cluster (the ``dask`` extra).

``run_experiment(..., cluster=ADDRESS)`` sends every episode to the cluster at ADDRESS (a
scheduler address such as ``tcp://10.0.0.5:8786``, or ``local:N`` to start a local
cluster of N worker processes). A worker runs the episode as the local pool does
(:func:`hasbench.runner.pool.run_in_worker`) and returns the record and the trace text;
this process writes the results store, so caching, resume and the final table are those
of a local run. Model-bound episodes are admitted under this process's per-provider
limits, so the limits hold cluster-wide.

:func:`dask_client` connects to the same addresses for work that is not an episode:
notebook sweeps (:func:`hasbench.runner.notebooks.run_sweep`) run their papermill runs
on the cluster's workers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.runner.pool import RunOne, run_in_worker

if TYPE_CHECKING:
    from hasbench.llm import LLMClient
    from hasbench.runner.experiment import EpisodeSpec


class ClusterError(RuntimeError):
    """The cluster address is malformed or the dask extra is not installed."""


class ClusterPool:
    """Episodes on a Dask cluster; this process keeps writing the store."""

    def __init__(self, client: LLMClient, run_one: RunOne) -> None:
        self.client = client
        self._run_one = run_one
        self._cache = None if client.cache is None else str(getattr(client.cache, "path", ""))
        self._dask: Any = None
        self._local: Any = None
        self.workers = 1
        """The cluster's workers when it started."""
        self._slots: asyncio.Semaphore | None = None

    async def start(self, address: str) -> ClusterPool:
        """Connect to the scheduler at ``address`` (``local:N`` starts a local cluster)."""
        client_class, cluster_class = _distributed()
        workers = local_workers(address)
        if workers is not None:
            self._local = await cluster_class(**_local_options(workers), asynchronous=True)
            address = self._local
        self._dask = await client_class(address, asynchronous=True)
        self.workers = max(1, len(await self._dask.nthreads()))
        self._slots = asyncio.Semaphore(2 * self.workers)
        return self

    def slot(self, spec: EpisodeSpec) -> asyncio.Semaphore:
        """What admits a CPU-bound episode: twice as many in flight as the cluster has workers.

        A stopped backend or a spent budget then holds back the episodes not yet admitted.
        """
        assert self._slots is not None, "start the pool first"
        return self._slots

    async def run(
        self,
        spec: EpisodeSpec,
        identity: dict[str, Any],
        key: str,
        store: Path,
    ) -> dict[str, Any]:
        """Run one episode on a worker; write its trace and record here; return the record."""
        future = self._dask.submit(
            run_in_worker,
            self._run_one,
            spec,
            identity,
            key,
            self._cache,
            key=f"episode-{key}",
            pure=False,
        )
        done = await future
        return done.store(store, key, self.client)

    async def close(self) -> None:
        """Disconnect (and stop the local cluster if this pool started one)."""
        if self._dask is not None:
            await self._dask.close()
        if self._local is not None:
            await self._local.close()


def local_workers(address: str) -> int | None:
    """N for ``local:N``; None for a scheduler address.

    Raises:
        ClusterError: ``local:`` followed by anything but a count of at least one.
    """
    if not address.startswith("local:"):
        return None
    count = address.removeprefix("local:")
    if not count.isdigit() or int(count) < 1:
        raise ClusterError(f"{address!r}: expected local:N with N >= 1 workers")
    return int(count)


@contextlib.contextmanager
def dask_client(address: str) -> Iterator[Any]:
    """A blocking Dask client connected to ``address`` for the duration of the block.

    ``local:N`` starts a local cluster of N single-threaded worker processes and stops it
    at the end; any other address is a running scheduler's (``tcp://host:8786``).

    Raises:
        ClusterError: a malformed address or no dask extra.
    """
    client_class, cluster_class = _distributed()
    workers = local_workers(address)
    with contextlib.ExitStack() as stack:
        target: Any = address
        if workers is not None:
            target = stack.enter_context(cluster_class(**_local_options(workers)))
        yield stack.enter_context(client_class(target))


def _distributed() -> tuple[Any, Any]:
    """Dask's ``Client`` and ``LocalCluster`` classes, or a clear error without the extra."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError(
            "running on a cluster needs the dask extra: pip install 'hasbench[dask]'"
        ) from None
    return Client, LocalCluster


def _local_options(workers: int) -> dict[str, Any]:
    """A local cluster of single-threaded worker processes without a dashboard."""
    return {
        "n_workers": workers,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
    }
