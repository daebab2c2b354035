"""Monte Carlo p-values near alpha: resample further until the side of alpha is settled.

A Monte Carlo p estimates the exact p with standard error ``sqrt(p (1 - p) / B)``; where the
p a verdict uses lies within :data:`~osustat.wording.MC_UNDECIDED_Z` (2.576) standard errors of
alpha, which side it falls on is resampling noise (issue 35: .055 printed where the exact p
was .050). The rule here, the same for the audit and for a single test
(:func:`sequential_pvalue`): test again with :data:`GROWTH` times the resamples, on fresh
draws of a seed derived from the claim's own, until the p is more than 2.576 standard errors
from alpha or the next count would exceed the cap (``max_resamples``, at most
:data:`osustat._validation.MAX_RESAMPLES`); a p still within the band at the cap is
"undecided at this Monte Carlo precision". Each look's estimate is independent of the
others' and only the last is used. At a look where the exact p is at distance ``δ`` from alpha,
the chance of stopping on the wrong side is at most one-sided ``Φ(-2.576) = .005``; over the
at most ``log4(cap / B) + 1`` looks (4 from 10,000 to 2^20) a decision error is below
``.005 x looks`` (``benchmarks/sequential_mc.py`` measures it, and the type-I error).

For a corrected p the standard error is taken as the raw p's times ``p_adj / p``, the factor
the correction applied (:func:`osustat.wording.describe_verdict` reads it the same way).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from osustat._validation import MAX_RESAMPLES
from osustat.wording import straddles

from .measure import Measured

__all__ = [
    "GROWTH",
    "SequentialP",
    "mc_standard_error",
    "next_resamples",
    "raw_pvalue_se",
    "sequential_pvalue",
]

#: Factor by which each further look multiplies the resamples.
GROWTH = 4


def mc_standard_error(pvalue: float, n_resamples: int) -> float:
    """``sqrt(p (1 - p) / B)``: the Monte Carlo standard error of a p from `n_resamples` draws."""
    if n_resamples <= 0:
        return 0.0
    return math.sqrt(max(pvalue * (1.0 - pvalue), 0.0) / n_resamples)


def next_resamples(current: int, cap: int) -> int | None:
    """The next look's resample count, or None when it would exceed `cap`."""
    nxt = current * GROWTH
    return nxt if nxt <= min(cap, MAX_RESAMPLES) else None


def raw_pvalue_se(m: Measured, test: str) -> float:
    """Monte Carlo standard error of the raw p that procedure `test` (a
    :data:`osustat.audit.verdicts.TESTS` code) took from claim `m` (0 when exact or
    descriptive).

    Fisher's combination of per-seed p-values is treated as exact: its error is not
    propagated (the per-seed tests are exact up to 2^20 sign patterns per seed).
    """
    if test in ("interaction-centered", "interaction-studentized"):
        res = m.interaction_as_tested if test == "interaction-centered" else m.interaction
        return 0.0 if res is None else mc_standard_error(res.pvalue, res.n_resamples)
    if test == "tost" and m.equivalence is not None:
        e = m.equivalence
        return 0.0 if e.exact else mc_standard_error(e.pvalue, e.n_resamples)
    if test == "pooled" and m.pooled is not None:
        return float(m.pooled.pvalue_se)
    if test in ("sign-flip", "sign-flip-averaged", "sign-flip-seed", "ratio-test",
                "difference-test") and m.test is not None:  # fmt: skip
        return float(m.test.pvalue_se)
    return 0.0


@dataclass(frozen=True)
class SequentialP:
    """A Monte Carlo p resampled until the side of alpha is settled (or the cap reached).

    Attributes
    ----------
    pvalue : float
        The last look's p.
    se : float
        Its Monte Carlo standard error.
    n_resamples : int
        The last look's resample count.
    looks : int
        Tests run (1 when the first was already settled).
    settled : bool
        False: still within 2.576 standard errors of alpha at the cap ("undecided at this
        Monte Carlo precision").
    """

    pvalue: float
    se: float
    n_resamples: int
    looks: int
    settled: bool


def sequential_pvalue(
    test: Callable[[int, np.random.Generator], tuple[float, float]],
    *,
    alpha: float,
    n_resamples: int,
    max_resamples: int,
    rng: Any,
) -> SequentialP:
    """Run ``test(B, generator) -> (p, se)`` with ``B = n_resamples, 4 B, 16 B, ...`` until
    the p is settled on one side of `alpha` or the cap (see the module docstring).

    Each look gets a fresh generator spawned from `rng` (same `rng`, same result); an exact
    test (``se == 0``) is settled at once.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.audit.precision import sequential_pvalue
    >>> from osustat.signflip import signflip_tests
    >>> d = np.random.default_rng(3).normal(0.3, 1, 40)
    >>> def test(b, gen):
    ...     r = signflip_tests([d], n_resamples=b, rng=gen)[0]
    ...     return r.pvalue, r.pvalue_se
    >>> out = sequential_pvalue(test, alpha=0.05, n_resamples=999, max_resamples=2**16, rng=0)
    >>> out.settled
    True
    """
    seq = np.random.SeedSequence(int(np.random.default_rng(rng).integers(2**63 - 1)))
    b, looks = n_resamples, 0
    while True:
        (child,) = seq.spawn(1)
        p, se = test(b, np.random.default_rng(child))
        looks += 1
        if not straddles(p, se, alpha):
            return SequentialP(p, se, b, looks, True)
        nxt = next_resamples(b, max_resamples)
        if nxt is None:
            return SequentialP(p, se, b, looks, False)
        b = nxt
