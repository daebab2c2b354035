"""Markdown tables and figures rendered from `osustat` result objects.

One module per report: :mod:`.cellwise` (one cell-conditional analysis: table, JSON, forest
plot), :mod:`.audit` (a claims audit), :mod:`.synthetic`, :mod:`.synthetic_sensitivity`,
:mod:`.tau_bench`, :mod:`.toolbench`, :mod:`.user_methods`; :mod:`.figures` and :mod:`._style`
are shared. Import from the module that defines a name.
"""
