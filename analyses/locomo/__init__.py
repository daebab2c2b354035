"""LoCoMo (long conversational memory) on the benchmark protocol: ``osustat reproduce locomo``.

The protocol object is ``analyses.locomo.benchmark.BENCHMARK``; docs/locomo.md has the mapping
of the paper's views and cells to LoCoMo, the declared choices and the results.
"""
