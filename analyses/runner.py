"""The one sweep runner every ``osustat reproduce`` pipeline uses.

A sweep is a list of independent tasks (usually one per episode). :func:`run_tasks` runs a
picklable function over them serially or in joblib worker processes, with one progress bar,
and returns the results in task order, so the output never depends on the number of jobs.
Per-task randomness comes from :func:`child_seeds` (``SeedSequence(seed).spawn``), never from
the order in which workers finish.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

__all__ = ["child_seeds", "run_tasks"]

R = TypeVar("R")


def child_seeds(seed: int, n: int) -> list[np.random.SeedSequence]:
    """One child seed per task: task ``i`` gets child ``i`` of ``SeedSequence(seed)``."""
    return list(np.random.SeedSequence(seed).spawn(n))


def run_tasks(
    fn: Callable[..., R],
    tasks: Sequence[tuple[Any, ...]],
    *,
    jobs: int = 1,
    progress: bool = True,
    desc: str = "tasks",
    unit: str = "task",
) -> list[R]:
    """Run ``fn(*task)`` for every task; results in task order whatever `jobs` is.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function.
    tasks : sequence of tuples
        Positional arguments of each call.
    jobs : int
        Worker processes (joblib, loky backend); 1 runs in this process.
    progress : bool
        Show one tqdm progress bar on stderr.
    desc, unit : str
        The progress bar's label and unit.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be an integer >= 1; got {jobs!r}.")
    bar = tqdm(total=len(tasks), desc=desc, unit=unit, disable=not progress)
    results: list[R] = []
    try:
        if jobs == 1:
            for task in tasks:
                results.append(fn(*task))
                bar.update(1)
        else:
            calls = (delayed(fn)(*task) for task in tasks)
            for out in Parallel(n_jobs=jobs, return_as="generator")(calls):
                results.append(out)
                bar.update(1)
    finally:
        bar.close()
    return results
