"""Break-even cell fractions (Appendix I); the oracle-routing ceiling is in :mod:`osustat.oracle`.

Given per-cell effects ``Delta_c`` (treatment minus baseline) and cell fractions ``f_c``, the
aggregate effect of a query population is ``Delta_agg(f) = sum_c f_c Delta_c``. Appendix I
moves along a one-parameter family in which the favorable cell has fraction ``p`` and the
other cells keep their relative proportions ``g_c = f_c / sum_{c' != fav} f_c'``:

    f(p) = (p, g_2 (1 - p), g_3 (1 - p), g_4 (1 - p)),

so ``Delta_agg(p) = p Delta_fav + (1 - p) Delta_nf`` with ``Delta_nf = sum_c g_c Delta_c``,
and the break-even ``p*`` solves ``Delta_agg(p*) = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import (
    as_float_vector,
    check_level,
    check_resamples,
    check_rng,
    check_same_length,
)
from .cells import CELLS, Cell, cell_codes, per_cell_values
from .intervals import ConfidenceInterval

__all__ = ["BreakEvenResult", "break_even", "break_even_bootstrap", "cell_effects"]


def cell_effects(differences: Any, cells: Any) -> tuple[dict[Cell, float], dict[Cell, int]]:
    """Mean paired difference and count per cell present, in table order.

    >>> from osustat import cell_effects
    >>> eff, n = cell_effects([1, 0, -1, 1], ["T+E+", "T+E+", "T-E-", "T-E-"])
    >>> {str(c): v for c, v in eff.items()}, {str(c): k for c, k in n.items()}
    ({'T+E+': 0.5, 'T-E-': 0.0}, {'T+E+': 2, 'T-E-': 2})
    """
    d = as_float_vector(differences, "differences")
    codes = cell_codes(cells)
    check_same_length([("differences", d), ("cells", codes)])
    effects, counts = {}, {}
    for k, c in enumerate(CELLS):
        mask = codes == k
        if mask.any():
            effects[c] = float(d[mask].mean())
            counts[c] = int(mask.sum())
    return effects, counts


@dataclass(frozen=True)
class BreakEvenResult:
    """Break-even point of the Appendix I one-parameter family.

    Attributes
    ----------
    p_star : float
        Break-even fraction of the favorable cell: 0 when `never_negative` (the paper's †),
        NaN when `never_positive`.
    pi_tool : float
        ``pi_T+* = f_T+E+ + f_T+E-`` at ``p*`` (tool-sharing marginal).
    pi_any : float
        ``pi_any+* = 1 - f_T-E-`` at ``p*`` (any-binding marginal).
    never_negative : bool
        Both ``Delta_fav >= 0`` and ``Delta_nf >= 0``: any ``p`` gives a non-negative
        aggregate (the paper's †, ``p* = 0``).
    never_positive : bool
        Both ``Delta_fav <= 0`` and ``Delta_nf < 0``: no ``p`` makes the aggregate positive.
    favorable : Cell
    positive_above : bool
        True (the usual case, ``Delta_nf < 0 < Delta_fav``): the aggregate is positive for
        ``p > p*``. False when ``Delta_fav < 0 <= Delta_nf``: the "favorable" cell hurts and
        the aggregate is positive only for ``p < p*``.
    effect_favorable : float
        ``Delta_fav``.
    effect_nonfavorable : float
        ``Delta_nf = sum_c g_c Delta_c`` over the non-favorable cells.
    conditional_fractions : dict of Cell to float
        ``g_c``, the non-favorable cells' relative proportions.
    ci : ConfidenceInterval or None
        Bootstrap interval for ``p*`` (:func:`break_even_bootstrap`), else None. Like every
        interval of the core it unpacks and indexes as ``(low, high)``.
    pi_tool_ci, pi_any_ci : ConfidenceInterval or None
        The same interval mapped to the two marginals (monotone maps).
    """

    p_star: float
    pi_tool: float
    pi_any: float
    never_negative: bool
    never_positive: bool
    favorable: Cell
    effect_favorable: float
    effect_nonfavorable: float
    conditional_fractions: dict[Cell, float]
    positive_above: bool = True
    ci: ConfidenceInterval | None = None
    pi_tool_ci: ConfidenceInterval | None = None
    pi_any_ci: ConfidenceInterval | None = None
    level: float | None = field(default=None)

    def aggregate_at(self, p: float) -> float:
        """``Delta_agg(p) = p Delta_fav + (1 - p) Delta_nf``."""
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"`p` must be a fraction in [0, 1]; got {p}.")
        return p * self.effect_favorable + (1.0 - p) * self.effect_nonfavorable

    def fractions_at(self, p: float) -> dict[Cell, float]:
        """The cell fractions ``f(p)`` of the family."""
        out = {self.favorable: float(p)}
        for c, g in self.conditional_fractions.items():
            out[c] = g * (1.0 - float(p))
        return {c: out.get(c, 0.0) for c in CELLS}

    def pi_tool_at(self, p: float) -> float:
        f = self.fractions_at(p)
        return f[Cell.TE] + f[Cell.T_ONLY]

    def pi_any_at(self, p: float) -> float:
        return 1.0 - self.fractions_at(p)[Cell.NEITHER]


def break_even(effects: Any, fractions: Any, *, favorable: Any = "T+E+") -> BreakEvenResult:
    r"""Break-even fraction of the favorable cell at which the aggregate effect is zero.

    Parameters
    ----------
    effects : mapping or sequence of 4
        Per-cell effect ``Delta_c`` (treatment minus baseline), keyed by cell or in table
        order T+E+, T+E-, T-E+, T-E-.
    fractions : mapping or sequence of 4
        Cell fractions or counts (normalized here); only the non-favorable cells' relative
        proportions matter.
    favorable : Cell or str
        The cell whose fraction is the family's parameter.

    Returns
    -------
    BreakEvenResult

    Notes
    -----
    ``p* = -Delta_nf / (Delta_fav - Delta_nf)`` when ``Delta_nf < 0 < Delta_fav``;
    ``p* = 0`` (†) when ``Delta_nf >= 0``; NaN when ``Delta_fav <= 0`` and ``Delta_nf < 0``.
    Then ``pi_T+* = p* [fav is T+] + (1 - p*) sum_{c != fav, c in T+} g_c`` and
    ``pi_any+* = p* [fav != T-E-] + (1 - p*) sum_{c != fav, c != T-E-} g_c``.

    Examples
    --------
    The paper's Table 17 at B = 256 (Table 4's Hit@2 gaps, τ-bench counts 56/96/44/132):

    >>> from osustat import break_even
    >>> r = break_even([0.179, -0.031, 0.159, -0.129], [56, 96, 44, 132])
    >>> round(100 * r.p_star, 1), round(100 * r.pi_tool, 1), round(100 * r.pi_any)
    (21.1, 48.9, 62)

    (The paper prints pi_T+* = 49.0%, from p* and the fractions rounded before mapping.)
    """
    eff = per_cell_values(effects, "effects")
    fav = Cell.parse(favorable)
    g = _conditional_fractions(fractions, fav, eff)
    d_fav = eff[fav]
    d_nf = sum(g[c] * eff[c] for c in g)
    never_negative = d_nf >= 0 and d_fav >= 0
    never_positive = d_nf < 0 and d_fav <= 0
    positive_above = True
    if never_negative:
        p_star = 0.0
    elif never_positive:
        p_star = math.nan
    elif d_fav > 0:  # d_nf < 0 < d_fav: positive above p*
        p_star = -d_nf / (d_fav - d_nf)
    else:  # d_fav < 0 <= d_nf: the "favorable" cell hurts; positive only below p*
        p_star = d_nf / (d_nf - d_fav)
        positive_above = False
    result = BreakEvenResult(
        p_star,
        math.nan,
        math.nan,
        never_negative,
        never_positive,
        fav,
        d_fav,
        d_nf,
        g,
        positive_above=positive_above,
    )
    if math.isnan(p_star):
        return result
    return _with(result, pi_tool=result.pi_tool_at(p_star), pi_any=result.pi_any_at(p_star))


def _conditional_fractions(fractions: Any, fav: Cell, eff: Mapping[Cell, Any]) -> dict[Cell, float]:
    """``g_c``, the non-favorable cells' relative proportions, checked against the cells
    that have an effect (`eff`)."""
    frac = per_cell_values(fractions, "fractions")
    negative = [str(c) for c, v in frac.items() if v < 0]
    if negative:
        raise ValueError(f"`fractions` must be non-negative; negative for cells {negative}.")
    others = {c: v for c, v in frac.items() if c is not fav and v > 0}
    if not others:
        raise ValueError("`fractions` must give a positive fraction to some non-favorable cell.")
    missing = [str(c) for c in others if c not in eff] + ([str(fav)] if fav not in eff else [])
    if missing:
        raise ValueError(f"`effects` has no value for cells {missing}, which have a fraction.")
    total = sum(others.values())
    return {c: v / total for c, v in others.items()}


def _p_star_draws(
    draws: Mapping[Cell, NDArray[np.float64]], fractions: Any, fav: Cell
) -> NDArray[np.float64]:
    """:func:`break_even`'s ``p*`` for every bootstrap draw of the cell effects at once,
    ``never_positive`` draws as 1.

    The same float operations in the same order as :func:`break_even` (``Delta_nf`` summed
    cell by cell in table order from 0), element-wise, so each draw's ``p*`` equals the
    scalar call's bit for bit (``tests/osustat/test_breakeven.py`` checks it).
    """
    g = _conditional_fractions(fractions, fav, draws)
    d_fav = draws[fav]
    d_nf: Any = 0
    for c in g:
        d_nf = d_nf + g[c] * draws[c]
    never_negative = (d_nf >= 0) & (d_fav >= 0)
    never_positive = (d_nf < 0) & (d_fav <= 0)
    above = ~never_negative & ~never_positive & (d_fav > 0)
    below = ~never_negative & ~never_positive & ~(d_fav > 0)
    p = np.zeros(d_fav.shape)
    p[never_positive] = 1.0
    p[above] = -d_nf[above] / (d_fav[above] - d_nf[above])
    p[below] = d_nf[below] / (d_nf[below] - d_fav[below])
    return p


#: ``method`` of the intervals :func:`break_even_bootstrap` returns.
BOOTSTRAP_METHOD = "percentile bootstrap, stratified by cell"


def _ordered(a: float, b: float, level: float, marginal: str) -> ConfidenceInterval:
    """The interval for p* mapped to a marginal; the marginals can decrease in p (e.g.
    favorable T-E+ for pi_T+), so the ends are sorted."""
    method = f"{BOOTSTRAP_METHOD} (p* interval mapped to {marginal})"
    return ConfidenceInterval(low=min(a, b), high=max(a, b), level=level, method=method)


def _with(result: BreakEvenResult, **changes: Any) -> BreakEvenResult:
    from dataclasses import replace

    return replace(result, **changes)


#: Resampled values drawn at once by :func:`break_even_bootstrap` (32 MiB of indices): the
#: memory of a draw no longer grows with ``n_resamples * units`` (2**25 resamples of 100
#: units asked for 25 GiB -- red team item 3); what remains is about 50 bytes a resample.
_CHUNK_DRAWS = 2**22


def _resampled_means(
    x: NDArray[np.float64], n_resamples: int, gen: np.random.Generator
) -> NDArray[np.float64]:
    """Means of `n_resamples` resamples of `x` with replacement, drawn in chunks of whole
    resamples of at most :data:`_CHUNK_DRAWS` values. A generator's stream does not depend
    on how a draw is split, so the means equal those of one ``(n_resamples, x.size)`` draw."""
    rows = max(1, _CHUNK_DRAWS // x.size)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        idx = gen.integers(0, x.size, size=(stop - start, x.size))
        means[start:stop] = x[idx].mean(axis=1)
    return means


def break_even_bootstrap(
    differences: Any,
    cells: Any,
    *,
    favorable: Any = "T+E+",
    fractions: Any = None,
    level: float = 0.90,
    n_resamples: int = 2000,
    rng: Any = None,
) -> BreakEvenResult:
    """Break-even from per-query data, with a stratified bootstrap interval for ``p*``.

    Parameters
    ----------
    differences, cells : array_like
        Per-query paired differences and their cells.
    favorable : Cell or str
    fractions : mapping or sequence of 4, optional
        Cell fractions defining the family; defaults to the observed cell counts.
    level : float
        Level of the interval (the paper's "safety bands": above the upper end the
        aggregate is net-positive, below the lower end net-negative, at this confidence).
    n_resamples : int
    rng : {None, int, numpy.random.Generator}

    Returns
    -------
    BreakEvenResult
        With ``ci``, ``pi_tool_ci`` and ``pi_any_ci`` set.

    Notes
    -----
    Queries are resampled with replacement within each cell (cell sizes fixed), the cell
    effects recomputed and ``p*`` solved again; the interval is the percentile interval of
    the ``p*`` draws. Draws with ``never_negative`` count as ``p* = 0`` and draws with
    ``never_positive`` as ``p* = 1``, so the interval is reported on ``[0, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat import break_even_bootstrap
    >>> rng = np.random.default_rng(0)
    >>> cells = np.repeat(["T+E+", "T+E-", "T-E+", "T-E-"], [56, 96, 44, 132])
    >>> d = rng.normal(np.repeat([0.18, -0.03, 0.16, -0.13], [56, 96, 44, 132]), 0.5)
    >>> r = break_even_bootstrap(d, cells, n_resamples=500, rng=1)
    >>> bool(r.ci[0] <= r.p_star <= r.ci[1]), r.level
    (True, 0.9)
    """
    d = as_float_vector(differences, "differences", min_size=2)
    level = check_level(level)
    n_resamples = check_resamples(n_resamples, minimum=2)
    effects, counts = cell_effects(d, cells)
    frac = fractions if fractions is not None else counts
    point = break_even(effects, frac, favorable=favorable)
    codes = cell_codes(cells)
    gen = check_rng(rng)
    draws = {c: _resampled_means(d[codes == CELLS.index(c)], n_resamples, gen) for c in effects}
    fav = point.favorable
    p = np.concatenate(  # element-wise: in chunks, without full-length temporaries
        [
            _p_star_draws({c: v[i : i + _CHUNK_DRAWS] for c, v in draws.items()}, frac, fav)
            for i in range(0, n_resamples, _CHUNK_DRAWS)
        ]
    )
    alpha = 1.0 - level
    lo, hi = (float(q) for q in np.quantile(p, [alpha / 2, 1 - alpha / 2]))
    return _with(
        point,
        ci=ConfidenceInterval(low=lo, high=hi, level=level, method=BOOTSTRAP_METHOD),
        pi_tool_ci=_ordered(point.pi_tool_at(lo), point.pi_tool_at(hi), level, "pi_T+"),
        pi_any_ci=_ordered(point.pi_any_at(lo), point.pi_any_at(hi), level, "pi_any+"),
        level=level,
    )
