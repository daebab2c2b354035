"""The benchmarks ``osustat reproduce`` knows: the entry-point group ``osustat.benchmarks``.

Every benchmark — the built-in ones and one in any other installed package alike — is one
entry point ``NAME = "package.module:OBJECT"`` of the group :data:`GROUP`, where ``OBJECT`` is
an instance of :class:`analyses.protocol.Benchmark` whose ``name`` is ``NAME``. The built-in
ones are registered in osustat's ``pyproject.toml``; a package of your own registers its
benchmark the same way in its own (docs/new-benchmark.md). The names come from the installed
packages' metadata; a benchmark's module is imported only when it is asked for, so a slow or
optional benchmark costs nothing to the others.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from .protocol import Benchmark

__all__ = [
    "GROUP",
    "benchmark_names",
    "episode_unit_benchmarks",
    "get_benchmark",
    "records_benchmarks",
]

#: The entry-point group of benchmarks.
GROUP = "osustat.benchmarks"


def _entry_points() -> dict[str, EntryPoint]:
    """Name -> entry point of every registered benchmark; one name registered to two
    different objects is a ``ValueError`` naming both."""
    out: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in out and out[ep.name].value != ep.value:
            raise ValueError(
                f"benchmark {ep.name!r} is registered twice in the entry-point group {GROUP}: "
                f"{out[ep.name].value} and {ep.value}."
            )
        out[ep.name] = ep
    return out


def benchmark_names() -> tuple[str, ...]:
    """The names of the registered benchmarks, sorted (nothing is imported)."""
    return tuple(sorted(_entry_points()))


def records_benchmarks(records: Any) -> list[str]:
    """The distinct names in `records`' ``benchmark`` column as text, sorted (none without
    the column). Read off the distinct values: a million rows' names one by one took 0.7 s."""
    if "benchmark" not in records:
        return []
    return sorted({str(name) for name in records["benchmark"].unique()})


def episode_unit_benchmarks(records: Any) -> list[str]:
    """The benchmarks of `records` (a records DataFrame) that are registered and declare the
    episode as their unit (LoCoMo: a conversation's questions share one memory), sorted."""
    known = set(benchmark_names())
    return [
        n for n in records_benchmarks(records) if n in known
        and get_benchmark(n).default_unit == "episode"
    ]  # fmt: skip


def get_benchmark(name: str) -> Benchmark:
    """The protocol object of benchmark `name` (``ValueError`` naming the known ones, or the
    entry point whose object is not a :class:`~analyses.protocol.Benchmark` named `name`)."""
    found = _entry_points()
    if name not in found:
        known = ", ".join(sorted(found)) or "none (is osustat installed? run `make`)"
        raise ValueError(f"unknown benchmark {name!r}; known: {known}.")
    ep = found[name]
    where = f"entry point {name} = {ep.value!r} (group {GROUP})"
    try:
        bench = ep.load()
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{where}: cannot load it ({type(exc).__name__}: {exc}).") from exc
    if not isinstance(bench, Benchmark):
        raise ValueError(
            f"{where}: {bench!r} is not an osustat.analyses.protocol.Benchmark (subclass it)."
        )
    missing = [a for a in ("name", "description", "data", "choices") if not hasattr(bench, a)]
    if missing:
        raise ValueError(f"{where}: the benchmark does not declare {', '.join(missing)}.")
    if bench.name != name:
        raise ValueError(f"{where}: the benchmark calls itself {bench.name!r}, not {name!r}.")
    return bench
