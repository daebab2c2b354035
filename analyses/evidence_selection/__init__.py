"""LLM-mediated evidence selection (paper §6.6, Appendix F; docs/evidence_selection.md).

:mod:`.selectors` (an LLM endpoint or an offline stand-in), :mod:`.run` (run the selections as
records), :mod:`.scoring` (soft and hard recall of one selection) and :mod:`.stats`
(seed-averaged vs pooled-seed tests).
"""
