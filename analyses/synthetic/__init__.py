"""The synthetic benchmark (paper Sections 3.2, 5.1, 6.1, 6.4; docs/synthetic.md).

:mod:`.generator` generates episodes, :mod:`.run` runs every method over them as records,
:mod:`.analysis` computes the tables and tests, :mod:`.benchmark` is the protocol object,
:mod:`.report` writes a run's outputs (text and figures in :mod:`.report_render`, beside the
paper's printed values of :mod:`.paper_values`), and :mod:`.grid` / :mod:`.sensitivity` /
:mod:`.report_sensitivity` run and report the generator sensitivity grid (``grid.toml``).
"""
