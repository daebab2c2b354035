"""Rows the real-data analyses (τ-bench, LoCoMo) build from the core's results for the
by-budget tables of :mod:`osustat.reports.budget_tables`: one place, so both build them alike.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osustat.cellwise import CellConditionalResult

__all__ = ["breakeven_columns"]


def breakeven_columns(res: CellConditionalResult) -> dict[str, Any]:
    """The columns :func:`osustat.reports.budget_tables.breakeven_by_budget` reads, from one
    budget's cell-conditional result (its break-even, oracle and cell effects; None where the
    core computed none)."""
    bh, oc = res.break_even, res.oracle
    by_cell = {ce.cell.value: ce.effect for ce in res.cells if ce.cell is not None}
    return {
        "d_tpep": by_cell.get("T+E+", math.nan),
        "d_tmem": by_cell.get("T-E-", math.nan),
        "p_star": None if bh is None else bh.p_star,
        "p_star_ci": None if bh is None or bh.ci is None else (bh.ci.low, bh.ci.high),
        "band_level": None if bh is None or bh.ci is None else bh.ci.level,
        "pi_tool": None if bh is None else bh.pi_tool,
        "pi_tool_ci": (
            None if bh is None or bh.pi_tool_ci is None else (bh.pi_tool_ci.low, bh.pi_tool_ci.high)
        ),
        "pi_any": None if bh is None else bh.pi_any,
        "never_negative": None if bh is None else bh.never_negative,
        "d_nf": None if bh is None else bh.effect_nonfavorable,
        "oracle_gain": None if oc is None else oc.gain_over_baseline,
        "aggregate": res.aggregate.effect,
    }
