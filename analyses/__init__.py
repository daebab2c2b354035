"""Benchmark pipelines that build trajectories, run retrievers and emit records.

One subpackage per benchmark, holding everything about it (its protocol object, computation,
report modules, the paper's printed values it shows, its choices and own claims files):
``analyses.synthetic`` (docs/synthetic.md), ``analyses.tau_bench`` (docs/tau_bench.md),
``analyses.toolbench`` (docs/toolbench.md), ``analyses.locomo`` (docs/locomo.md); each is an
entry point of ``osustat.benchmarks`` (docs/new-benchmark.md). ``analyses.evidence_selection``
is §6.6's LLM-mediated evidence selection, used by τ-bench (docs/evidence_selection.md).
Shared by all: ``analyses.protocol``, ``analyses.driver``, ``analyses.runner`` (the one sweep
runner), ``analyses.sensitivity`` and ``analyses.claims_audit``. A benchmark's printed paper
values are read by its report modules only, never by its analysis.

Submodules are imported explicitly; importing ``analyses`` itself loads nothing heavy.
"""

__all__: list[str] = []
