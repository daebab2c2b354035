"""The synthetic benchmark (paper Sections 3.2, 5.1, 6.1, 6.4; docs/synthetic.md).

:mod:`.generator` generates episodes, :mod:`.run` runs every method over them as records,
:mod:`.analysis` computes the tables and tests, :mod:`.reproduce` writes a run's outputs, and
:mod:`.grid` / :mod:`.sensitivity` run the generator sensitivity grid (``grid.toml``).
"""
