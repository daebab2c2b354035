"""Issue 35 item 13: a Monte Carlo p near alpha is resampled sequentially until its side of
alpha is settled, in the audit as for one test; at the cap it is "undecided"."""

import math

import numpy as np
import pytest

from osustat.audit.precision import (
    mc_standard_error,
    next_resamples,
    sequential_pvalue,
)
from osustat.audit.verdicts import UNDECIDED
from osustat.reports._audit_words import flag_message, note_text, reason
from osustat.signflip import signflip_tests
from osustat.wording import straddles
from tests.osustat.test_audit import claim, from_differences, run

# 40 differences whose two-sided sign-flip p is .054 (2^20 resamples): within 2.576 Monte
# Carlo standard errors of .05 at 999 resamples (SE .0071), settled from about 64,000 (.0009)
D = np.round(np.random.default_rng(7).normal(0, 0.3, 40), 3)
D = np.round(D - D.mean(), 3) + 0.077


def reference():
    return signflip_tests([D], n_resamples=2**20, rng=1)[0]


def test_the_differences_are_near_alpha():
    assert 0.052 < reference().pvalue < 0.056


class TestSequentialPvalue:
    def test_an_exact_p_is_settled_at_once(self):
        out = sequential_pvalue(
            lambda b, g: (0.0500, 0.0), alpha=0.05, n_resamples=999, max_resamples=2**20, rng=0
        )
        assert out.settled and out.looks == 1 and out.n_resamples == 999

    def test_resamples_until_settled_then_stops(self):
        # a p of .056 with its true Monte Carlo error: settled once 2.576 SE < .006
        calls = []

        def test(b, gen):
            calls.append(b)
            return 0.056, mc_standard_error(0.056, b)

        out = sequential_pvalue(test, alpha=0.05, n_resamples=999, max_resamples=2**20, rng=0)
        assert calls == [999, 3996, 15984] and out.settled and out.looks == 3
        assert 2.576 * out.se < 0.006 <= 2.576 * mc_standard_error(0.056, 3996)

    def test_undecided_at_the_cap(self):
        out = sequential_pvalue(
            lambda b, g: (0.0501, mc_standard_error(0.0501, b)),
            alpha=0.05, n_resamples=999, max_resamples=20_000, rng=0,
        )  # fmt: skip
        assert not out.settled and out.n_resamples == 15984

    def test_same_rng_same_answer_on_a_real_test(self):
        def test(b, gen):
            r = signflip_tests([D], n_resamples=b, rng=gen)[0]
            return r.pvalue, r.pvalue_se

        kw = dict(alpha=0.05, n_resamples=999, max_resamples=2**18)
        a, b = sequential_pvalue(test, **kw, rng=5), sequential_pvalue(test, **kw, rng=5)
        assert a == b and a.settled and a.pvalue > 0.05

    def test_rules(self):
        assert straddles(0.055, 0.0022, 0.05) and not straddles(0.06, 0.0022, 0.05)
        assert not straddles(0.0501, 0.0, 0.05)  # exact
        assert next_resamples(999, 4000) == 3996 and next_resamples(999, 3995) is None
        assert next_resamples(2**24, 2**30) is None  # the one cap, 2^25
        assert math.isclose(mc_standard_error(0.05, 10_000), 0.00218, abs_tol=1e-5)


class TestAuditSettlesNearAlpha:
    def test_undecided_without_room_to_resample(self):
        (c,) = run(claim("near"), data=from_differences(D), max_resamples=999).checks
        codes = [(f.code, f.standard) for f in c.flags]
        assert ("mc-undecided", "strict") in codes and ("mc-undecided", "as tested") in codes
        i = codes.index(("mc-undecided", "strict"))
        text = flag_message(c, c.flags[i])
        assert text.startswith("undecided at this Monte Carlo precision (strict): p_adj = 0.0")
        assert not [n for n in c.notes if n.code == "mc-resampled"]

    def test_resampled_until_settled(self):
        (c,) = run(claim("near"), data=from_differences(D), max_resamples=2**16).checks
        assert not [f for f in c.flags if f.code == "mc-undecided"]
        (note,) = [n for n in c.notes if n.code == "mc-resampled"]
        assert int(note.detail) == c.test.n_resamples > 999
        assert f"to {int(note.detail):,} resamples" in note_text(c, note)
        ref = reference()
        assert abs(c.strict.pvalue - ref.pvalue) <= 2.576 * math.hypot(
            c.test.pvalue_se, ref.pvalue_se
        )
        assert abs(c.strict.pvalue - 0.05) > 2.576 * c.test.pvalue_se  # settled
        assert c.strict.verdict == "direction only"  # p > .05: the settled side
        (again,) = run(claim("near"), data=from_differences(D), max_resamples=2**16).checks
        assert again.strict.pvalue == c.strict.pvalue

    def test_a_clear_p_is_not_resampled(self):
        (c,) = run(claim("far"), data=from_differences(D + 0.2), max_resamples=2**16).checks
        assert c.test.n_resamples == 999
        assert not [n for n in c.notes if n.code == "mc-resampled"]

    def test_cap_below_the_resamples_is_refused(self):
        with pytest.raises(ValueError, match="max_resamples"):
            run(claim("near"), data=from_differences(D), max_resamples=10)


class TestUndecidedVerdict:
    """Red team: the verdict near α took the noisy side (seed 0 reproduced, seed 2
    underpowered) while the flag said the side was noise; it is now its own verdict."""

    def checks(self, seeds=range(6)):
        return [
            run(claim("near"), data=from_differences(D), max_resamples=999, rng=s).checks[0]
            for s in seeds
        ]

    def test_the_verdict_is_undecided_under_each_standard_whatever_the_seed(self):
        checks = self.checks()
        said = {(c.as_tested.verdict, c.strict.verdict, c.strict_bh.verdict) for c in checks}
        assert said == {(UNDECIDED, UNDECIDED, UNDECIDED)}
        for c in checks:
            assert c.verdict == UNDECIDED and c.strict.code == "mc-undecided"
            # the two verdicts the p's side of α would give, p <= α first
            assert c.strict.sides == ("reproduced", "direction only")
            assert c.checkable

    def test_counted_apart_from_every_other_verdict(self):
        res = run(claim("near"), data=from_differences(D), max_resamples=999)
        for st in ("as tested", "strict"):
            counts = res.counts(st)
            assert counts[UNDECIDED] == 1 and sum(counts.values()) == 1
        assert res.counts_bh()[UNDECIDED] == 1

    def test_reason_says_both_sides(self):
        (c,) = run(claim("near"), data=from_differences(D), max_resamples=999).checks
        text = reason(c, c.strict)
        assert text.startswith("p_adj = 0.0") and "within 2.576 Monte Carlo standard" in text
        assert "reproduced if the exact p_adj ≤ α = 0.05, direction only if above" in text

    def test_a_settled_p_keeps_its_verdict(self):
        (c,) = run(claim("near"), data=from_differences(D), max_resamples=2**16).checks
        assert c.strict.verdict == "direction only" and c.strict.sides is None
