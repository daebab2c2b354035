"""The one sweep runner every ``osustat reproduce`` pipeline uses.

A sweep is a list of independent tasks (usually one per episode). :func:`run_tasks` runs a
picklable function over them in this process, in joblib worker processes (``jobs``), or on a
Dask cluster (``scheduler``), with one progress bar, and returns the results in task order, so
the output never depends on the backend or the number of workers. Per-task randomness comes
from :func:`child_seeds` (``SeedSequence(seed).spawn``), never from the order in which workers
finish.

Resuming: with ``checkpoint=DIR`` every finished task's result is written to
``DIR/<key>.pkl`` (temporary file, then an atomic rename), where the key is the SHA-256 of the
pickled function name and task arguments. A rerun of the same sweep loads the finished tasks and
runs only the rest; a task whose arguments changed has another key and is run again.

Dask: ``scheduler`` is a scheduler address (``tcp://host:8786``) or a
``distributed.Client``. Objects passed as ``shared`` are scattered once and broadcast, so each
worker receives them once, not once per task (``docs/scaling.md``).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = ["child_seeds", "run_tasks", "task_key"]

R = TypeVar("R")

_NO_SHARED = object()


def child_seeds(seed: int, n: int) -> list[np.random.SeedSequence]:
    """One child seed per task: task ``i`` gets child ``i`` of ``SeedSequence(seed)``."""
    return list(np.random.SeedSequence(seed).spawn(n))


def task_key(fn: Callable[..., Any], task: tuple[Any, ...]) -> str:
    """The checkpoint key of one task: SHA-256 of the function's name and pickled arguments."""
    payload = pickle.dumps((fn.__module__, fn.__qualname__, task), protocol=4)
    return hashlib.sha256(payload).hexdigest()[:32]


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
    jobs: int = 1,
    scheduler: Any = None,
    shared: Any = _NO_SHARED,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: bool = True,
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
    jobs : int
        Worker processes (joblib, loky backend); 1 runs in this process. Ignored with
        `scheduler`.
    scheduler : str or distributed.Client, optional
        Run on this Dask cluster instead (needs the ``distributed`` extra).
    shared : object, optional
        Passed as the first argument of every call; sent once per worker on Dask.
    checkpoint : path, optional
        Folder of finished tasks' results; finished tasks are loaded, not run again.
    progress : bool
        Show one tqdm progress bar on stderr (for every backend).
    desc, unit : str
        The progress bar's label and unit.

    Returns
    -------
    list
        ``fn``'s results, in the order of `tasks`, whatever the backend.
    """
    from tqdm.auto import tqdm

    _run_iv(jobs, scheduler)
    results: dict[int, Any] = {}
    keys: list[str] = []
    ckpt: Path | None = None
    if checkpoint is not None:
        ckpt = Path(checkpoint)
        ckpt.mkdir(parents=True, exist_ok=True)
        keys = [task_key(fn, t) for t in tasks]
        for i, key in enumerate(keys):
            path = ckpt / f"{key}.pkl"
            if path.exists():
                with open(path, "rb") as fh:
                    results[i] = pickle.load(fh)
    todo = [i for i in range(len(tasks)) if i not in results]
    bar = tqdm(total=len(tasks), initial=len(results), desc=desc, unit=unit, disable=not progress)

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

            calls = (delayed(fn)(*head, *tasks[i]) for i in todo)
            for i, out in zip(
                todo, Parallel(n_jobs=jobs, return_as="generator")(calls), strict=True
            ):
                done(i, out)
    finally:
        bar.close()
    return [results[i] for i in range(len(tasks))]


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
        if head:
            head = (client.scatter(head[0], broadcast=True),)
        futures = {client.submit(fn, *head, *tasks[i], pure=False): i for i in todo}
        for fut in as_completed(futures):
            done(futures[fut], fut.result())
    finally:
        if own:
            client.close()
