"""Westfall–Young step-down (osustat.stepdown) against independent references: brute-force
enumeration of every sign pattern written from the textbook algorithm, the single-test
sign-flip p-value, and a small family-wise error simulation (full sizes in
benchmarks/stepdown_fwer.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from osustat import paired_signflip_test
from osustat.multitest import adjust_pvalues
from osustat.stepdown import westfall_young


def _brute(d: np.ndarray, method: str) -> np.ndarray:
    """Westfall & Young (1993) Algorithms 2.8/2.9 by plain loops over all 2**n sign vectors."""
    n, k = d.shape
    norm = np.sqrt((d**2).sum(axis=0))
    norm[norm == 0] = np.inf
    stats = []
    for signs in itertools.product((1.0, -1.0), repeat=n):
        s = np.array(signs)
        stats.append([abs(float(s @ d[:, j])) / norm[j] for j in range(k)])
    null = np.array(stats)  # row 0 is the observed (all +1)
    obs = null[0]
    tol = 1e-9
    raw = np.array([np.mean(null[:, j] >= obs[j] - tol) for j in range(k)])
    if method == "maxt":
        order = sorted(range(k), key=lambda j: (-obs[j], j))
        crit = obs
    else:
        pstar = np.array(
            [[np.mean(null[:, j] >= null[b, j] - tol) for j in range(k)] for b in range(len(null))]
        )
        order = sorted(range(k), key=lambda j: (raw[j], -obs[j], j))
    adj = np.empty(k)
    running = 0.0
    for r, j in enumerate(order):
        rest = order[r:]
        if method == "maxt":
            hits = [max(null[b, i] for i in rest) >= crit[j] - tol for b in range(len(null))]
        else:
            hits = [min(pstar[b, i] for i in rest) <= raw[j] + tol for b in range(len(null))]
        running = max(running, float(np.mean(hits)))
        adj[j] = running
    return adj


@pytest.mark.parametrize("method", ["maxt", "minp"])
@pytest.mark.parametrize("case", range(4))
def test_exact_enumeration_matches_brute_force(method: str, case: int) -> None:
    rng = np.random.default_rng(case)
    n, k = 9, 4
    shared = rng.normal(size=(n, 1))
    d = shared + 0.6 * rng.normal(size=(n, k)) + rng.normal(0, 0.5, size=k)
    if case == 1:  # 0/1-like differences: heavy ties
        d = np.sign(np.round(d))
    if case == 2:
        d[:, 2] = 0.0  # a test with nothing to test
    if case == 3:
        d[:4] = 0.0  # units with no difference anywhere are dropped (same p)
    res = westfall_young(d, method=method, n_resamples=2**n)
    assert res.exact
    np.testing.assert_allclose(res.pvalues_adjusted, _brute(d, method), atol=1e-12)
    assert np.all(res.pvalues_adjusted >= res.pvalues - 1e-12)


def test_single_test_equals_the_signflip_test() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.4, 1, size=12)
    res = westfall_young(d[:, None], n_resamples=2**12)
    ref = paired_signflip_test(d, np.zeros(12), n_resamples=2**12)
    assert ref.exact and res.exact
    assert res.pvalues_adjusted[0] == pytest.approx(ref.pvalue, abs=1e-12)
    assert res.pvalues[0] == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_is_close_to_exact() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(size=(14, 1)) + 0.5 * rng.normal(size=(14, 3)) + [0.2, 0.5, 0.9]
    exact = westfall_young(d, n_resamples=2**14)
    mc = westfall_young(d, n_resamples=10_000, rng=0)
    assert exact.exact and not mc.exact
    se = np.sqrt(exact.pvalues_adjusted * (1 - exact.pvalues_adjusted) / 10_000)
    assert np.all(np.abs(mc.pvalues_adjusted - exact.pvalues_adjusted) <= 4 * se + 1e-4)


def test_shared_units_by_label() -> None:
    """A sequence of tests with unit labels equals the dense matrix with zeros elsewhere."""
    rng = np.random.default_rng(2)
    d = rng.normal(0.3, 1, size=(10, 2))
    labels = [f"q{i}" for i in range(10)]
    dense = westfall_young(d, n_resamples=2**10)
    ragged = westfall_young([d[::-1, 0], d[:6, 1]], [labels[::-1], labels[:6]], n_resamples=2**10)
    d2 = d.copy()
    d2[6:, 1] = 0.0
    again = westfall_young(d2, n_resamples=2**10)
    np.testing.assert_allclose(ragged.pvalues_adjusted, again.pvalues_adjusted)
    assert dense.n_units == ragged.n_units == 10


def test_same_seed_same_pvalues_and_bad_inputs() -> None:
    d = np.random.default_rng(0).normal(size=(40, 3))
    a = westfall_young(d, n_resamples=500, rng=7)
    b = westfall_young(d, n_resamples=500, rng=7)
    np.testing.assert_array_equal(a.pvalues_adjusted, b.pvalues_adjusted)
    with pytest.raises(ValueError, match="method"):
        westfall_young(d, method="tukey")
    with pytest.raises(ValueError, match="twice"):
        westfall_young([[1.0, 2.0]], [["q1", "q1"]])
    with pytest.raises(ValueError, match="NaN"):
        westfall_young(np.array([[1.0, np.nan], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="label arrays"):
        westfall_young([[1.0, 2.0]], [["a", "b"], ["c"]])


def test_fwer_under_the_complete_null_and_gain_over_holm() -> None:
    """Small simulation (benchmarks/stepdown_fwer.py has the full one): four methods with a
    shared unit effect (correlation .8 between comparisons), complete null. The FWER of
    maxT stays within 3 simulation SEs of alpha; under a shift of three methods maxT rejects
    more in total than Holm on the same p-values."""
    rng = np.random.default_rng(11)
    reps, n, k = 300, 30, 4
    errors = 0
    holm_total = maxt_total = 0
    for r in range(reps):
        shared = rng.normal(size=(n, 1))
        d = 2.0 * shared + rng.normal(size=(n, k))
        errors += bool(westfall_young(d, n_resamples=199, rng=r).reject.any())
        shifted = d + 0.5 * np.sqrt(5.0) * np.array([0.0, 0.6, 0.6, 0.6])
        wy = westfall_young(shifted, n_resamples=199, rng=r)
        holm = adjust_pvalues(wy.pvalues, method="holm").reject
        holm_total += int(holm.sum())
        maxt_total += int(wy.reject.sum())
    fwer = errors / reps
    assert fwer <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)
    assert maxt_total > holm_total


def test_unit_labels_follow_the_id_rule() -> None:
    """Issue 35 item 8: int 0..9 and float 0.0..9.0 were compared as text ("0" vs "0.0"):
    20 units instead of 10 and adjusted p .023 -> .044. Numbers compare as numbers; text
    and numbers mixed are refused."""
    rng = np.random.default_rng(2)
    d = rng.normal(0.5, 1, size=(10, 2))
    same = westfall_young(d, n_resamples=2**10)
    ints, floats = np.arange(10), np.arange(10, dtype=float)
    mixed = westfall_young([d[:, 0], d[:, 1]], [ints, floats], n_resamples=2**10)
    assert mixed.n_units == 10
    np.testing.assert_allclose(mixed.pvalues_adjusted, same.pvalues_adjusted)
    with pytest.raises(ValueError, match="`units` mixes text labels"):
        westfall_young([d[:, 0], d[:, 1]], [ints, [str(i) for i in ints]])
    with pytest.raises(ValueError, match=r"`units\[0\]` mixes text and numbers"):
        westfall_young([d[:, 0], d[:, 1]], [[0, "1", *range(2, 10)], ints])
    # an outside re-check (stop 57): '1' and b'1' were two units, 20 in all, silently
    labels = [str(i) for i in ints]
    with pytest.raises(ValueError, match=r"`units` mixes bytes labels \(arrays 1\) with str"):
        westfall_young([d[:, 0], d[:, 1]], [labels, [x.encode() for x in labels]])
    assert westfall_young([d[:, 0], d[:, 1]], [labels, labels], n_resamples=2**10).n_units == 10


def _two_tests(u1, u2):
    rng = np.random.default_rng(0)
    d1, d2 = rng.normal(0.5, 1, 10), rng.normal(0.5, 1, 10)
    return westfall_young([d1, d2], [u1, u2], n_resamples=4000, rng=0)


def test_integer_labels_compare_exactly() -> None:
    """Red team item 4: float(x) merged 10**16 and 10**16 + 1 (adjusted p .0859 where the
    distinct labels 100 / 101 give .0869) and refused ten distinct 19-digit ids as a unit
    appearing twice."""
    ints = list(range(1, 10))
    ref = _two_tests([100, *ints], [101, *ints])
    big = _two_tests([10**16, *ints], [10**16 + 1, *ints])
    assert big.n_units == ref.n_units == 11
    np.testing.assert_array_equal(big.pvalues_adjusted, ref.pvalues_adjusted)
    ids = [1234567890123456789 + i for i in range(10)]
    small = _two_tests(list(range(10)), list(range(5, 15)))
    for kind in (list, lambda x: np.array(x, dtype=np.int64)):
        got = _two_tests(kind(ids), kind([i + 5 for i in ids]))
        assert got.n_units == small.n_units == 15
        np.testing.assert_array_equal(got.pvalues_adjusted, small.pvalues_adjusted)
    # an integral float is its integer, exactly: float(2**53 + 1) is 2**53, another unit
    assert _two_tests([2**53 + 1, *ints], [float(2**53 + 1), *ints]).n_units == 11
    assert _two_tests([2**53, *ints], [float(2**53), *ints]).n_units == 10
    # non-integral floats stay floats
    assert _two_tests([0.5, *ints], [0.5, *ints]).n_units == 10


def test_nan_and_bool_labels_are_refused() -> None:
    ints = list(range(10))
    with pytest.raises(ValueError, match=r"`units\[1\]` position 0: NaN is not a unit label"):
        _two_tests(ints, [float("nan"), *ints[1:]])
    with pytest.raises(ValueError, match=r"`units\[0\]` position 3: NaN"):
        _two_tests([0.0, 1.0, 2.0, np.nan, *ints[4:]], ints)
    # an infinite label is no unit either (a red team: ±inf was accepted as one)
    with pytest.raises(ValueError, match=r"`units\[1\]` position 2: inf is not a unit label"):
        _two_tests(ints, [0.0, 1.0, float("inf"), *ints[3:]])
    with pytest.raises(ValueError, match=r"`units\[0\]` position 0: -inf is not a unit label"):
        _two_tests([-np.inf, *ints[1:]], ints)
    with pytest.raises(ValueError, match=r"`units\[1\]` position 0: True is a bool"):
        _two_tests(ints, [True, False, *ints[2:]])
    with pytest.raises(ValueError, match=r"`units\[0\]` position 0: .*False.* is a bool"):
        _two_tests(list(np.arange(10) > 4), ints)  # numpy bools
