"""Small versions of benchmarks/calibration.py and benchmarks/power_check.py (slow-marked).

Full tables: docs/validation.md. Each check allows the binomial 99.9% band of its reps.
"""

import numpy as np
import pytest
from scipy import stats

from osustat import minimum_detectable_effect, signflip_tests


def _band(reps, rate):
    return stats.binom.ppf([0.0005, 0.9995], reps, rate) / reps


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "binary", "t2", "cauchy"])
@pytest.mark.parametrize("n", [5, 30, 200])
def test_signflip_type_one_error(kind, n):
    reps = 1000
    rng = np.random.default_rng([n, len(kind)])
    if kind == "normal":
        d = rng.normal(size=(n, reps))
    elif kind == "binary":
        d = np.where(rng.random((n, reps)) < 0.4, rng.choice([-1.0, 1.0], (n, reps)), 0.0)
    elif kind == "t2":
        d = rng.standard_t(2, (n, reps))
    else:
        d = rng.standard_cauchy((n, reps))
    p = np.array([r.pvalue for r in signflip_tests(d, n_resamples=499, rng=rng)])
    for alpha in (0.01, 0.05):
        rate = np.mean(p <= alpha)
        lo, hi = _band(reps, alpha)
        assert rate <= hi  # never anti-conservative
        if n == 5:  # 2**(1-5) = 1/16 > .05: the test can never reject
            assert rate == 0
        elif kind != "binary":  # continuous: also not conservative
            assert rate >= lo


@pytest.mark.slow
def test_binary_mde_grid_against_simulation():
    # Reported power at the MDE vs the rejection rate of the real test on 0/1 data.
    reps = 800
    for n, q in ((30, 0.5), (150, 0.2)):
        mde = minimum_detectable_effect(np.sqrt(q), n, p_nonzero=q)
        rng = np.random.default_rng(n)
        pi = 0.5 * (1 + mde / q)
        nz = rng.random((n, reps)) < q
        d = np.where(nz, np.where(rng.random((n, reps)) < pi, 1.0, -1.0), 0.0)
        rate = np.mean([r.pvalue <= 0.05 for r in signflip_tests(d, rng=0)])
        lo, hi = _band(reps, 0.8)
        assert lo <= rate <= hi
