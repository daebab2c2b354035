"""The MDE that `osustat.analyze` reports beside each verdict, checked by simulation.

Each row's MDE claims: "the test this row runs, at the level it is tested at (alpha/m inside a
corrected family), rejects with probability .80 when the true mean difference is the MDE".
These tests run `analyze` on built records, read each row's MDE and level, simulate data
under the model the method names at exactly that effect, run the real test
(`osustat.signflip_tests`) and compare the rejection rate with .80 within Monte Carlo error.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest

import osustat
from osustat import signflip_tests
from osustat.reports.cellwise import _sig
from osustat.wording import UNDERPOWERED

CELL_NAMES = ("T+E+", "T+E-", "T-E+", "T-E-")


def _records(cells):
    """Long records for methods 'a' and 'b'; `cells` maps a cell to its differences."""
    rows = []
    q = 0
    for cell, diffs in cells.items():
        for d in diffs:
            base = 0.0 if d >= 0 else -float(d)
            for method, value in (("a", base + float(d)), ("b", base)):
                rows.append(
                    {
                        "episode_id": f"e{q % 7}",
                        "query_id": f"q{q}",
                        "method": method,
                        "budget": 1,
                        "metric": "m",
                        "value": value,
                        "cell": cell,
                    }
                )
            q += 1
    return pd.DataFrame(rows)


def _binary(n, q, rng):
    """n differences in {-1, 0, 1} with exactly round(q n) nonzero, half of them positive."""
    k = round(q * n)
    d = np.zeros(n)
    d[:k] = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
    return rng.permutation(d)


def _analyze(cells, **kw):
    return osustat.analyze(
        _records(cells),
        treatment="a",
        baseline="b",
        n_resamples=999,
        bootstrap_resamples=50,
        **kw,
    )


def _rate(d, alpha):
    return np.mean([r.pvalue <= alpha for r in signflip_tests(d, rng=0)])


# a grid of n and P(d != 0); four cells form one Holm family of m = 4 (level .05 / 4)
GRID = [
    {"T+E+": (20, 0.9), "T+E-": (40, 0.3), "T-E+": (96, 0.6), "T-E-": (60, 0.15)},
    {"T+E+": (30, 0.5), "T+E-": (150, 0.2), "T-E+": (48, 0.75), "T-E-": (24, 0.6)},
]


@pytest.mark.slow
@pytest.mark.parametrize("design", GRID, ids=["grid-a", "grid-b"])
def test_binary_mde_beside_each_verdict_has_the_stated_power(design):
    rng = np.random.default_rng(len(design["T+E+"]))
    res = _analyze({c: _binary(n, q, rng) for c, (n, q) in design.items()})
    rows = {r.label: r for r in res.comparisons[0].rows}
    reps = 1500
    for cell, (n, q) in design.items():
        row = rows[cell]
        assert row.mde_alpha == pytest.approx(0.05 / 4)
        # 'share-range': underpowered at the observed share, not at its 80% upper end
        assert row.mde_method in ("exact-binomial", "share-range")
        q_obs = round(q * n) / n
        assert row.mde.p_nonzero == pytest.approx(q_obs)
        if not math.isfinite(row.mde):
            # no effect reaches .80: even all-positive differences fall short
            d = np.where(np.random.default_rng(n).random((n, reps)) < q_obs, 1.0, 0.0)
            assert _rate(d, row.mde_alpha) < 0.8
            continue
        pi = 0.5 * (1 + row.mde / q_obs)  # P(d > 0 | d != 0) at the MDE
        gen = np.random.default_rng(n)
        nonzero = gen.random((n, reps)) < q_obs
        d = np.where(nonzero, np.where(gen.random((n, reps)) < pi, 1.0, -1.0), 0.0)
        se = math.sqrt(0.8 * 0.2 / reps)
        assert abs(_rate(d, row.mde_alpha) - 0.8) < 3.5 * se, (cell, n, q, float(row.mde))


@pytest.mark.slow
def test_small_n_continuous_mde_is_empirical_and_has_the_stated_power():
    rng = np.random.default_rng(5)
    cells = {"T+E+": rng.normal(0.3, 1.0, 14), "T-E-": rng.normal(0.0, 2.0, 12)}
    res = _analyze(cells, correction="none", alpha=0.1)
    prov = res.provenance.to_dict()
    assert prov["seeds"]["MDE simulation (fixed)"] == 0
    assert prov["resamples"]["MDE simulation (data sets)"] == 2000
    reps = 1500
    for row in res.comparisons[0].rows[:2]:
        n = row.effect.n
        assert row.mde_method == "empirical" and row.mde_alpha == 0.1
        # the model the empirical MDE names: the observed differences (no ties here),
        # centred, resampled and shifted to the MDE
        obs = cells[row.label] - cells[row.label].mean()
        d = np.random.default_rng(n).choice(obs, size=(n, reps)) + float(row.mde)
        # MC error of this check plus that of the MDE's own 2,000 simulated data sets
        se = math.sqrt(0.16 / reps + 0.16 / 2000)
        assert abs(_rate(d, 0.1) - 0.8) < 3.5 * se, (row.label, float(row.mde))


def test_too_few_differences_print_a_range_not_a_number():
    # issue 35 item 3: from 9 differences the printed MDE was a precise-looking number whose
    # true power was far below .8; now a range, in the report, the verdict and the JSON
    rng = np.random.default_rng(5)
    cells = {"T+E+": rng.normal(0.3, 1.0, 9), "T-E-": rng.normal(0.0, 2.0, 12)}
    res = _analyze(cells, correction="none", alpha=0.1)
    row = res.comparisons[0].rows[0]
    assert row.label == "T+E+" and row.mde_method == "sd-range"
    lo, hi = row.mde.mde_range
    said = f"MDE not estimable from n = 9 differences ({lo:.3f}–{hi:.3f}"
    assert said in res.to_markdown()
    js = res.to_dict()["comparisons"][0]["rows"][0]
    assert js["mde"] is None and js["mde_range"] == pytest.approx([lo, hi])
    assert js["mde_note"].startswith("MDE not estimable from n = 9 differences")
    if row.pvalue > 0.1:
        assert "MDE not estimable" in row.verdict


def test_n_too_small_for_alpha_over_m_is_underpowered_at_any_effect():
    # n = 7 two-sided: the smallest sign-flip p is 2/128 = .0156 > .05/4, so no effect is
    # detectable inside the Holm family; at alpha = .05 (the aggregate, n = 28) it is. The
    # 28 differences are the normal law's quantiles (shifted by .5), dealt to the cells: the
    # aggregate is normal-shaped, so it prints a number, not a range (issue 35 item 3)
    from scipy.stats import norm

    q = 0.5 + norm.ppf((np.arange(28) + 0.5) / 28)
    cells = {c: q[i::4] for i, c in enumerate(CELL_NAMES)}
    res = _analyze(cells)
    rows = res.comparisons[0].rows
    for row in rows[:4]:
        assert math.isinf(row.mde)
        assert row.verdict.startswith("not significant")
        assert row.verdict.endswith(f"; {UNDERPOWERED} at α/m")
    assert math.isfinite(rows[4].mde) and rows[4].mde_alpha == 0.05
    text = res.to_markdown()
    assert "∞" not in text and "inf" not in text
    assert f"| {UNDERPOWERED} |" in text
    payload = json.loads(json.dumps(res.to_dict()))
    cell_rows = payload["comparisons"][0]["rows"]
    assert all(r["mde"] is None and r["mde_note"] == UNDERPOWERED for r in cell_rows[:4])
    assert cell_rows[4]["mde_method"] == "empirical" and cell_rows[4]["mde_note"] is None


def test_mde_follows_the_analysis_alpha():
    rng = np.random.default_rng(2)
    cells = {c: _binary(40, 0.5, rng) for c in ("T+E+", "T-E-")}
    loose = _analyze(cells, alpha=0.2, correction="none").comparisons[0].rows[0]
    strict = _analyze(cells, alpha=0.01, correction="none").comparisons[0].rows[0]
    assert (loose.mde_alpha, strict.mde_alpha) == (0.2, 0.01)
    assert loose.mde < strict.mde
    expected = osustat.minimum_detectable_effect(None, 40, alpha=0.01, differences=cells["T+E+"])
    assert strict.mde == expected and strict.mde.method == "exact-binomial"


@pytest.mark.parametrize(
    "p", [0.0, 0.0009, 0.001, 0.0011, 0.01, 0.03, 0.05, 0.0500001, 0.07, 0.1, 0.2, 1.0]
)
def test_significance_mark_agrees_with_the_verdict_at_every_cut(p):
    # Issue 9: stars used p < .05 while the verdict used p <= .05, so p = .05 printed "."
    # beside "helps". The report's marks now cut at <= like every verdict.
    v = osustat.wording.describe_verdict(
        0.2, p, p, alpha=0.05, correction="none", family_size=1, mde=0.1, mde_alpha=0.05
    )
    assert v.startswith("helps") == (_sig(p) in ("*", "**", "***"))
    for cut, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p == cut:
            assert _sig(p) == mark


def test_each_printed_mde_is_searched_once_at_its_level(monkeypatch):
    # issue 37: cell_conditional searched every row's MDE at alpha and analyze searched the
    # cells' again at alpha/m (4 cells + aggregate: 9 searches for 5 printed MDEs)
    import osustat.cellwise

    levels = []
    real = osustat.cellwise.minimum_detectable_effect

    def counted(*args, **kw):
        levels.append(kw["alpha"])
        return real(*args, **kw)

    monkeypatch.setattr(osustat.cellwise, "minimum_detectable_effect", counted)
    rng = np.random.default_rng(4)
    rows = _analyze({c: _binary(24, 0.5, rng) for c in CELL_NAMES}).comparisons[0].rows
    assert sorted(levels) == sorted(r.mde_alpha for r in rows) == [0.0125] * 4 + [0.05]


def test_a_range_without_an_upper_end_is_said_as_a_range_everywhere():
    # rule Z gives ranges whose value (the upper end) is infinite: the JSON note and the
    # verdict said "underpowered at any effect" where the report printed the range
    from osustat.analysis_result import _mde_note
    from osustat.cellwise import verdict
    from osustat.power import minimum_detectable_effect

    d = np.array([0.3137, 0.0, -1.2291, 0.0, 0.5471, 0.0])
    half = minimum_detectable_effect(None, 20, differences=d)  # (x, inf)
    none = minimum_detectable_effect(None, 6, differences=d)  # (inf, inf)
    assert math.isinf(half) and math.isfinite(half.mde_range[0])
    assert _mde_note(half).startswith("MDE not estimable from n = 6 differences (")
    assert _mde_note(none).startswith("underpowered at any effect (from n = 6 differences: ")
    assert "MDE not estimable from n = 6" in verdict(0.5, 0.1, half)
