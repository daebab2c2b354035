import math
import os
from dataclasses import replace

import numpy as np
import pytest

from osustat.analyses.protocol import Backend
from osustat.analyses.runner import (
    DASK_GUIDED_SPLIT,
    DASK_WORKER_CONFIG,
    child_seeds,
    dask_batches,
    run_tasks,
)

QUIET = Backend(progress=False)


def _draw(i, seed_seq):
    return i, float(np.random.default_rng(seed_seq).random())


class TestRunTasks:
    def test_order_and_values_do_not_depend_on_jobs(self):
        tasks = [(i, s) for i, s in enumerate(child_seeds(7, 6))]
        serial = run_tasks(_draw, tasks, backend=QUIET)
        parallel = run_tasks(_draw, tasks, backend=Backend(jobs=2, progress=False))
        assert serial == parallel
        assert [i for i, _ in serial] == list(range(6))
        assert len({v for _, v in serial}) == 6

    def test_child_seeds_are_reproducible(self):
        a = [np.random.default_rng(s).random() for s in child_seeds(3, 4)]
        b = [np.random.default_rng(s).random() for s in child_seeds(3, 4)]
        assert a == b

    @pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
    def test_bad_jobs(self, jobs):
        with pytest.raises(ValueError, match="`jobs` must be an integer >= 1"):
            run_tasks(_draw, [], backend=Backend(jobs=jobs, progress=False))


def _with_shared(shared, i, seed_seq):
    return shared["offset"] + i, float(np.random.default_rng(seed_seq).random())


class TestCheckpoint:
    def test_resume_runs_only_unfinished_tasks(self, tmp_path):
        tasks = [(i, s) for i, s in enumerate(child_seeds(5, 4))]
        first = run_tasks(_draw, tasks[:2], backend=Backend(checkpoint=tmp_path, progress=False))
        assert len(list(tmp_path.glob("*.pkl"))) == 2
        calls = []

        def counting(i, seed_seq):  # not picklable: serial only, counts what actually runs
            calls.append(i)
            return _draw(i, seed_seq)

        counting.__module__, counting.__qualname__ = _draw.__module__, _draw.__qualname__
        again = run_tasks(counting, tasks, backend=Backend(checkpoint=tmp_path, progress=False))
        assert calls == [2, 3]
        assert again[:2] == first
        assert again == run_tasks(_draw, tasks, backend=QUIET)

    def test_changed_arguments_are_run_again(self, tmp_path):
        resuming = Backend(checkpoint=tmp_path, progress=False)
        run_tasks(_draw, [(0, child_seeds(1, 1)[0])], backend=resuming)
        run_tasks(_draw, [(0, child_seeds(2, 1)[0])], backend=resuming)
        assert len(list(tmp_path.glob("*.pkl"))) == 2


class TestShared:
    def test_shared_is_the_first_argument(self):
        tasks = [(i, s) for i, s in enumerate(child_seeds(0, 3))]
        serial = run_tasks(_with_shared, tasks, shared={"offset": 10}, backend=QUIET)
        parallel = run_tasks(
            _with_shared, tasks, shared={"offset": 10}, backend=Backend(jobs=2, progress=False)
        )
        assert serial == parallel and [i for i, _ in serial] == [10, 11, 12]


def _local_cluster(distributed, n_workers):
    return distributed.LocalCluster(
        n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    )


@pytest.mark.slow
class TestDask:
    def test_local_cluster_gives_the_serial_results(self):
        distributed = pytest.importorskip("distributed")
        tasks = [(i, s) for i, s in enumerate(child_seeds(9, 8))]
        serial = run_tasks(_with_shared, tasks, shared={"offset": 1}, backend=QUIET)
        with _local_cluster(distributed, 2) as cluster, distributed.Client(cluster) as client:
            on_dask = run_tasks(
                _with_shared, tasks, shared={"offset": 1}, backend=replace(QUIET, scheduler=client)
            )
            by_address = run_tasks(
                _with_shared,
                tasks,
                shared={"offset": 1},
                backend=Backend(scheduler=cluster.scheduler_address, progress=False),
            )
        assert on_dask == serial == by_address

    def test_a_shared_dict_does_not_take_its_keys_as_the_clusters(self):
        # a dict scattered as itself is scattered value by value under its own keys: shared
        # {"offset": 1} became the cluster's key 'offset', which another run (or the user's
        # own data) on the same cluster shares -- under load two runs' release and scatter
        # crossed ("failed to acquire keys: ('offset',)"), and data already under that key
        # was used in its place
        distributed = pytest.importorskip("distributed")
        tasks = [(i, s) for i, s in enumerate(child_seeds(9, 4))]
        serial = run_tasks(_with_shared, tasks, shared={"offset": 1}, backend=QUIET)
        with _local_cluster(distributed, 1) as cluster, distributed.Client(cluster) as client:
            held = client.scatter({"offset": 100})  # someone's data under that key
            got = run_tasks(
                _with_shared, tasks, shared={"offset": 1}, backend=replace(QUIET, scheduler=client)
            )
            assert held["offset"].result() == 100
        assert got == serial

    def test_batched_tasks_with_checkpoint_and_synthetic_records(self, tmp_path, monkeypatch):
        """Several tasks per Dask task (21 tasks, 2 threads: 13 batches of 3 down to 1), with
        and without `shared`, resumed from a checkpoint, and a tiny synthetic sweep's records:
        all equal to the serial run's, on a cluster started with DASK_WORKER_CONFIG (which
        reaches the workers: no MALLOC_TRIM_THRESHOLD_, no profiler)."""
        distributed = pytest.importorskip("distributed")
        import dask

        # an earlier nanny in this process wrote Dask's pre-spawn environment into ours
        monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
        from osustat.analyses.synthetic.run import run_synthetic

        tasks = [(i, s) for i, s in enumerate(child_seeds(4, 21))]
        serial = run_tasks(_draw, tasks, backend=QUIET)
        serial_shared = run_tasks(_with_shared, tasks, shared={"offset": 2}, backend=QUIET)
        run_tasks(_draw, tasks[::4], backend=Backend(checkpoint=tmp_path / "ck", progress=False))
        records = run_synthetic(3, 5, backend=QUIET).records
        with (
            dask.config.set(DASK_WORKER_CONFIG),
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            assert len(dask_batches(list(range(21)), sum(client.nthreads().values()))) == 13
            settings = client.run(
                lambda: (
                    os.environ.get("MALLOC_TRIM_THRESHOLD_"),
                    dask.config.get("distributed.worker.profile.enabled"),
                    dask.config.get("distributed.admin.tick.interval"),
                )
            )
            assert list(settings.values()) == [(None, False, "1s")] * 2
            on_client = Backend(scheduler=client, progress=False)
            assert run_tasks(_draw, tasks, backend=on_client) == serial
            shared = run_tasks(_with_shared, tasks, shared={"offset": 2}, backend=on_client)
            resumed = run_tasks(
                _draw, tasks, backend=replace(on_client, checkpoint=tmp_path / "ck")
            )
            on_dask = run_synthetic(3, 5, backend=on_client).records
        assert shared == serial_shared
        assert resumed == serial
        assert len(list((tmp_path / "ck").glob("*.pkl"))) == 21
        assert on_dask.to_csv(index=False) == records.to_csv(index=False)

    def test_worker_config_names_dask_settings(self):
        """Each key of DASK_WORKER_CONFIG is one of Dask's settings (a renamed one would be
        ignored silently by dask.config.set)."""
        pytest.importorskip("distributed")
        import dask

        defaults = dask.config.merge(*dask.config.defaults)
        for key in DASK_WORKER_CONFIG:
            dask.config.get(key, config=defaults)  # KeyError if Dask has no such setting

    def test_bad_scheduler(self):
        with pytest.raises(TypeError, match="`scheduler` must be a Dask scheduler address"):
            run_tasks(_draw, [], backend=Backend(scheduler=3, progress=False))


class TestDaskBatches:
    @pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 100, 801])
    @pytest.mark.parametrize("threads", [0, 1, 2, 5])
    def test_consecutive_cover_in_order(self, n, threads):
        todo = list(range(3, 3 + n))
        batches = dask_batches(todo, threads)
        assert [i for b in batches for i in b] == todo
        assert all(batches)

    @pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 801, 5000])
    @pytest.mark.parametrize("threads", [1, 2, 5])
    def test_guided_sizes(self, n, threads):
        """Each batch is ceil(rest / (split x threads)) of the tasks not yet batched: sizes
        never grow, the last batch is one task, and the count grows like log(n)."""
        g = DASK_GUIDED_SPLIT * threads
        batches = dask_batches(list(range(n)), threads)
        rest = n
        for b in batches:
            assert len(b) == -(-rest // g)
            rest -= len(b)
        assert len(batches[-1]) == 1
        assert len(batches) <= g * (1 + math.log(max(n / g, 1))) + g
