"""The τ-bench benchmark (paper Sections 5.1, 6.2, 6.6, Appendix C; docs/tau_bench.md).

:mod:`.formats` reads both trajectory formats (Stage B), :mod:`.data` concatenates and augments
(Stages C, D), :mod:`.run` and :mod:`.workspace` run the sweeps, :mod:`.analysis` computes the
tables and tests, :mod:`.llm` runs §6.6's evidence selection, :mod:`.benchmark` is the
protocol object, and :mod:`.report` writes a run's outputs (text and figures in
:mod:`.report_render` and :mod:`.report_sections`, beside the paper's printed values of
:mod:`.paper_values`).
"""
