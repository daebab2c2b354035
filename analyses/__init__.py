"""Benchmark pipelines that build trajectories, run retrievers and emit records.

One subpackage per benchmark: ``analyses.synthetic`` (docs/synthetic.md),
``analyses.tau_bench`` (docs/tau_bench.md), ``analyses.toolbench`` (docs/toolbench.md), and
``analyses.evidence_selection`` (§6.6's LLM-mediated evidence selection, used by τ-bench;
docs/evidence_selection.md). Shared by all: ``analyses.runner`` (the one sweep runner). The
paper's printed numbers live in ``reports.paper_values``: reports print them, analyses never
see them.

Submodules are imported explicitly; importing ``analyses`` itself loads nothing heavy.
"""

__all__: list[str] = []
