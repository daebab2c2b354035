"""Time 320 paired sign-flip tests (n = 328, 10,000 resamples): osustat vs a scipy loop.

Both run in this one process on the same data: `osustat.signflip_tests` (one shared sign matrix,
one matrix product per chunk) against a loop of `scipy.stats.permutation_test(...,
permutation_type="samples", vectorized=True)` and against scipy's batched call (all comparisons
in one `permutation_test(..., axis=0)`). Ours is timed `--repeats` times, half before and half
after the scipy runs (the median of all), so a load change on a shared machine hits both.
Also reports how far the two sets of Monte Carlo p-values are apart (they use different random
draws, so they agree within resampling noise) and recounts ours in exact integer arithmetic on
the same sign vectors. If ranx is installed (`pip install ranx`; not a dependency), a loop of
its numba Fisher randomization test is timed too.

    .venv/bin/python benchmarks/signflip_speed.py [--tests 320] [--n 328] [--resamples 10000]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from scipy import stats

from osustat import signflip_tests
from osustat._resampling import sign_matrix


def mean_diff(x, y, axis):
    return np.mean(x - y, axis=axis)


def _time_ranx(d: np.ndarray, resamples: int) -> tuple[float | None, np.ndarray | None]:
    """A loop of ranx's Fisher randomization test (numba) over the columns, if ranx is here.

    ranx permutes each query's (control, treatment) pair, i.e. a sign flip of the difference,
    and counts ``|mean difference| >=`` the observed one: the same two-sided test as ours.
    The first call (numba's JIT compile) is excluded from the timing.
    """
    try:
        from ranx.statistical_tests import fisher_randomization_test
    except ImportError:
        return None, None
    zeros = np.zeros(d.shape[0])
    fisher_randomization_test(zeros, d[:, 0].copy(), 100, 0.05, 0)  # compile
    start = time.perf_counter()
    p = [
        fisher_randomization_test(zeros, np.ascontiguousarray(d[:, j]), resamples, 0.05, j)[0]
        for j in range(d.shape[1])
    ]
    return time.perf_counter() - start, np.asarray(p)


def main() -> None:
    args = _arguments()
    d_int = _differences(args)
    d = d_int / 100
    _warm_up(d, args.n)
    ours, times, p_ref, p_ranx = _timings(d, args)
    _print_results(args, d_int, ours, times, p_ref, p_ranx)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=320)
    parser.add_argument("--n", type=int, default=328)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeats", type=int, default=20, help="timed calls of ours (median; half before scipy)"
    )
    return parser.parse_args()


def _differences(args: argparse.Namespace) -> np.ndarray:
    """100 x the per-query differences (n x tests), exactly, in integers."""
    rng = np.random.default_rng(args.seed)
    # recall-like per-query values: differences with many distinct magnitudes (Monte Carlo path)
    a = rng.integers(0, 5, size=(args.n, args.tests))
    b = rng.integers(0, 5, size=(args.n, args.tests))
    offset = np.arange(args.tests) % 5
    d_int = 25 * (a - b) + 2 * offset  # 100 x the differences, exactly, in integers
    # every 32nd comparison gets an exact zero mean (second half mirrors the first), where a
    # tolerance relative to |statistic| can miss the observed statistic's own tie
    half = args.n // 2
    for j in range(0, args.tests, 32):
        d_int[half : 2 * half, j] = -d_int[:half, j]
        if args.n % 2:
            d_int[-1, j] = 0
    return d_int


def _warm_up(d: np.ndarray, n: int) -> None:
    """Both sides once (imports, BLAS start-up), so that the timings compare steady states."""
    signflip_tests(d[:, :2], n_resamples=100, rng=0)
    stats.permutation_test(
        (d[:, 0], np.zeros(n)),
        mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=100,
        rng=np.random.default_rng(0),
    )


def _timings(d: np.ndarray, args: argparse.Namespace) -> tuple[Any, dict[str, Any], Any, Any]:
    """Ours (first call, then half the repeats before and half after the others), scipy's
    loop and batched call, ranx: (our results, the times, scipy's p, ranx's p)."""
    start = time.perf_counter()
    ours = signflip_tests(d, n_resamples=args.resamples, rng=1)
    t_first = time.perf_counter() - start  # includes first-touch allocation of the sign matrix
    repeats: list[float] = []

    def time_ours() -> None:  # half the repeats before the scipy runs, half after
        for _ in range((args.repeats + 1) // 2):
            start = time.perf_counter()
            signflip_tests(d, n_resamples=args.resamples, rng=1)
            repeats.append(time.perf_counter() - start)

    time_ours()

    start = time.perf_counter()
    ref = []
    for j in range(args.tests):
        res = stats.permutation_test(
            (d[:, j], np.zeros(args.n)),
            mean_diff,
            permutation_type="samples",
            vectorized=True,
            n_resamples=args.resamples,
            rng=np.random.default_rng(j),
        )
        ref.append(res.pvalue)
    t_scipy = time.perf_counter() - start

    # scipy's batched call: all comparisons along axis 1 in one permutation_test
    start = time.perf_counter()
    stats.permutation_test(
        (d, np.zeros_like(d)),
        mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=args.resamples,
        batch=max(1, 2_000_000 // d.size),
        axis=0,
        rng=np.random.default_rng(0),
    )
    t_batched = time.perf_counter() - start
    t_ranx, p_ranx = _time_ranx(d, args.resamples)
    time_ours()
    times = {
        "first": t_first,
        "repeats": repeats,
        "ours": float(np.median(repeats)),
        "scipy": t_scipy,
        "batched": t_batched,
        "ranx": t_ranx,
    }
    return ours, times, np.array(ref), p_ranx


def _print_results(
    args: argparse.Namespace,
    d_int: np.ndarray,
    ours: Any,
    times: dict[str, Any],
    p_ref: np.ndarray,
    p_ranx: Any,
) -> None:
    """The timings, and the p-values against scipy's and an exact integer recount."""
    t_ours, t_first, repeats = times["ours"], times["first"], times["repeats"]
    t_scipy, t_batched, t_ranx = times["scipy"], times["batched"], times["ranx"]
    p_ours = np.array([r.pvalue for r in ours])
    # Two independent Monte Carlo estimates. Ours counts |T*| >= |T|: binomial SE. scipy's
    # two-sided p is 2 x the smaller one-sided p, whose SE is 2 x that of q = p / 2.
    q = np.clip(p_ref / 2, 1e-4, 0.5)
    var_ours = np.maximum(p_ours * (1 - p_ours), 1e-4) / args.resamples
    se = np.sqrt(var_ours + 4 * q * (1 - q) / args.resamples)
    exact_zero = d_int.sum(axis=0) == 0  # statistic exactly 0: p = 1, scipy misses the tie

    # Ties: recount our p-values in exact integer arithmetic on the very same sign vectors.
    signs = sign_matrix(ours[0]._sign_seed, args.resamples, args.n)
    sums = signs.astype(np.int64) @ d_int
    b_exact = (np.abs(sums) >= np.abs(d_int.sum(axis=0))).sum(axis=0)
    mismatches = int(np.sum(np.abs((b_exact + 1) / (args.resamples + 1) - p_ours) > 1e-15))
    print(f"{args.tests} tests, n = {args.n}, {args.resamples:,} resamples")
    print(
        f"osustat.signflip_tests : {t_ours * 1e3:8.1f} ms (median of {len(repeats)}, fastest "
        f"{min(repeats) * 1e3:.1f} ms; first call {t_first * 1e3:.1f} ms)"
    )
    print(f"scipy permutation_test : {t_scipy:8.3f} s  (loop)")
    print(
        f"scipy batched call     : {t_batched:8.3f} s  (one call, axis=0; "
        f"{t_batched / t_ours:.0f} x ours)"
    )
    if t_ranx is not None and p_ranx is not None:
        print(
            f"ranx Fisher test loop  : {t_ranx:8.3f} s  (numba, JIT compile excluded; "
            f"{t_ranx / t_ours:.0f} x ours; max |p_ours - p_ranx| "
            f"{np.max(np.abs(p_ours - p_ranx)):.4f})"
        )
    else:
        print("ranx Fisher test loop  : not run (ranx not installed: pip install ranx)")
    print(
        f"speed-up               : {t_scipy / t_ours:8.1f} x  "
        f"({t_scipy / t_first:.0f} x on the first call)"
    )
    print(
        f"max |p_ours - p_scipy| : {np.max(np.abs(p_ours - p_ref)):.4f}; "
        f"within 3 SE of the difference for {np.mean(np.abs(p_ours - p_ref) <= 3 * se):.1%} "
        "of tests"
    )
    print(
        f"tests whose mean difference is exactly 0: {int(exact_zero.sum())}; there ours gives "
        f"p = {sorted(set(p_ours[exact_zero].round(6)))}, scipy "
        f"{sorted(set(p_ref[exact_zero].round(4)))}"
    )
    outside = (np.abs(p_ours - p_ref) > 3 * se) & ~exact_zero
    print(f"tests outside 3 SE excluding those: {int(outside.sum())} of {int((~exact_zero).sum())}")
    print(f"p-values differing from an exact integer recount on the same signs: {mismatches}")


if __name__ == "__main__":
    main()
