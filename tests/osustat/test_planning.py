"""osustat.plan / plan_cells: the planned n against independent references (issue 24)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from osustat import paired, paired_signflip_test, plan, plan_cells, signflip_tests
from osustat.planning import SampleSizePlan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "records.csv"


def exact_binary_power(n: int, q: float, effect: float, alpha: float) -> float:
    """Two-sided exact sign test on {-1, 0, 1} differences, written out from scratch: m
    discordant pairs ~ Bin(n, q); reject when 2 P(K >= max(k, m - k)) <= alpha, K ~ Bin(m, .5)."""
    pi = 0.5 * (1 + effect / q)
    m = np.arange(n + 1)[:, None]
    k = np.arange(n + 1)[None, :]
    tail = stats.binom.sf(np.maximum(k, m - k) - 1, m, 0.5)
    reject = (k <= m) & (np.minimum(1.0, 2 * tail) <= alpha * (1 + 1e-9))
    p_k = np.where(k <= m, stats.binom.pmf(k, m, pi), 0.0)
    return float(stats.binom.pmf(m[:, 0], n, q) @ (p_k * reject).sum(axis=1))


def test_normal_plan_is_the_noncentral_t_sample_size():
    p = plan(0.5, sd=1.0)
    solved = TTestPower().solve_power(effect_size=0.5, nobs=None, alpha=0.05, power=0.8)
    assert p.n == math.ceil(float(solved))
    assert p.method == "normal" and p.source == "stated"
    assert p.power_below < 0.8 <= p.achieved_power
    assert p.start_n > 0 and p.zero_share == 0.0 and p.sd == 1.0


def test_small_n_uses_the_enumerated_test_which_needs_n_6():
    """Below n = 13 the power is the exact sign-flip test's on simulated normal data; at
    n = 5 the two-sided test can never reject at .05 (smallest p = 2/32)."""
    p = plan(1.5, sd=1.0)
    assert p.method == "simulation" and p.n >= 6 and p.achieved_power >= 0.8
    assert p.power_below < 0.8
    huge = plan(50.0, sd=1.0)
    assert huge.n == 6 and huge.power_below == 0.0


def test_family_plans_each_test_at_alpha_over_m():
    p4 = plan(0.3, sd=1.0, family_size=4)
    assert p4.test_alpha == pytest.approx(0.0125)
    assert p4.n == plan(0.3, sd=1.0, alpha=0.0125).n
    assert p4.n > plan(0.3, sd=1.0).n
    assert any("family of 4" in a for a in p4.assumptions)


def test_binary_plan_is_the_first_n_reaching_the_target_exactly():
    q, effect = 0.3, 0.15
    p = plan(effect, binary=True, zero_share=1 - q)
    assert p.method == "exact-binomial" and p.binary
    powers = {n: exact_binary_power(n, q, effect, 0.05) for n in range(6, p.n + 1)}
    assert powers[p.n] == pytest.approx(p.achieved_power, abs=1e-9)
    assert powers[p.n - 1] == pytest.approx(p.power_below, abs=1e-9)
    assert all(v < 0.8 for n, v in powers.items() if n < p.n)  # none smaller reaches it
    assert powers[p.n] >= 0.8


def test_binary_sd_and_zero_share_describe_the_same_design():
    q, effect = 0.4, 0.1
    by_zero = plan(effect, binary=True, zero_share=1 - q)
    by_sd = plan(effect, binary=True, sd=math.sqrt(q - effect**2))
    assert by_zero.n == by_sd.n
    assert by_sd.zero_share == pytest.approx(1 - q)


def test_pilot_of_hit_differences_equals_stated_binary():
    d = np.array([1.0] * 13 + [-1.0] * 3 + [0.0] * 40)  # the paper's T+E+ cell (docs)
    from_pilot = plan(0.179, differences=d)
    stated = plan(0.179, binary=True, zero_share=40 / 56)
    assert from_pilot.n == stated.n and from_pilot.method == "exact-binomial"
    assert from_pilot.pilot_n == 56 and from_pilot.source == "pilot"


def test_zero_inflated_pilot_plan_achieves_its_power_by_simulation():
    """The real test (signflip_tests) on fresh data of the planned size rejects at about the
    target rate: 600 data sets, 3 Monte Carlo SE around .8."""
    gen = np.random.default_rng(5)

    def draw(size, effect):
        return np.where(gen.random(size) < 0.5, 0.0, gen.normal(effect / 0.5, 1.0, size))

    pilot = draw((3000,), 0.4)
    p = plan(0.4, differences=pilot, n_simulations=1000)
    assert p.method == "empirical" and p.zero_share == pytest.approx(0.5, abs=0.03)
    data = draw((p.n, 600), 0.4)
    rate = np.mean([r.pvalue <= 0.05 for r in signflip_tests(data, n_resamples=2000, rng=1)])
    assert abs(rate - 0.8) <= 3 * math.sqrt(0.16 / 600), (p.n, rate)


def test_stated_zero_share_and_pilot_of_that_shape_agree():
    """Stated sd + zero share (normal stand-in) vs a large pilot of the same design: within
    Monte Carlo error of each other (a few units at n ~ 40)."""
    gen = np.random.default_rng(11)
    effect, z0 = 0.3, 0.4
    big = np.where(gen.random(20_000) < z0, 0.0, gen.normal(effect / (1 - z0), 0.8, 20_000))
    stated = plan(
        effect, sd=float(big.std()), zero_share=float(np.mean(big == 0)), n_simulations=1000
    )
    pilot = plan(effect, differences=big[:3000], n_simulations=1000)
    assert stated.method == pilot.method == "empirical"
    assert abs(stated.n - pilot.n) <= max(4, 0.12 * pilot.n), (stated.n, pilot.n)
    assert stated.sd == pytest.approx(float(big.std()))


def test_plan_is_deterministic_and_frozen():
    d = np.random.default_rng(2).normal(0.1, 1.0, 300)
    a = plan(0.25, differences=d, n_simulations=1000)
    assert a == plan(0.25, differences=d, n_simulations=1000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.n = 3  # type: ignore[misc]
    assert isinstance(a, SampleSizePlan) and str(a).startswith(f"n = {a.n} per cell")
    assert a.to_dict()["n"] == a.n


def test_one_sided_plan_needs_fewer_units():
    assert plan(0.3, sd=1.0, alternative="greater").n < plan(0.3, sd=1.0).n
    assert plan(-0.3, sd=1.0, alternative="less").n == plan(0.3, sd=1.0, alternative="greater").n


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"effect": 0.0, "sd": 1.0}, "`effect`"),
        ({"effect": "x", "sd": 1.0}, "`effect`"),
        ({"effect": 0.2}, "`sd` is required"),
        ({"effect": 0.2, "sd": -1.0}, "`sd`"),
        ({"effect": 0.2, "sd": 1.0, "zero_share": 1.5}, "`zero_share`"),
        ({"effect": 0.2, "sd": 1.0, "power": 1.0}, "`power`"),
        ({"effect": 0.2, "sd": 1.0, "family_size": 0}, "`family_size`"),
        ({"effect": 0.2, "sd": 1.0, "alternative": "less"}, "points away"),
        ({"effect": 0.2, "binary": True}, "exactly one"),
        ({"effect": 0.2, "binary": True, "sd": 0.5, "zero_share": 0.5}, "exactly one"),
        ({"effect": 0.6, "binary": True, "zero_share": 0.5}, "impossible"),
        ({"effect": 0.2, "sd": 0.1, "zero_share": 0.9}, "too small"),
        ({"effect": 0.01, "sd": 1.0, "n_max": 50}, "`n_max` = 50"),
        ({"effect": 0.2, "differences": [1.0, 0.0, -1.0], "sd": 1.0}, "not both"),
        ({"effect": 0.2, "differences": [0.0, 0.0, 0.0]}, "no nonzero differences .* `sd`"),
        ({"effect": 0.2, "differences": [0.5, -1.0, 0.0], "binary": True}, "several magnitudes"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, match):
    effect = kwargs.pop("effect")
    with pytest.raises((ValueError, TypeError), match=match):
        plan(effect, **kwargs)


def test_effect_beyond_what_the_pilot_allows_is_refused():
    d = np.array([1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # 20% differ
    with pytest.raises(ValueError, match="`effect`"):
        plan(0.5, differences=d)


def test_plan_cells_plans_each_cell_from_its_own_differences():
    df = pd.read_csv(EXAMPLE)
    res = plan_cells(df, "osu-mem", "flat-vector", metric="hit@2", budget=256, effect=0.2)
    p = paired(df, "osu-mem", "flat-vector", metric="hit@2", budget=256)
    labels = np.array([str(c) for c in p.cells])
    assert list(res.pilot_sizes) == [*sorted(set(labels.tolist())), "all"]
    for cell, sized in res.pilot_sizes.items():
        d = p.differences if cell == "all" else p.differences[labels == cell]
        assert sized == d.size
        # analyze's default family: Holm over the 4 cells, the aggregate outside it
        m = 1 if cell == "all" else 4
        assert res.plans[cell].n == plan(0.2, differences=d, family_size=m).n
    frame = res.to_frame()
    assert list(frame["cell"]) == list(res.pilot_sizes) and not res.refused
    assert res.to_dict()["plans"]["all"]["n"] == res.plans["all"].n


def test_plan_cells_moves_the_treatments_rate_for_count_ratios():
    # recall over a few items: each cell's plan is given the units' values (the tilted model
    # moves the treatment's rate beside the baseline's, not both rates apart)
    df = pd.read_csv(EXAMPLE)
    res = plan_cells(
        df, "osu-mem", "flat-vector", metric="recall", budget=256, effect=0.1, cells=["all"]
    )
    p = paired(df, "osu-mem", "flat-vector", metric="recall", budget=256)
    pairs = (p.treatment, p.baseline)
    assert res.plans["all"].n == plan(0.1, pairs=pairs).n
    assert "the treatment's values tilted" in " ".join(res.plans["all"].assumptions)
    assert res.plans["all"].method == "empirical-tilt"


def test_plan_cells_lists_refused_cells_with_the_reason():
    df = pd.read_csv(EXAMPLE)
    res = plan_cells(
        df, "osu-mem", "flat-vector", metric="hit@2", budget=256, effect=0.5, cells=["T+E+"]
    )
    assert list(res.pilot_sizes) == ["T+E+"] and not res.plans
    assert "`effect`" in res.refused["T+E+"]
    with pytest.raises(ValueError, match="`cells`"):
        plan_cells(
            df, "osu-mem", "flat-vector", metric="hit@2", budget=256, effect=0.2, cells=["T+E*"]
        )
    with pytest.raises(TypeError, match="`sd`"):
        plan_cells(df, "osu-mem", "flat-vector", metric="hit@2", budget=256, effect=0.2, sd=1.0)


# -- rules P and P2: a pilot that cannot pin n down gives a range (issue 35) ---------------


def _sd_ends(sd: float, df: float) -> tuple[float, float]:
    """The sd's 80% chi-square interval, from scipy (the reference)."""
    lo, hi = (math.sqrt(df / stats.chi2.ppf(q, df)) for q in (0.9, 0.1))
    return sd * lo, sd * hi


def test_pilot_of_six_gives_n_over_the_sds_interval():
    # six normal differences: the sd read off them spans a factor of 2.4 at 80%; a pilot of
    # six planned one n that achieved power below .6 in 37% of pilots (docs/validation.md)
    d = np.random.default_rng(3).normal(0.0, 1.0, 6)
    p = plan(0.5, differences=d)
    lo, hi = _sd_ends(float(np.std(d, ddof=1)), 5)
    assert p.n_range == (plan(0.5, sd=lo).n, plan(0.5, sd=hi).n)
    assert p.n == p.n_range[1] and p.source == "pilot" and p.pilot_n == 6
    assert p.achieved_power == plan(0.5, sd=hi).achieved_power >= 0.8
    assert p.summary().startswith(f"n not pinned down by a pilot of 6 differences: {p.n_text()}")
    assert p.to_dict()["n_range"] == list(p.n_range)


def test_pilot_of_twelve_normal_differences_gives_one_n():
    d = stats.norm.ppf((np.arange(12) + 0.5) / 12)
    assert plan(0.8, differences=d, n_simulations=1000).n_range is None


def test_ties_a_small_pilot_cannot_rule_out_raise_the_conservative_end():
    # three of six continuous differences tie: at the share's 80% lower end (.20) six
    # agreeing signs need n with P(Bin(n, .20) >= 6) >= .8, more than the normal model's n
    d = np.array([0.3137, 0.0, -1.2291, 0.0, 0.5471, 0.0])
    p = plan(1.5, differences=d)
    q_lo, q_hi = stats.beta.ppf(0.1, 3, 4), stats.beta.isf(0.1, 4, 3)
    ns = np.arange(6, 2000)
    floor = int(ns[np.argmax(stats.binom.sf(5, ns, q_lo) >= 0.8)])
    low_floor = int(ns[np.argmax(stats.binom.sf(5, ns, q_hi) >= 0.8)])
    assert p.n_range[1] == floor > plan(1.5, sd=_sd_ends(float(np.std(d, ddof=1)), 5)[1]).n
    assert p.n_range[0] >= low_floor  # continuous differences: the model holds ties
    assert f"ties held at the lower end of its 80% interval ({q_lo:.2f})" in p.range_basis


def test_count_ratio_pilot_keeps_the_optimistic_end_of_the_normal_model():
    # count ratios: the tilted model moves ties, so only the conservative end holds them
    d = np.array([1, 1, 1, 1, 2, 1, 0, 0, 0, 0, 0]) / 3  # 6 of 11 differ
    p = plan(0.35, differences=d)
    assert p.sd == pytest.approx(_model_sd(d, 0.35), rel=1e-12)
    optimistic = plan(0.35, sd=_sd_ends(_model_sd(d, 0.35), 10)[0]).n
    ns = np.arange(6, 2000)
    held = int(ns[np.argmax(stats.binom.sf(5, ns, stats.beta.isf(0.1, 7, 5)) >= 0.8)])
    assert p.n_range[0] == optimistic < held  # ties held there would have raised it


def test_small_binary_pilot_gives_n_over_the_share_of_pairs_that_differ():
    d = np.array([1.0, 0.0, 1.0, 1.0, -1.0, 0.0, 1.0, 1.0, 0.0, 1.0])  # 7 of 10 differ
    # at a fixed mean, n grows with the share of pairs that differ (each discordant pair is
    # less one-sided), and below |effect| the effect cannot occur: the ends are the n at the
    # interval's ends and the pilot's own share, the lower end raised to |effect|
    q_lo, q_hi = stats.beta.ppf(0.1, 7, 4), stats.beta.isf(0.1, 8, 3)
    for effect in (0.3, 0.5):
        p = plan(effect, differences=d)
        stated = [
            plan(effect, binary=True, zero_share=1 - max(q, effect)).n for q in (q_lo, 0.7, q_hi)
        ]
        assert p.n_range == (min(stated), max(stated)) and p.method == "exact-binomial"
        assert p.n == max(stated) == plan(effect, binary=True, zero_share=1 - q_hi).n
    with pytest.raises(ValueError, match="even at the upper end of P"):
        plan(0.9, differences=d)


def test_one_magnitude_is_the_tests_own_rule():
    # magnitudes 1 and 1 + 1e-13 are two to the sign-flip test (64 ulps apart at most make one:
    # its exact-binomial null); plan called them one (0/1-type assumptions and sd) while its
    # engine, with the test's rule, ran the tilted model of several magnitudes
    d = np.array([1.0, 1 + 1e-13, -1.0, 0, 1.0, 1.0, 0, 1.0, 1.0, 1 + 1e-13, 1.0, 1.0, 0, 1.0])
    assert paired_signflip_test(d, np.zeros_like(d)).method != "exact-binomial"
    p = plan(0.3, differences=d, n_simulations=200)
    assert not p.binary and p.method != "exact-binomial"
    assert "0/1-type" not in p.assumptions[0]
    # within the test's rule (a few ulps: 2/3 - 1/3 against 1/3) they are one magnitude
    ulps = np.array(
        [1 / 3, 2 / 3 - 1 / 3, -1 / 3, 0, 1 / 3, 1 / 3, 0, 1 / 3, 1 / 3, 1 / 3, 0, 1 / 3]
    )
    assert paired_signflip_test(ulps, np.zeros_like(ulps)).method == "exact-binomial"
    assert plan(0.1, differences=ulps).binary
    # subnormal magnitudes compare as the test compares them (scaled by a power of two)
    from osustat._signflip_null import column_facts, one_magnitude

    tiny = np.array([2.5e-310, np.nextafter(2.5e-310, 1)])
    assert one_magnitude(tiny) == bool(column_facts([tiny]).equal_magnitude[0]) is False


def test_an_interval_that_gives_one_n_prints_one_n():
    # one of 8 pairs differs: P(d != 0)'s 80% interval is cut at |effect| / c = 0.4 (below
    # it the effect cannot occur) and ends at 0.406, whose n is the cut's; "19–19" read as a
    # range it is not
    d = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])
    q_hi = stats.beta.isf(0.1, 2, 7)
    n = plan(0.4, binary=True, zero_share=0.6).n
    assert 0.4 < q_hi < 0.41 and plan(0.4, binary=True, zero_share=1 - q_hi).n == n  # premise
    p = plan(0.4, differences=d)
    assert p.n_range == (n, n) and p.n == n
    assert p.n_text() == str(n)
    assert f"{n}–{n}" not in p.summary() and "not pinned down" not in p.summary()
    assert p.summary().startswith(f"n = {n} per cell at both ends of the range a pilot of 8")


def test_pilot_not_normal_shaped_gives_a_range_with_the_delta_methods_df():
    # rule P2 (rule D for plans): 40 lognormal differences fail Shapiro-Wilk; the pilot's n
    # is scaled over the sd's 80% interval with df 2k / (g2 + 2)
    d = np.exp(np.random.default_rng(4).normal(size=40))
    assert stats.shapiro(d).pvalue < 0.05
    p = plan(0.8, differences=d, n_simulations=1000)
    nu = min(39.0, 80 / (stats.kurtosis(d) + 2))
    ratio = stats.chi2.ppf(0.9, nu) / stats.chi2.ppf(0.1, nu)  # (hi / lo) ** 2
    lo, hi = p.n_range
    assert p.n == hi and hi / lo == pytest.approx(ratio, rel=0.15)
    assert "not normal-shaped, Shapiro-Wilk p = " in p.range_basis


def test_pilot_shown_light_tailed_plans_one_n():
    # rule D″ for plans (P2 reads rule D's check): 40 uniform differences fail Shapiro-Wilk
    # and are significantly platykurtic; their sd is as reliable as a normal's: one n
    d = np.random.default_rng(0).uniform(-1.0, 1.0, 40) + 0.2
    assert stats.shapiro(d).pvalue < 0.05
    assert stats.kurtosistest(d, alternative="less").pvalue < 0.05
    p = plan(0.4, differences=d, n_simulations=400)
    assert p.n_range is None and p.method == "empirical"


def test_pilot_of_few_nonzero_differences_plans_a_range():
    # rule N for plans: a pilot of 20 with 8 nonzero differences of several magnitudes reads
    # its spread off 8 values (t6/t10 pilots of 20 with 53-63% ties missed the 20% bound on
    # design seed 41): rule P's range, its conservative end returned
    gen = np.random.default_rng(4)
    d = np.r_[gen.normal(0.5, 1.0, 8), np.zeros(12)]
    p = plan(0.4, differences=d, n_simulations=400)
    assert p.n_range is not None and p.n == p.n_range[1] > p.n_range[0]
    assert "only 8 of the 20 differences are nonzero" in p.range_basis
    assert "n not pinned down by a pilot of 20 differences" in p.summary()
    # 0/1-type differences are outside the rule: one n from the exact binomial
    hits = np.r_[np.ones(7), -np.ones(1), np.zeros(12)]
    one = plan(0.3, differences=hits)
    assert one.n_range is None and one.method == "exact-binomial"


def test_a_range_planned_by_the_normal_model_states_that_models_assumptions():
    # a review of rule N: 8 count ratios among 20 are planned over a range by the normal
    # model, yet its assumptions described the tilted model ("count ratios, tilted")
    cr = np.r_[[1, 2, -1, 1, 1, -2, 1, 2], np.zeros(12)] / 3
    p = plan(0.15, differences=cr)
    said = " ".join(p.assumptions)
    assert p.n_range is not None and "tilted" not in said
    assert "normal with an sd anywhere in the 80% interval" in said
    assert "12 of 20 (P(d ≠ 0) 0.25–0.57)" in said  # Clopper-Pearson, 80%, 8 of 20
    lo, hi = stats.beta.ppf(0.1, 8, 13), stats.beta.isf(0.1, 9, 12)
    assert (f"{lo:.2f}", f"{hi:.2f}") == ("0.25", "0.57")
    # no ties, no tie sentence
    assert len(plan(0.5, differences=[2.04, -2.56, 0.42, -0.57, -0.45, -0.22]).assumptions) == 2


def test_rule_n_plans_over_the_spread_of_the_nonzero_values():
    # rule N′ for plans: the sd's interval on m - 1 = 10 degrees of freedom (11 nonzero of
    # 200); n grows with the sd's square, so the ends' ratio is about chi-square's
    live = np.random.default_rng(1).normal(0.5, 1.0, 11)
    lo, hi = plan(0.05, differences=np.r_[live, np.zeros(189)]).n_range
    assert hi / lo == pytest.approx(stats.chi2.isf(0.1, 10) / stats.chi2.ppf(0.1, 10), rel=0.05)


def test_count_ratios_of_one_magnitude_are_not_zero_one_given_the_units_values():
    # rule K: recall over three items whose eight pilot differences all happen to be +-1/3;
    # the units' values (a lattice of four values) say these are count ratios, not Hit@k
    t = np.array([2, 1, 3, 1, 2, 0, 3, 2, 1, 2, 3, 1]) / 3
    b = np.array([1, 1, 2, 0, 2, 0, 3, 1, 1, 1, 2, 1]) / 3
    d = t - b
    assert np.allclose(np.abs(d[d != 0]), 1 / 3)
    assert plan(0.1, differences=d).method == "exact-binomial"  # no values: 0/1-type
    given = plan(0.1, pairs=(t, b))
    assert given.method == "empirical-tilt" and not given.binary
    hits = (np.array([1.0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0]), np.zeros(12))
    assert plan(0.3, pairs=hits).method == "exact-binomial"  # two values: Hit@k


# -- a review of rules P, P2 and K (a helper's findings, each pinned) --------------------


def _model_sd(d, effect):
    """The empirical model's sd at `effect`, by hand: the nonzero differences shifted so the
    mean is `effect` (ties kept), unbiased variance (a reviewer: the tests read it back from
    the plan under test)."""
    d = np.asarray(d, float)
    nz = d != 0
    x = d.copy()
    x[nz] += (effect * d.size - d[nz].sum()) / nz.sum()
    return float(np.std(x, ddof=1))


TIES = np.array([0.7312, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9137, 0.6551])  # 3 of 8 differ


def _floor(q: float, fewest: int) -> int:
    """The smallest n with P(Bin(n, q) >= fewest) >= .8 (scipy)."""
    ns = np.arange(fewest, 5000)
    return int(ns[np.argmax(stats.binom.sf(fewest - 1, ns, q) >= 0.8)])


@pytest.mark.parametrize(
    ("family_size", "alternative", "fewest"),
    [(1, "two-sided", 6), (1, "greater", 5), (4, "two-sided", 8), (4, "greater", 7)],
)
def test_tie_floors_read_the_tests_level_and_side(family_size, alternative, fewest):
    # the fewest agreeing signs at alpha / m: 2 / 2**k two-sided, 1 / 2**k one-sided
    q_lo, q_hi = stats.beta.ppf(0.1, 3, 6), stats.beta.isf(0.1, 4, 5)
    kw = {"family_size": family_size, "alternative": alternative}
    p = plan(0.8, differences=TIES, **kw)
    normal_lo = plan(0.8, sd=_sd_ends(_model_sd(TIES, 0.8), 7)[0], **kw).n
    assert p.n_range == (max(normal_lo, _floor(q_hi, fewest)), _floor(q_lo, fewest))


def test_at_a_tie_floor_the_power_is_capped_by_the_ties():
    p = plan(0.5, differences=TIES)
    q_lo = stats.beta.ppf(0.1, 3, 6)
    assert p.n == _floor(q_lo, 6) == 53
    # the power at n and n - 1: what six agreeing signs allow, below the normal model's
    assert p.achieved_power == pytest.approx(stats.binom.sf(5, 53, q_lo))
    assert p.power_below == pytest.approx(stats.binom.sf(5, 52, q_lo))
    assert p.power_below < 0.8 <= p.achieved_power
    sd_lo = _sd_ends(_model_sd(TIES, 0.5), 7)[0]
    assert p.n_range[0] == max(plan(0.5, sd=sd_lo).n, _floor(stats.beta.isf(0.1, 4, 5), 6))


def test_a_pilot_without_ties_gets_no_tie_floor():
    d = np.array([1.12, 0.83, 1.41, 0.95, 1.27, 0.66, 1.08, 1.19])  # 8 of 8 differ
    p = plan(1.0, differences=d)
    lo, hi = _sd_ends(float(np.std(d, ddof=1)), 7)
    assert p.n_range == (plan(1.0, sd=lo).n, plan(1.0, sd=hi).n) and "ties" not in p.range_basis


def test_an_end_that_cannot_be_planned_is_named():
    with pytest.raises(ValueError, match=r"at its conservative end \(sd 1\.956\): no n up to"):
        plan(0.9, differences=TIES, n_max=30)


def test_shape_range_beyond_n_max_is_refused_as_such():
    d = np.round(np.random.default_rng(5).normal(0, 1, 14), 3)
    d[0] = 15.0
    with pytest.raises(ValueError, match=r"not normal-shaped n is .* beyond `n_max` = 1,000"):
        plan(0.5, differences=d, n_max=1000, n_simulations=2000)


def test_binary_given_with_many_valued_pairs_is_obeyed_by_plan_and_power():
    from osustat import power

    t = np.array([2, 1, 3, 1, 2, 0, 3, 2, 1, 2, 3, 1, 2, 3, 1, 0, 2, 1, 3, 2]) / 3
    b = t - np.array([1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0, -1, 0, 1, 1]) / 3
    p = plan(0.1, pairs=(t, b), binary=True)
    assert p.method == "exact-binomial" == power(0.1, None, p.n, pairs=(t, b), binary=True).method


def test_a_count_ratio_pilot_of_one_difference_value_is_planned():
    # rule K makes it a count ratio with sd 0: planned as one magnitude, not refused with the
    # stated-sd message
    t = np.array([0.5, 0.75, 1.0, 0.5, 0.75])
    p = plan(0.1, pairs=(t, t - 0.25))
    assert p.n_range is not None and p.method == "exact-binomial"


def test_continuous_ties_raise_the_optimistic_end_too():
    # six of eight differ: at the share's 80% upper end (.93) n = 7 is needed for six agreeing
    # signs, more than the normal model's 6 at the sd's lower end ('empirical' holds ties)
    d = np.array([1.12, 0.83, 1.41, 0.95, 1.27, 0.66, 0.0, 0.0])
    p = plan(1.0, differences=d)
    assert p.sd == pytest.approx(_model_sd(d, 1.0), rel=1e-12)
    normal_lo = plan(1.0, sd=_sd_ends(_model_sd(d, 1.0), 7)[0]).n
    assert normal_lo < p.n_range[0] == _floor(stats.beta.isf(0.1, 7, 2), 6)


@pytest.mark.parametrize("at", [0.0, 0.12], ids=["null pilots", "pilots at the effect"])
def test_plans_from_count_ratio_pilots_achieve_their_power_on_the_design(at):
    """Issue 35 item 4 as a procedure, in small: recall over 4 items at baseline rate .25,
    pilots of 200 units drawn at effect 0 or at the effect .12 with their units' values; each
    plan's n is tried on 1,000 data sets drawn from the design at that n (the sign-flip test
    `analyze` runs, two-sided .05). The median of six pilots achieves .80 +- .05, the issue's
    goal (single pilots vary with their pilot: .77-.85 here). A guard of the whole path (pilot,
    model, search, test), not of one engine choice: the same pilots' differences alone, tilted,
    pass too (medians .78 / .80). The full-size check is benchmarks/plan_check.py."""
    effect, p0, m = 0.12, 0.25, 4
    rates = []
    for i in range(6):
        g = np.random.default_rng([36, i])
        t, b = g.binomial(m, p0 + at, 200) / m, g.binomial(m, p0, 200) / m
        n = plan(effect, pairs=(t, b)).n
        g = np.random.default_rng([100 + i, n])
        fresh = g.binomial(m, p0 + effect, (n, 1000)) / m - g.binomial(m, p0, (n, 1000)) / m
        tests = signflip_tests(fresh, n_resamples=999, rng=100 + i)
        rates.append(np.mean([r.pvalue <= 0.05 for r in tests]))
    assert abs(np.median(rates) - 0.80) <= 0.05, rates


# -- red team: NaN powers and out-of-range effect / sd ratios --------------------------------


def test_plan_at_a_small_level_reaches_its_power_by_the_noncentral_t():
    # the noncentral t was NaN at n ~ 2400, alpha = 5e-5: the plan printed "power nan"
    p = plan(0.1, sd=1.0, family_size=1000)
    assert p.method == "normal" and math.isfinite(p.achieved_power)
    df, c = p.n - 1, stats.t.isf(5e-5 / 2, p.n - 1)
    nc = 0.1 * math.sqrt(p.n)
    ref = stats.nct.sf(c, df, nc) + stats.nct.sf(c, df, -nc)
    assert p.achieved_power == pytest.approx(ref, rel=1e-9)
    assert p.power_below < 0.8 <= p.achieved_power


def test_plan_beyond_n_max_is_refused_not_accepted_as_nan():
    # alpha = 1e-300: NaN power was taken as meeting the target, n = n_max, power null
    with pytest.raises(ValueError, match="no n up to `n_max`"):
        plan(0.1, sd=1.0, alpha=1e-300)


def test_plan_search_refuses_a_nan_power(monkeypatch):
    import osustat.planning as planning
    from osustat.power import PowerValue

    def nan_power(*args, **kwargs):
        return PowerValue(float("nan"), method="normal", n=10, alpha=0.05, alternative="two-sided")

    monkeypatch.setattr(planning, "test_power", nan_power)
    with pytest.raises(ValueError, match="power is NaN at n = "):
        plan(0.3, sd=1.0)


@pytest.mark.parametrize(
    ("effect", "sd"), [(1e-300, 1.0), (1e-160, 1.0), (0.1, 1e200), (0.1, 1e308)]
)
def test_plan_for_a_tiny_effect_to_sd_ratio_says_so(effect, sd):
    # used to end in "OverflowError: cannot convert float infinity to integer"
    with pytest.raises(ValueError, match=r"`effect` / `sd` = .* needs about"):
        plan(effect, sd=sd)


def test_plan_for_a_huge_effect_warns_nothing():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = plan(1e308, sd=1.0)
    assert p.n == 6 and p.achieved_power == 1.0
