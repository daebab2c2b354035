"""A Dask cluster for one run: connected once, with errors naming ``--scheduler``.

``osustat reproduce --scheduler`` runs a benchmark's sweep there (``analyses.runner``) and
``osustat analyze --scheduler`` the comparisons and MDE searches of an analysis
(:func:`cluster_map`, the ``workers`` of :func:`osustat.analysis.analyze`). Both connect
through :func:`connected`, so a missing extra or an unreachable address reads the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from osustat._validation import UsageError

__all__ = ["check_address", "cluster_map", "connected"]


def check_address(address: str | None, jobs: int) -> None:
    """Refuse ``--scheduler`` beside ``--jobs`` above 1, or an empty address (UsageError)."""
    if address is not None and jobs != 1:
        raise UsageError(
            "give `--jobs` (worker processes here) or `--scheduler` (a Dask cluster), not both."
        )
    if address is not None and not address.strip():
        raise UsageError("`--scheduler` is empty; give a Dask address like tcp://HOST:8786.")


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[Any]:
    """A ``distributed.Client`` connected to `address` for the ``with`` block (None when
    `address` is None), closed after it."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "`--scheduler` needs dask.distributed: pip install 'osustat[distributed]'."
        ) from None
    try:
        client = Client(address.strip(), timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(
            f"`--scheduler` {address!r}: cannot connect to a Dask scheduler ({exc})."
        ) from None
    with client:
        yield client


def cluster_map(client: Any) -> Callable[[Callable[[Any], Any], Iterable[Any]], list[Any]]:
    """A map-like over `client`'s workers: ``fn(item)`` for each item, in order.

    The items are scattered to the workers before the tasks refer to them, so a batch of
    comparisons' rows travels as data, not through the scheduler inside the task graph (Dask
    warns of graphs of tens of MiB: one batch of 64 comparisons of 5,000 queries is 58 MiB;
    the cost measured the same both ways, docs/performance.md)."""

    def mapper(fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        data = client.scatter(list(items))
        return list(client.gather(client.map(fn, data, pure=False)))

    return mapper
