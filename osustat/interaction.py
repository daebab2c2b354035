"""Method x cell interaction tests: is the paired effect the same in every cell?

The paper (Section 6.3) tests heterogeneity of the per-query difference ``d_i`` (treatment
minus baseline) across the evidence cells with sign flips of within-cell-centered
differences and the between-cell spread of cell means as statistic. Its calibration under the
null is measured, not assumed: see ``docs/statistics.md`` for the type-I error of every method
here under unequal cell sizes and unequal within-cell variances
(``benchmarks/interaction_type1.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._resampling import chunk_rows, null_sum_blocks
from ._validation import (
    as_float_vector,
    check_positive_int,
    check_resamples,
    check_rng,
    check_same_length,
    power_of_two_scale,
)
from .cells import CELLS, Cell, cell_codes

__all__ = [
    "INTERACTION_METHODS",
    "InteractionResult",
    "centered_size_at_equal_variances",
    "interaction_test",
]

INTERACTION_METHODS = ("studentized-signflip", "centered-signflip", "label-permutation", "ols")

#: Cells from this size on have their flipped sums drawn from the normal law (central limit
#: theorem for Rademacher sums) in :func:`centered_size_at_equal_variances`; smaller cells
#: are flipped sign by sign, as the test does.
_CLT_FROM = 30


@dataclass(frozen=True, kw_only=True)
class InteractionResult:
    """Result of a method x cell interaction test.

    Attributes
    ----------
    statistic : float
        Observed statistic (its definition depends on `method`, see
        :func:`interaction_test`). The spread statistics are in squared data units and
        read ``inf`` when that exceeds the float range; the p-value is computed on exactly
        rescaled data and is unaffected.
    pvalue : float
        p-value in ``(0, 1]``.
    cell_means : dict of Cell to float
        Mean paired difference per cell present, in table order.
    cell_n : dict of Cell to int
        Number of units per cell present.
    method : str
        The method used.
    n_resamples : int
        Resamples drawn (0 for ``'ols'``).
    """

    statistic: float
    pvalue: float
    cell_means: dict[Cell, float]
    cell_n: dict[Cell, int]
    method: str
    n_resamples: int


def interaction_test(
    differences: Any,
    cells: Any,
    *,
    method: str = "studentized-signflip",
    n_resamples: int = 10_000,
    rng: Any = None,
) -> InteractionResult:
    r"""Test whether the mean paired difference is equal across evidence cells.

    Parameters
    ----------
    differences : array_like
        Per-unit paired differences ``d_i`` (treatment minus baseline), finite.
    cells : array_like
        The cell of each unit (:class:`Cell` or labels such as ``'T+E+'``); at least two
        distinct cells must be present.
    method : {'studentized-signflip', 'centered-signflip', 'label-permutation', 'ols'}
        ``'centered-signflip'`` is the paper's test (kept for reproduction);
        ``'studentized-signflip'`` (default) uses the same sign flips with a Welch-type
        statistic, which stays calibrated when cells differ in size and variance (for
        roughly symmetric differences; skewed ones make it liberal, see docs/statistics.md);
        ``'label-permutation'`` permutes the cell labels; ``'ols'`` is the classical one-way
        ANOVA F-test of ``d ~ cell`` (statsmodels OLS), i.e. the method x cell interaction
        in the paired design.
    n_resamples : int
        Random sign vectors or label permutations (ignored by ``'ols'``).
    rng : {None, int, numpy.random.Generator}
        Seed or generator (SPEC 7).

    Returns
    -------
    InteractionResult

    Notes
    -----
    Null hypothesis: ``E[d_i] = mu`` for every cell (no method x cell interaction).

    With ``n_c`` units and mean ``dbar_c`` in cell ``c``, residuals ``r_i = d_i - dbar_c``
    remove the between-cell signal; their random sign flips ``s_i r_i`` generate the null
    distribution while each cell keeps its own spread (the paper's procedure).

    - ``'centered-signflip'``: ``T = sum_c n_c (dbar_c - dbar)^2`` with ``dbar`` the grand
      mean, recomputed on the flipped residuals.
    - ``'studentized-signflip'``: ``W = sum_c w_c (dbar_c - dbar_w)^2`` with
      ``w_c = n_c / v_c``, ``dbar_w`` the ``w``-weighted mean and
      ``v_c = ((n_c - 1) s_c^2 + s_pool^2) / n_c`` the cell variance shrunk by one pseudo
      degree of freedom toward the pooled within-cell variance (so cells with constant 0/1
      differences keep a finite weight). The sign flips act on the null model's residuals
      ``d_i - dbar_w`` (the estimated common mean), and ``W`` -- cell variances included --
      is recomputed for every resample. When every within-cell residual is zero the sign-flip
      nulls are degenerate, and both sign-flip methods fall back to ``'label-permutation'``
      (the result's `method` says so).
    - ``'label-permutation'``: ``T`` under random permutations of the cell labels; valid
      when the differences are exchangeable across cells (equal distributions), not only
      equal means.
    - ``'ols'``: ``F = [SS_between / (C - 1)] / [SS_within / (n - C)]`` against
      ``F(C - 1, n - C)``; assumes equal within-cell variances.

    Monte Carlo p-values are ``(b + 1) / (B + 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat import Cell, interaction_test
    >>> rng = np.random.default_rng(0)
    >>> cells = np.repeat(["T+E+", "T+E-", "T-E+", "T-E-"], 50)
    >>> d = rng.normal(0, 1, 200) + np.repeat([0.8, 0.0, 0.0, -0.5], 50)
    >>> res = interaction_test(d, cells, rng=1)
    >>> res.method, res.pvalue < 0.001, res.cell_n[Cell.TE]
    ('studentized-signflip', True, 50)
    """
    d, codes, present = _interaction_iv(differences, cells, method)
    n_resamples = check_resamples(n_resamples)
    # Every method's p-value is scale-invariant; compute on d rescaled by a power of two
    # (exact), so squares of huge values cannot overflow nor those of tiny ones underflow
    # (issue 11: values near 1e160 gave p = 1e-4 where the rescaled data give .83).
    exp = power_of_two_scale(d)
    d = np.ldexp(d, -exp)
    n_c = np.bincount(codes, minlength=len(present)).astype(np.float64)
    sums = np.bincount(codes, weights=d, minlength=len(present))
    means = sums / n_c
    cell_means = {c: float(np.ldexp(m, exp)) for c, m in zip(present, means, strict=True)}
    cell_n = {c: int(k) for c, k in zip(present, n_c, strict=True)}

    if method == "ols":
        stat, pvalue = _ols_f(d, codes, len(present))
        return InteractionResult(
            statistic=stat,
            pvalue=pvalue,
            cell_means=cell_means,
            cell_n=cell_n,
            method=method,
            n_resamples=0,
        )

    gen = check_rng(rng)
    onehot = np.zeros((d.size, len(present)))
    onehot[np.arange(d.size), codes] = 1.0
    resid = d - means[codes]
    ss = np.bincount(codes, weights=resid**2, minlength=len(present)).astype(np.float64)
    degenerate = ss.sum() <= 1e-24 * max(1.0, float(d @ d))
    if method == "label-permutation" or degenerate:
        # With no within-cell variation the sign-flip nulls are point masses (every flipped
        # residual is 0) and carry no information; permuting labels still tests whether the
        # differences are exchangeable across cells.
        observed = _spread(means[None, :], n_c)[0]
        null = _label_permutation_null(d, onehot, n_c, n_resamples, gen)
    else:
        seed = int(gen.integers(2**63 - 1))
        if method == "centered-signflip":
            observed = _spread(means[None, :], n_c)[0]
            null = _null_statistics(
                seed,
                n_resamples,
                onehot * resid[:, None],
                lambda cell_sums: _spread(cell_sums / n_c, n_c),
            )
        else:
            observed_row, common = _welch(means[None, :], ss[None, :], n_c, with_mean=True)
            observed = observed_row[0]
            # Flip the null model's residuals (d minus the estimated common mean), not the
            # within-cell-centered ones: the latter lose a degree of freedom per cell, which
            # made them anti-conservative for cells of 5 (benchmarks/interaction_type1.py).
            null_resid = d - common[0]
            sq = np.bincount(codes, weights=null_resid**2, minlength=len(present))

            def welch(cell_sums: NDArray[np.float64]) -> NDArray[np.float64]:
                null_means = cell_sums / n_c
                return _welch(null_means, sq[None, :] - n_c * null_means**2, n_c)

            null = _null_statistics(seed, n_resamples, onehot * null_resid[:, None], welch)
    tol = 1e-9 * max(abs(observed), float(np.max(np.abs(null), initial=0.0)), 1e-300)
    b = int(np.count_nonzero(null >= observed - tol))
    pvalue = (b + 1) / (n_resamples + 1)
    used = "label-permutation" if degenerate and method != "ols" else method
    if used != "studentized-signflip":  # the spread statistic is in squared data units
        with np.errstate(over="ignore"):  # beyond float range for |d| above ~1e154: inf
            observed = float(np.ldexp(observed, 2 * exp))
    return InteractionResult(
        statistic=float(observed),
        pvalue=float(pvalue),
        cell_means=cell_means,
        cell_n=cell_n,
        method=used,
        n_resamples=n_resamples,
    )


def _interaction_iv(
    differences: Any, cells: Any, method: str
) -> tuple[NDArray[np.float64], NDArray[np.int64], list[Cell]]:
    if method not in INTERACTION_METHODS:
        raise ValueError(f"`method` must be one of {sorted(INTERACTION_METHODS)}; got {method!r}.")
    d = as_float_vector(differences, "differences", min_size=2)
    all_codes = cell_codes(cells)
    check_same_length([("differences", d), ("cells", all_codes)])
    present_codes = np.flatnonzero(np.bincount(all_codes, minlength=len(CELLS)))
    present = [CELLS[k] for k in present_codes]
    if len(present) < 2:
        raise ValueError(
            "`cells` must contain at least two distinct cells; got only "
            f"{[str(c) for c in present]}."
        )
    remap = np.zeros(len(CELLS), dtype=np.int64)
    remap[present_codes] = np.arange(present_codes.size)
    codes = remap[all_codes]  # 0 .. len(present) - 1 in table order
    sizes = np.bincount(codes, minlength=len(present))
    small = [f"{c} (n={int(k)})" for c, k in zip(present, sizes, strict=True) if k < 2]
    if small:
        raise ValueError(
            f"every cell needs at least 2 units for an interaction test; too small: {small}. "
            "Drop or merge those cells (and report it)."
        )
    return d, codes, present


def _spread(means: NDArray[np.float64], n_c: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_c n_c (m_c - m)^2`` per row, ``m`` the n-weighted grand mean."""
    grand = (means @ n_c) / n_c.sum()
    return ((means - grand[:, None]) ** 2) @ n_c


def _welch(
    means: NDArray[np.float64],
    ss: NDArray[np.float64],
    n_c: NDArray[np.float64],
    *,
    with_mean: bool = False,
) -> Any:
    """Welch-type ``sum_c w_c (m_c - m_w)^2`` per row with shrunk cell variances.

    `ss` holds each cell's sum of squared deviations from its own mean. With `with_mean`,
    also return the ``w``-weighted common mean ``m_w`` of each row.
    """
    ss = np.maximum(ss, 0.0)  # rounding can push resampled sums of squares just below 0
    df = n_c - 1.0
    pooled = ss.sum(axis=1, keepdims=True) / max(df.sum(), 1.0)
    var = (ss + pooled) / n_c  # ((n_c - 1) s_c^2 + s_pool^2) / n_c
    var = np.maximum(var, 1e-300)
    w = n_c / var
    grand = (means * w).sum(axis=1, keepdims=True) / w.sum(axis=1, keepdims=True)
    stat = (w * (means - grand) ** 2).sum(axis=1)
    return (stat, grand[:, 0]) if with_mean else stat


def _null_statistics(
    seed: int,
    n_resamples: int,
    columns: NDArray[np.float64],
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
) -> NDArray[np.float64]:
    """The null statistic of each random sign vector of `seed`, computed block by block of
    the sign stream (:func:`osustat._resampling.null_sum_blocks`, the blocks ``null_sums``
    is made of, so the cell sums are the same bit for bit): memory one float per resample,
    not one per resample and cell plus the statistic's temporaries (7.2 GB at the cap of
    2^25 resamples, an outside re-check, stop 57)."""
    out = np.empty(n_resamples)
    for start, stop, cell_sums in null_sum_blocks(seed, n_resamples, columns.shape[0], columns):
        out[start:stop] = statistic(cell_sums)
    return out


def _label_permutation_null(
    d: NDArray[np.float64],
    onehot: NDArray[np.float64],
    n_c: NDArray[np.float64],
    n_resamples: int,
    gen: np.random.Generator,
) -> NDArray[np.float64]:
    rows = chunk_rows(d.size)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        perm = gen.permuted(np.broadcast_to(d, (stop - start, d.size)), axis=1)
        out[start:stop] = _spread((perm @ onehot) / n_c, n_c)
    return out


def _ols_f(d: NDArray[np.float64], codes: NDArray[np.int64], k: int) -> tuple[float, float]:
    import statsmodels.api as sm

    design = np.zeros((d.size, k))
    design[:, 0] = 1.0
    for j in range(1, k):
        design[:, j] = codes == j
    fit = sm.OLS(d, design).fit()
    restriction = np.eye(k)[1:]
    test = fit.f_test(restriction)
    return float(np.squeeze(test.fvalue)), float(np.squeeze(test.pvalue))


def centered_size_at_equal_variances(
    cell_n: Any,
    *,
    alpha: float = 0.05,
    n_datasets: int = 4000,
    n_resamples: int = 999,
) -> float:
    """Type-I error of the ``'centered-signflip'`` test at these cell sizes, equal variances.

    The paper's centred statistic flips within-cell-centred residuals, whose sum of squares
    is ``(n_c - 1) s_c^2`` where a cell mean's variance is ``n_c`` times smaller than
    ``sigma^2`` -- each cell's null is narrowed by ``(n_c - 1) / n_c`` and the noise of the
    small cells' ``s_c`` makes it worse: the test is liberal with small cells even when every
    cell has the same variance (issue 35 item 5; cells (4, 12, 60, 250) reject .10 at
    alpha = .05). The excess depends on every cell's size, not on the smallest alone, so it
    is computed here for the cells at hand: the rejection rate at `alpha` over `n_datasets`
    null data sets of normal differences with one common variance (the setting in which the
    statistic is at its best: unequal variances and skew add to it, docs/statistics.md), each
    tested with `n_resamples` sign flips. Cells of fewer than 30 units are flipped sign by
    sign like the test; larger cells' mean and sum of squares are drawn from their normal
    laws and their flipped sums from the normal law with that variance. Deterministic (fixed
    seed); its Monte Carlo standard error is ``sqrt(size (1 - size) / n_datasets)`` (.0038 at
    .06 with the default). ``benchmarks/interaction_small_cell.py --random`` checks it against
    :func:`interaction_test` itself on cell sizes drawn at random.

    Parameters
    ----------
    cell_n : sequence of int
        Units per cell (at least two cells of at least 2 units).
    alpha : float
        Level of the test.
    n_datasets, n_resamples : int
        Simulated null data sets and sign flips per data set.

    Returns
    -------
    float
        The simulated rejection rate.

    Examples
    --------
    >>> from osustat.interaction import centered_size_at_equal_variances
    >>> round(centered_size_at_equal_variances([50, 50, 50, 50]), 2) <= 0.06
    True
    >>> centered_size_at_equal_variances([4, 12, 60, 250]) > 0.08
    True
    """
    sizes = tuple(int(k) for k in np.asarray(cell_n).ravel())
    if len(sizes) < 2 or min(sizes) < 2:
        raise ValueError(f"`cell_n` needs at least two cells of at least 2 units; got {sizes}.")
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    n_datasets = check_positive_int(n_datasets, "n_datasets")
    n_resamples = check_resamples(n_resamples)
    return _centered_size(sizes, float(alpha), n_datasets, n_resamples)


@lru_cache(maxsize=256)
def _centered_size(sizes: tuple[int, ...], alpha: float, reps: int, m: int) -> float:
    """:func:`centered_size_at_equal_variances` on checked arguments (cached: the audit asks
    once per interaction claim and standard, often for the same cells)."""
    gen = np.random.default_rng(list(sizes))
    n_c = np.asarray(sizes, dtype=np.float64)
    hits = 0
    chunk = 50
    for start in range(0, reps, chunk):
        k = min(chunk, reps - start)
        means = np.empty((k, n_c.size))
        null_means = np.empty((k, m, n_c.size))
        for c, nc in enumerate(sizes):
            if nc < _CLT_FROM:
                d = gen.standard_normal((k, nc))
                means[:, c] = d.mean(axis=1)
                resid = d - means[:, c, None]
                signs = gen.integers(0, 2, size=(k, m, nc)) * 2.0 - 1.0
                null_means[:, :, c] = np.einsum("kmn,kn->km", signs, resid) / nc
            else:
                means[:, c] = gen.standard_normal(k) / np.sqrt(nc)
                ss = gen.chisquare(nc - 1, k)
                null_means[:, :, c] = gen.standard_normal((k, m)) * np.sqrt(ss)[:, None] / nc
        observed = _spread(means, n_c)
        null = _spread(null_means.reshape(k * m, n_c.size), n_c).reshape(k, m)
        p = (np.count_nonzero(null >= observed[:, None], axis=1) + 1) / (m + 1)
        hits += int(np.count_nonzero(p <= alpha))
    return hits / reps
