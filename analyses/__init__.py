"""Benchmark pipelines that build trajectories, run retrievers and emit records.

- ``analyses.synthetic`` / ``synthetic_run`` / ``synthetic_analysis`` / ``reproduce``: the
  synthetic benchmark end to end (``osustat reproduce synthetic``; docs/synthetic.md).
- ``analyses.evidence_selection`` (+ ``evidence_selectors``, ``evidence_selection_stats``): the
  LLM-mediated evidence-selection scoring of Section 6.6 (docs/evidence_selection.md).

Submodules are imported explicitly; importing ``analyses`` itself loads nothing heavy.
"""

__all__: list[str] = []
