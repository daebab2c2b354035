"""The τ-bench benchmark (paper Sections 5.1, 6.2, 6.6, Appendix C; docs/tau_bench.md).

:mod:`.formats` reads both trajectory formats (Stage B), :mod:`.data` concatenates and augments
(Stages C, D), :mod:`.run` runs the sweeps, :mod:`.analysis` computes the tables and tests,
:mod:`.audit` audits the paper's claims, :mod:`.llm` runs §6.6's evidence selection, and
:mod:`.reproduce` writes a run's outputs.
"""
