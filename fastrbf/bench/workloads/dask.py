"""The dask workload: ``fastrbf.dask.kmeans`` on a local cluster against in-memory
``kmeans`` (none without dask.array and distributed)."""

import numpy as np

from fastrbf.cluster._kmeans import kmeans

from ..harness import BASELINE, FASTRBF, Contender, Workload
from .cluster import lloyd_cost
from .common import SEED, seeded_rng, try_import


def workloads() -> list[Workload]:
    """The dask workload (none without dask.array and distributed)."""
    if try_import("distributed") is None or try_import("dask.array") is None:
        return []
    return [_dask_lloyd_workload()]


def _dask_block(block_id, n, d, rows):
    """Row block ``block_id[0]`` of the dask-lloyd data (the same on the client and the workers)."""
    i = block_id[0]
    lo = i * rows
    return np.random.default_rng([SEED, i]).standard_normal((min(n, lo + rows) - lo, d))


def _dask_lloyd_workload():
    """20 Lloyd iterations from the same centres: in-memory ``kmeans`` (all cores, the
    floor) against ``fastrbf.dask.kmeans`` on a LocalCluster of 2 single-threaded worker
    processes with X persisted on the workers: the figure is the engine's overhead."""
    K, d, iters = 256, 32, 20

    def setup(size):
        import logging

        import dask
        import dask.array as da
        from distributed import Client, LocalCluster

        n, nb = size  # full: blocks of 125000 rows (32 MB)
        rows = -(-n // nb)
        nb = -(-n // rows)
        X = np.concatenate([_dask_block((i,), n, d, rows) for i in range(nb)])
        C = X[seeded_rng().choice(n, K, replace=False)].copy()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster, set_as_default=False)
        client.wait_for_workers(2)
        # X made on the workers, blocks dealt out evenly (the in-memory X is the same blocks)
        workers = sorted(client.scheduler_info()["workers"])
        futures = [client.submit(_dask_block, (i,), n, d, rows, workers=[workers[i % 2]], pure=False)
                   for i in range(nb)]
        Xd = client.persist(da.concatenate([da.from_delayed(dask.delayed(f), (min(n, (i + 1) * rows) - i * rows, d),
                                                            np.float64) for i, f in enumerate(futures)]))
        return {"X": X, "Xd": Xd, "C": C, "cluster": cluster, "client": client}

    def in_memory(a):
        return kmeans(a["X"], K, init=a["C"], max_iter=iters, tol=0)

    def on_dask(a):
        import dask

        from fastrbf import dask as fd

        with a["client"].as_current(), dask.config.set(scheduler="dask.distributed"):
            return fd.kmeans(a["Xd"], K, init=a["C"], max_iter=iters, tol=0).inertia

    def teardown(a):
        a["client"].close()
        a["cluster"].close()

    cs = [
        Contender("fastrbf.dask kmeans, LocalCluster 2 x 1 thread", FASTRBF, on_dask),
        Contender("fastrbf kmeans in memory", BASELINE, in_memory),
    ]
    return Workload("dask-lloyd", setup, lambda a: iters * a["X"].shape[0] * K, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d}, K={K}, {iters} iterations, {a['Xd'].numblocks[0]} blocks",
                    teardown=teardown, sizes=((20000, 4), (1000000, 8)), cost=lambda a: lloyd_cost(a["X"], K, iters))
