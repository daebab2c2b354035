"""The ToolBench planted-retrieval probe (paper Sections 5.1-5.2, 6.1, 6.5, Appendix G;
docs/toolbench.md).

:mod:`.data` loads the answer trajectories, :mod:`.episodes` plants the episodes, :mod:`.run`
runs the sweep, :mod:`.analysis` computes the tables and tests, :mod:`.benchmark` is the
protocol object, and :mod:`.report` writes a run's outputs (text and Figure 4 in
:mod:`.report_render`, beside the paper's printed values of :mod:`.paper_values`).
"""
