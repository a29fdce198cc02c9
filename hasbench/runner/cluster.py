"""Running a grid's episodes on a Dask distributed cluster (the ``dask`` extra).

``run_experiment(..., cluster=ADDRESS)`` sends every episode to the cluster at ADDRESS (a
scheduler address such as ``tcp://10.0.0.5:8786``, or ``local:N`` to start a local
cluster of N worker processes). A worker runs the episode as the local pool does
(:func:`hasbench.runner.pool.run_in_worker`) and returns the record and the trace text;
this process writes the results store, so caching, resume and the final table are those
of a local run. Model-bound episodes are admitted under this process's per-provider
limits, so the limits hold cluster-wide.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hasbench.runner import store as results
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

    async def start(self, address: str) -> ClusterPool:
        """Connect to the scheduler at ``address`` (``local:N`` starts a local cluster)."""
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError(
                "running on a cluster needs the dask extra: pip install 'hasbench[dask]'"
            ) from None
        if address.startswith("local:"):
            count = address.removeprefix("local:")
            if not count.isdigit() or int(count) < 1:
                raise ClusterError(f"{address!r}: expected local:N with N >= 1 workers")
            self._local = await LocalCluster(
                n_workers=int(count),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                asynchronous=True,
            )
            address = self._local
        self._dask = await Client(address, asynchronous=True)
        return self

    async def run(
        self,
        spec: EpisodeSpec,
        identity: dict[str, Any],
        key: str,
        store: Path,
        judge_process: bool,
    ) -> dict[str, Any]:
        """Run one episode on a worker; write its trace and record here; return the record."""
        future = self._dask.submit(
            run_in_worker,
            self._run_one,
            spec,
            identity,
            key,
            judge_process,
            self._cache,
            key=f"episode-{key}",
            pure=False,
        )
        record, trace, calls, hits = await future
        if trace is not None:
            results.write_trace(store, key, trace)
        results.write_record(store, key, record)
        self.client.stats.calls += calls
        self.client.stats.cache_hits += hits
        return record

    async def close(self) -> None:
        """Disconnect (and stop the local cluster if this pool started one)."""
        if self._dask is not None:
            await self._dask.close()
        if self._local is not None:
            await self._local.close()
