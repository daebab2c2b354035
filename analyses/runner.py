"""The one sweep runner every ``osustat reproduce`` pipeline uses.

A sweep is a list of independent tasks (usually one per episode). :func:`run_tasks` runs a
picklable function over them in this process, in joblib worker processes (``jobs``), or on a
Dask cluster (``scheduler``), with one progress bar, and returns the results in task order, so
the output never depends on the backend or the number of workers. Per-task randomness comes
from :func:`child_seeds` (``SeedSequence(seed).spawn``), never from the order in which workers
finish.

Resuming: with ``Backend(checkpoint=DIR)`` every finished task's result is written to
``DIR/<key>.pkl`` (temporary file, then an atomic rename) as soon as it finishes, where the key
is a SHA-256 of the function's name, the ``shared`` object and the task's arguments
(:func:`stable_digest`: independent of the process, ``PYTHONHASHSEED`` and set order). A rerun
of the same sweep loads the finished tasks and runs only the rest; a task whose arguments
changed has another key and is run again.

Dask: ``scheduler`` is a scheduler address (``tcp://host:8786``) or a
``distributed.Client``. Objects passed as ``shared`` are scattered once and broadcast, so each
worker receives them once, not once per task (``docs/scaling.md``). Tasks are sent in batches
(one Dask task runs several consecutive tasks and returns their results together) of
decreasing size (guided self-scheduling, :func:`dask_batches`): each batch takes
1 / (:data:`DASK_GUIDED_SPLIT` x threads) of the tasks not yet batched. The scheduler's
per-task cost (a round trip, a future, a result message) is paid per batch (a few dozen per
sweep), and the last batches hold one task each, so no worker waits long for another to
finish a large batch at the end (with 4 equal batches per thread that wait was 9–14 % of a
200-episode sweep, ``docs/performance.md``).

Dask workers with Dask's default settings spend 10–40 % more CPU on the same episodes than
joblib's workers (``docs/performance.md``, "session 5"): the nanny starts each worker with
``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes glibc's mmap threshold at 128 KiB, so every
numpy temporary above it is mapped and unmapped afresh (40–100 times the page faults), and the
worker's sampling profiler (every 10 ms) and event-loop tick (every 20 ms) take the GIL from the
task thread. :data:`DASK_WORKER_CONFIG` turns these three off or down; it is applied where the
cluster starts (``dask.config.set`` before a ``LocalCluster``, or a Dask YAML file on each
worker host, ``docs/scaling.md``), never by :func:`run_tasks` on a cluster it was given.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import os
import pickle
import struct
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from osustat.analyses.protocol import Backend

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DASK_WORKER_CONFIG",
    "child_seeds",
    "dask_batches",
    "progress_bar",
    "run_tasks",
    "sort_records",
    "stable_digest",
    "task_key",
]

R = TypeVar("R")

_NO_SHARED = object()

#: Each Dask batch takes 1 / (DASK_GUIDED_SPLIT x threads) of the tasks not yet batched (see
#: the module docstring): large batches first amortize the scheduler's per-task cost, single
#: tasks last balance the end of the sweep across workers.
DASK_GUIDED_SPLIT = 4

#: Dask settings for the cluster a sweep runs on (see the module docstring): glibc's own
#: malloc trimming instead of the nanny's ``MALLOC_TRIM_THRESHOLD_`` (read when a nanny spawns
#: its worker), no sampling profiler (the dashboard's "Profile" page stays empty), and the
#: event-loop latency check once a second instead of every 20 ms (it still warns about a loop
#: blocked for more than ``distributed.admin.tick.limit``, 3 s). The memory monitor, which
#: enforces the workers' memory limits, keeps Dask's default.
DASK_WORKER_CONFIG: dict[str, Any] = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
}


def child_seeds(seed: int, n: int) -> list[np.random.SeedSequence]:
    """One child seed per task: task ``i`` gets child ``i`` of ``SeedSequence(seed)``."""
    return list(np.random.SeedSequence(seed).spawn(n))


def _feed(h: Any, obj: Any) -> None:
    """Feed a canonical, process-independent encoding of `obj` into the hash `h`."""
    tag = type(obj).__name__.encode()
    if obj is None or isinstance(obj, bool | int | float | complex | str | bytes):
        h.update(b"S" + tag + b":" + repr(obj).encode() + b";")
    elif isinstance(obj, np.ndarray | np.generic):
        a = np.ascontiguousarray(obj)
        if a.dtype == object:
            _feed(h, a.tolist())
            return
        h.update(b"A" + a.dtype.str.encode() + repr(a.shape).encode())
        h.update(a.tobytes())
    elif isinstance(obj, list | tuple):
        h.update(b"L" + tag + struct.pack("<q", len(obj)))
        for x in obj:
            _feed(h, x)
    elif isinstance(obj, dict):
        h.update(b"D" + struct.pack("<q", len(obj)))
        for kd, v in sorted((stable_digest(k), v) for k, v in obj.items()):
            h.update(kd.encode())
            _feed(h, v)
    elif isinstance(obj, set | frozenset):
        h.update(b"F" + tag + struct.pack("<q", len(obj)))
        for d in sorted(stable_digest(x) for x in obj):
            h.update(d.encode())
    elif isinstance(obj, np.random.SeedSequence):
        _feed(h, ("SeedSequence", obj.entropy, obj.spawn_key, obj.pool_size))
    elif isinstance(obj, enum.Enum):
        _feed(h, ("enum", type(obj).__module__, type(obj).__qualname__, obj.name))
    elif isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
        h.update(b"C" + f"{obj.__module__}.{obj.__qualname__}".encode() + b";")
    elif isinstance(obj, functools.partial):
        _feed(h, ("partial", obj.func, obj.args, obj.keywords))
    elif dataclasses.is_dataclass(obj):
        fields = [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
        _feed(h, ("dataclass", type(obj).__module__, type(obj).__qualname__, fields))
    elif hasattr(obj, "__dict__"):
        _feed(h, ("object", type(obj).__module__, type(obj).__qualname__, vars(obj)))
    else:  # a last resort that may depend on the process; only costs a re-run on resume
        h.update(b"P" + pickle.dumps(obj, protocol=4))


def stable_digest(obj: Any) -> str:
    """A SHA-256 of `obj` that is the same in every process (sets and dicts are sorted).

    Handles builtins, numpy arrays and seed sequences, dataclasses, enums, classes, functions,
    ``functools.partial`` and plain objects (by their attributes).
    """
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def task_key(fn: Callable[..., Any], task: tuple[Any, ...], shared: Any = None) -> str:
    """The checkpoint key of one task: a digest of the function's name, `shared` and the task."""
    return stable_digest((fn.__module__, fn.__qualname__, shared, task))[:32]


def progress_bar(
    total: int, desc: str, *, progress: bool, unit: str = "task", initial: int = 0
) -> Any:
    """The one progress bar of a run's phases (tqdm on stderr: done / total, rate, ETA).

    Every phase of ``osustat reproduce`` that can take more than a few seconds shows one --
    the sweeps (:func:`run_tasks`), the encoding, each benchmark's analysis step -- and none
    without `progress` (``--no-progress``). Use it as a context manager and ``update(1)`` per
    finished step; `total` is counted before the first step, so the bar ends at total/total.
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit=unit, disable=not progress)


def _run_iv(jobs: Any, scheduler: Any) -> None:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be an integer >= 1; got {jobs!r}.")
    if (
        scheduler is not None
        and not isinstance(scheduler, str)
        and not hasattr(scheduler, "submit")
    ):
        raise TypeError(
            "`scheduler` must be a Dask scheduler address (e.g. 'tcp://127.0.0.1:8786') or a "
            f"distributed.Client; got {type(scheduler).__name__}."
        )


def _save(directory: Path, key: str, value: Any) -> None:
    tmp = directory / f".{key}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as fh:
        pickle.dump(value, fh, protocol=4)
    os.replace(tmp, directory / f"{key}.pkl")


def run_tasks(
    fn: Callable[..., R],
    tasks: Sequence[tuple[Any, ...]],
    *,
    backend: Backend = Backend(),
    shared: Any = _NO_SHARED,
    desc: str = "tasks",
    unit: str = "task",
) -> list[R]:
    """Run ``fn(*task)`` (or ``fn(shared, *task)``) for every task; results in task order.

    Parameters
    ----------
    fn : callable
        A module-level (picklable, importable by workers) function.
    tasks : sequence of tuples
        Positional arguments of each call.
    backend : analyses.protocol.Backend
        How the sweep runs, the one bundle every pipeline passes through from the driver:
        ``jobs`` worker processes (joblib, loky backend; 1 runs in this process; ignored with
        ``scheduler``), ``scheduler`` a Dask cluster to run on instead (an address or a
        ``distributed.Client``; needs the ``distributed`` extra), ``checkpoint`` a folder of
        finished tasks' results (finished tasks are loaded, not run again, and one stderr line
        says how many: ``osustat reproduce`` keeps a folder's tasks only when the same code,
        settings and data made them, ``driver._made_by``), ``progress`` one tqdm progress bar
        on stderr (for every backend).
    shared : object, optional
        Passed as the first argument of every call; sent once per worker on Dask.
    desc, unit : str
        The progress bar's label and unit.

    Returns
    -------
    list
        ``fn``'s results, in the order of `tasks`, whatever the backend.
    """
    jobs, scheduler, checkpoint, progress = (
        backend.jobs,
        backend.scheduler,
        backend.checkpoint,
        backend.progress,
    )
    _run_iv(jobs, scheduler)
    results: dict[int, Any] = {}
    keys: list[str] = []
    ckpt: Path | None = None
    if checkpoint is not None:
        ckpt = Path(checkpoint)
        ckpt.mkdir(parents=True, exist_ok=True)
        shared_digest = None if shared is _NO_SHARED else stable_digest(shared)
        keys = [task_key(fn, t, shared_digest) for t in tasks]
        for i, key in enumerate(keys):
            path = ckpt / f"{key}.pkl"
            if path.exists():
                with open(path, "rb") as fh:
                    results[i] = pickle.load(fh)
    todo = [i for i in range(len(tasks)) if i not in results]
    if results and ckpt is not None:  # the driver kept only tasks made as this run makes them
        print(
            f"osustat reproduce: resuming {len(results)} of {len(tasks)} tasks from {ckpt} "
            "(made by the same code, settings and data)",
            file=sys.stderr,
        )
    bar = progress_bar(len(tasks), desc, progress=progress, unit=unit, initial=len(results))

    def done(i: int, value: Any) -> None:
        results[i] = value
        if ckpt is not None:
            _save(ckpt, keys[i], value)
        bar.update(1)

    head: tuple[Any, ...] = () if shared is _NO_SHARED else (shared,)
    try:
        if scheduler is not None:
            _run_dask(fn, tasks, todo, head, scheduler, done)
        elif jobs == 1:
            for i in todo:
                done(i, fn(*head, *tasks[i]))
        else:
            from joblib import Parallel, delayed

            # finished tasks come back as they finish (each saved at once for resuming)
            calls = (delayed(_indexed)(fn, i, *head, *tasks[i]) for i in todo)
            for i, out in Parallel(n_jobs=jobs, return_as="generator_unordered")(calls):
                done(i, out)
    finally:
        bar.close()
    return [results[i] for i in range(len(tasks))]


def _indexed(fn: Callable[..., Any], i: int, *args: Any) -> tuple[int, Any]:
    return i, fn(*args)


def _run_batch(
    fn: Callable[..., Any], head: tuple[Any, ...], batch: list[tuple[int, tuple[Any, ...]]]
) -> list[tuple[int, Any]]:
    """Run one Dask batch: ``fn(*head, *task)`` for each ``(i, task)`` of `batch`."""
    return [(i, fn(*head, *task)) for i, task in batch]


def _run_batch_shared(
    fn: Callable[..., Any], shared: Any, batch: list[tuple[int, tuple[Any, ...]]]
) -> list[tuple[int, Any]]:
    return _run_batch(fn, (shared,), batch)


def dask_batches(todo: list[int], n_threads: int) -> list[list[int]]:
    """Consecutive runs of `todo` of decreasing size (guided self-scheduling).

    Each run takes ``ceil(r / (DASK_GUIDED_SPLIT * n_threads))`` of the ``r`` tasks still
    unbatched, so the sizes fall geometrically to 1: about
    ``g * log(len(todo) / g) + g`` runs for ``g = DASK_GUIDED_SPLIT * n_threads``.

    Examples
    --------
    >>> from osustat.analyses.runner import dask_batches
    >>> [len(b) for b in dask_batches(list(range(40)), 1)]
    [10, 8, 6, 4, 3, 3, 2, 1, 1, 1, 1]
    """
    split = DASK_GUIDED_SPLIT * max(1, n_threads)
    batches, j = [], 0
    while j < len(todo):
        size = -(-(len(todo) - j) // split)
        batches.append(todo[j : j + size])
        j += size
    return batches


def _run_dask(
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    todo: list[int],
    head: tuple[Any, ...],
    scheduler: Any,
    done: Callable[[int, Any], None],
) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "`--scheduler` needs dask.distributed: pip install 'osustat[distributed]'."
        ) from exc
    own = isinstance(scheduler, str)
    client = Client(scheduler) if own else scheduler
    try:
        # the scattered object's future must be a top-level argument to be resolved on the
        # worker; `_run_batch` gets it back as a 1-tuple (or an empty one)
        n_threads = sum(client.nthreads().values())
        batches = [[(i, tasks[i]) for i in b] for b in dask_batches(todo, n_threads)]
        if head:
            # as one object under a fresh key: a dict scattered as itself is scattered value by
            # value under its own keys ({"offset": 1} -> key 'offset'), which two runs on one
            # cluster share ("failed to acquire keys: ('offset',)" when the first run's release
            # crossed the second's scatter, seen under load); a content hash would share too
            [shared] = client.scatter([head[0]], broadcast=True, hash=False)
            futures = [client.submit(_run_batch_shared, fn, shared, b, pure=False) for b in batches]
        else:
            futures = [client.submit(_run_batch, fn, (), b, pure=False) for b in batches]
        for fut in as_completed(futures):
            for i, value in fut.result():
                done(i, value)
    finally:
        if own:
            client.close()


def sort_records(records: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """`records` in a fixed order (method in the order of `methods`, then budget, episode,
    query, metric), so that neither ``--jobs`` nor the scheduler changes a run's records."""
    rank = {m: k for k, m in enumerate(methods)}
    out = records.assign(_m=records["method"].map(rank))
    return (
        out.sort_values(["_m", "budget", "episode_id", "query_id", "metric"], kind="stable")
        .drop(columns="_m")
        .reset_index(drop=True)
    )
