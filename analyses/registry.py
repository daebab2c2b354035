"""The benchmarks ``osustat reproduce`` knows: name -> module path of its protocol object.

One line per benchmark; the driver imports a benchmark only when it is asked for, so a slow or
optional benchmark costs nothing to the others. Adding a benchmark = one subpackage under
``analyses/`` with a ``benchmark.py`` defining ``BENCHMARK`` (:class:`analyses.protocol.Benchmark`)
plus one line here (docs/architecture.md).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BENCHMARKS", "get_benchmark"]

#: ``reproduce NAME`` -> module holding ``BENCHMARK``.
BENCHMARKS: dict[str, str] = {
    "synthetic": "osustat.analyses.synthetic.benchmark",
    "tau-bench": "osustat.analyses.tau_bench.benchmark",
    "toolbench": "osustat.analyses.toolbench.benchmark",
    "locomo": "osustat.analyses.locomo.benchmark",
}


def get_benchmark(name: str) -> Any:
    """The protocol object of benchmark `name` (``ValueError`` naming the known ones)."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}.")
    return importlib.import_module(BENCHMARKS[name]).BENCHMARK
