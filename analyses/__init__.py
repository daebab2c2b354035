"""Benchmark pipelines (synthetic, tau-bench, ToolBench) that run retrievers and emit records.

Not built yet (tracked in the synthetic-benchmark issue); the package exists so that the
layout of docs/architecture.md is in place.
"""

__all__: list[str] = []
