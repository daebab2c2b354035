import json

import numpy as np
import pandas as pd
import pytest

from osustat.audit.claims import parse_claims
from osustat.audit.result import VERDICTS
from osustat.audit.run import audit
from osustat.formatting import fmt_interval
from osustat.reports._audit_words import reason
from osustat.reports.audit import render_markdown
from osustat.reports.audit_json import to_json
from tests.osustat.test_audit import FAST, claim, from_differences, records


def why(check, standard="strict"):
    """The reason the report prints for `check` under `standard`."""
    return reason(check, check.under(standard))


HEAD = """title = "Demo audit"
[family.g]
correction = "bonferroni"
description = "second family"
"""


def demo():
    cells = ["T+E+", "T-E-"] * 30
    d = np.where(np.arange(60) % 2 == 0, 0.25, -0.02) + np.tile([0.05, -0.05, 0.0], 20)
    data = from_differences(d, cells=cells)
    text = (
        HEAD
        + claim("strong", cell="T+E+", reported_effect=0.9, reported_p=0.2)
        + claim("weak", cell="T-E-", direction="less")
        + claim("missing", budget=64)
        + claim("other", family="g", reported_n=7)
    )
    return audit(parse_claims(text, source="demo.toml"), data, **FAST, rng=0)


class TestRenderMarkdown:
    def test_content(self):
        res = demo()
        text = render_markdown(res, preamble=["- Records: `demo.csv`."])
        lines = text.splitlines()
        # The first lines say which standard each verdict column uses.
        assert lines[0] == "# Demo audit" and lines[1] == ""
        assert lines[2].startswith("- **As tested** column: each claim on its own terms")
        assert lines[3].startswith("- **Strict** column: seeds averaged per unit")
        assert lines[4] == "- Records: `demo.csv`."
        assert "## Family `f`" in text and "## Family `g`: second family" in text
        assert "4 claims, α = 0.05" not in text
        assert (
            "3 claims, α = 0.05. As tested: correction none (m = 2). Strict: holm over the 2"
            in text
        )
        assert "1 claim, α = 0.05. As tested: correction bonferroni (m = 1)." in text
        strong = res.checks[0]
        row = next(line for line in lines if line.startswith("| strong |"))
        assert f"| {strong.n} queries |" in row and "Δ +0.900, p = 0.2" in row
        assert f"**{strong.verdict}**" in row and row.endswith("| effect-outside-ci |")
        assert f"{strong.effect:+.3f} [{strong.ci.low:+.3f}, {strong.ci.high:+.3f}]" in row
        assert f"**{strong.as_tested.verdict}** |" in row
        assert "## Flags" in text and "- **strong** `effect-outside-ci`:" in text
        assert "- **other** `n-mismatch`: reported n = 7, the records hold n = 60." in text
        assert "## Not checkable" in text
        assert "- **missing** (new − old > 0 on recall, B=64, aggregate (query)): budget 64" in text
        # kinds read "4 difference", not "difference 4" (a new user's read)
        assert "- Claims: 4 (by kind: 4 difference); checkable against these records: 3." in text
        for st in ("as tested", "strict"):
            counts = res.counts(st)
            # the parenthesis counts the 3 checkable claims; the one not checkable beside it
            # (a new user's review: "0 of 1 checkable ... (contradicted 1, not checkable 1)")
            assert counts.pop("not checkable") == 1
            summary = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
            assert f"- **{st.capitalize()}**: {counts['reproduced']} of 3 checkable claims " in text
            assert f"({summary}); 1 more not checkable." in text
        assert "| verdict | as tested | strict |" in text
        for c in res.checks:
            if c.verdict != "not checkable":
                assert f"- **{c.claim.id}**: {c.verdict} — {why(c)}." in text
                assert (
                    f"As tested (sign-flip): {c.as_tested.verdict} — {why(c, 'as tested')}." in text
                )

    def test_seed_contrasts_are_shown(self):
        rng = np.random.default_rng(2)
        base = rng.normal(0.05, 0.2, size=(40, 1))
        data = from_differences(np.clip(base + 0.001 * rng.normal(size=(40, 3)), -1, 1))
        res = audit(parse_claims(claim(seeds="pooled")), data, **FAST, rng=0)
        text = render_markdown(res)
        assert "Seeds: 3, mean between-seed correlation 1.00" in text
        assert "`seeds-pooled`" in text and "(anti-conservative contrasts" in text

    def test_same_seed_same_report(self):
        assert render_markdown(demo()) == render_markdown(demo())


class TestToJson:
    def test_same_numbers_as_the_checks(self):
        res = demo()
        payload = json.loads(json.dumps(to_json(res)))
        assert payload["title"] == "Demo audit" and payload["claims_file"] == "demo.toml"
        assert list(payload["counts"]) == list(VERDICTS)
        assert sum(payload["counts"].values()) == len(payload["claims"]) == 4
        for item, check in zip(payload["claims"], res.checks, strict=True):
            assert item["id"] == check.claim.id and item["verdict"] == check.verdict
            assert [f["code"] for f in item["flags"]] == [f.code for f in check.flags]
            if check.test is None:
                assert "recomputed" not in item
            else:
                rec = item["recomputed"]
                assert rec["pvalue"] == check.test.pvalue
                assert rec["pvalue_adjusted"] == check.pvalue_adjusted
                assert rec["ci"] == [check.ci.low, check.ci.high] and rec["n"] == check.n
        assert payload["families"]["g"]["correction"] == "bonferroni"
        assert payload["families"]["g"]["strict_correction"] == "holm"
        assert payload["summary"] == res.summary()
        for item, check in zip(payload["claims"], res.checks, strict=True):
            assert item["as_tested"]["verdict"] == check.as_tested.verdict
            assert item["strict"]["pvalue_adjusted"] == check.strict.pvalue_adjusted
        assert payload["claims"][0]["reported"]["p"] == {
            "relation": "=",
            "value": 0.2,
            "text": "0.2",
        }
        assert payload["claims"][1]["reported"]["p"] is None

    def test_hit_records(self):
        data = records([1] * 20 + [0] * 20, [0] * 40, metric="hit@2")
        res = audit(parse_claims(claim(metric="hit@2")), data, **FAST, rng=0)
        item = to_json(res)["claims"][0]
        assert item["recomputed"]["pvalue_method"] == "exact-binomial"
        assert item["verdict"] == "reproduced"


class TestWords:
    def test_infinite_mde_in_report_and_json(self):
        # n = 4 units: no effect reaches power .8 (issue #11); the words say so and the
        # JSON carries no Infinity.
        data = from_differences([0.3, -0.1, 0.2, 0.1])
        res = audit(parse_claims(claim("tiny", reported_effect=0.2)), data, **FAST, rng=0)
        text = render_markdown(res)
        assert "underpowered — underpowered at any effect at n = 4" in text
        payload = to_json(res)
        rec = payload["claims"][0]["recomputed"]
        assert rec["mde"] is None and rec["mde_method"] == res.checks[0].mde.method
        assert payload["claims"][0]["strict"]["code"] == "underpowered"

    def test_mde_from_few_differences_is_a_range_in_json(self):
        # issue 35: 6 differences give a range, never a precise-looking number
        data = from_differences([0.3, -0.1, 0.2, -0.2, 0.1, 0.05])
        res = audit(parse_claims(claim("few", reported_effect=0.05)), data, **FAST, rng=0)
        rec = to_json(res)["claims"][0]["recomputed"]
        assert rec["mde"] is None and rec["mde_method"] == "sd-range"
        assert rec["mde_range"] == list(res.checks[0].mde.mde_range)
        assert "is not estimable from 6 differences" in render_markdown(res)

    def test_every_reason_code_is_worded(self):
        from osustat.audit.verdicts import REASONS

        res = demo()
        seen = {c.strict.code for c in res.checks} | {c.as_tested.code for c in res.checks}
        assert seen <= set(REASONS)
        for c in res.checks:
            for v in (c.as_tested, c.strict):
                assert reason(c, v) and "{" not in reason(c, v)

    def test_every_test_code_is_worded(self):
        from dataclasses import replace

        from osustat.audit.verdicts import TESTS
        from osustat.reports._audit_words import procedure

        res = demo()
        check = res.checks[0]
        names = {procedure(check, replace(check.strict, test=code)) for code in TESTS}
        assert len(names) == len(TESTS)  # each code has its own words
        with pytest.raises(ValueError, match="unknown test code 'nope'"):
            procedure(check, replace(check.strict, test="nope"))


class TestIntervalTestAgreement:
    """Issue 23 item 7 in the audit: a bootstrap interval that excludes the claim's boundary
    beside a p that is not significant gets a sentence saying why (and vice versa)."""

    def test_disagreement_is_explained(self):
        # four queries, all better: the bootstrap interval excludes 0, but the exact
        # two-sided sign-flip test cannot go below p = 2/16 = .125
        data = from_differences([0.2, 0.3, 0.25, 0.35])
        res = audit(parse_claims(claim("small")), data, **FAST, rng=0)
        check = res.checks[0]
        assert check.ci.low > 0 and check.test.pvalue > 0.05  # the disagreement itself
        text = render_markdown(res)
        assert "## Interval and test" in text
        assert "Interval and test disagree about 0 in 1 row" in text
        line = next(x for x in text.splitlines() if x.startswith("- small: the 95% bootstrap"))
        assert "excludes 0 but p = .125 > α = 0.05" in line
        assert "(the test cannot go below p = .125 with these differences)" in line
        inverted = check.test.confidence_interval(0.95)
        assert inverted.low <= 0 <= inverted.high  # the interval inverting the test agrees
        assert line.endswith(f"is {fmt_interval(inverted.low, inverted.high)}.")

    def test_threshold_is_the_boundary(self):
        # the interval excludes 0 but holds the claimed threshold .25: no note against 0
        d = np.tile([0.2, 0.3, 0.25, 0.28, 0.22], 8)
        res = audit(parse_claims(claim("th", threshold=0.25)), from_differences(d), **FAST, rng=0)
        check = res.checks[0]
        assert check.ci.low > 0 and check.ci.low <= 0.25 <= check.ci.high
        assert check.test.pvalue > 0.05
        assert "## Interval and test" not in render_markdown(res)

    def test_no_section_when_all_agree(self):
        assert "## Interval and test" not in render_markdown(demo())


class TestReproductionMeasures:
    """Issue 24: ER and ΔRI per claim against the printed values, beside the verdict."""

    def test_printed_means_and_effect(self):
        t = np.array([0.6, 0.7, 0.5, 0.8, 0.6, 0.7] * 5)
        b = np.array([0.5, 0.6, 0.5, 0.6, 0.5, 0.6] * 5)
        text = (
            claim("means", reported_means=[0.70, 0.50])
            + claim("delta", family="g", reported_effect=0.25)
            + claim("rel", kind="relative", reported_effect=0.5)
            + claim("bare", family="h")
        )
        res = audit(parse_claims(text), records(t, b), **FAST, rng=0)
        by = {c.claim.id: c for c in res.checks}
        imp, ri = t.mean() - b.mean(), (t.mean() - b.mean()) / b.mean()
        # hand computation (repro_eval's ER and ΔRI)
        assert by["means"].reproduction.effect_ratio == pytest.approx(imp / 0.2)
        assert by["means"].reproduction.delta_ri == pytest.approx(0.2 / 0.5 - ri)
        assert by["delta"].reproduction.effect_ratio == pytest.approx(imp / 0.25)
        assert by["delta"].reproduction.delta_ri is None
        assert by["rel"].reproduction.delta_ri == pytest.approx(0.5 - ri)
        assert by["rel"].reproduction.effect_ratio is None
        assert by["bare"].reproduction is None
        md = render_markdown(res)
        assert "| ER; ΔRI [CI] | flags |" in md
        m = by["means"].reproduction
        row = next(line for line in md.splitlines() if line.startswith("| means |"))
        lo, hi = m.effect_ratio_ci.low, m.effect_ratio_ci.high
        assert f"ER {m.effect_ratio:.2f} [{fmt_interval(lo, hi, 2)[1:]}" in row
        assert next(x for x in md.splitlines() if x.startswith("| bare |")).endswith("| — |  |")
        rec = {c["id"]: c for c in to_json(res)["claims"]}
        assert rec["means"]["recomputed"]["effect_ratio"] == pytest.approx(imp / 0.2)
        assert rec["means"]["recomputed"]["delta_ri_ci"] == [
            m.delta_ri_ci.low,
            m.delta_ri_ci.high,
        ]
        assert "effect_ratio" not in rec["bare"]["recomputed"]

    def test_adding_the_measures_changed_no_other_number(self):
        """ER/ΔRI draw last from each claim's own stream: p-values and CIs stay."""
        res = demo()
        strong = res.checks[0]
        assert strong.reproduction.effect_ratio == pytest.approx(strong.effect / 0.9)
        assert strong.ci is not None and strong.test.pvalue == 0.001


class TestUndecidedInTheReport:
    """Red team: near α the summary counted the noisy side ("1 of 1 checkable claims
    reproduced" at one seed, "0 of 1" at another); an undecided claim is counted apart."""

    def result(self, rng=0):
        from tests.osustat.test_audit_precision import D

        text = claim("near") + claim("clear", family="g", budget=128)
        data = pd.concat([from_differences(D), from_differences(D + 0.3, budget=128)])
        return audit(parse_claims(text), data, **FAST, rng=rng, max_resamples=999)

    def test_summary_counts_it_apart(self):
        from osustat.audit.verdicts import UNDECIDED

        text = render_markdown(self.result())
        for st in ("As tested", "Strict"):
            assert (
                f"- **{st}**: 1 of 1 checkable claims with a decided verdict reproduced "
                "(reproduced 1); 1 more undecided at this Monte Carlo precision" in text
            )
        assert f"| {UNDECIDED} | 1 | 1 | 1 |" in text
        row = next(line for line in text.splitlines() if line.startswith("| near |"))
        assert row.count(f"**{UNDECIDED}**") == 2

    def test_json_says_it_and_its_two_sides(self):
        from osustat.audit.verdicts import UNDECIDED

        payload = json.loads(json.dumps(to_json(self.result())))
        near = payload["claims"][0]
        assert near["verdict"] == UNDECIDED and near["strict"]["code"] == "mc-undecided"
        assert near["strict"]["sides"] == {"at_or_below_alpha": "reproduced",
                                           "above_alpha": "direction only"}  # fmt: skip
        assert payload["summary"]["strict"][UNDECIDED] == 1
        assert payload["summary"]["strict"]["reproduced"] == 1

    def test_interval_and_test_section_takes_no_noisy_side(self):
        # "the interval holds 0 but p = .049 <= α" at seeds 0 and 6 only: the p's side of α
        # there is resampling noise, so the disagreement is too
        for s in range(8):
            assert "- near: the 95% bootstrap" not in render_markdown(self.result(s))

    def test_same_report_verdicts_whatever_the_seed(self):
        standards = ("as tested", "strict")
        said = {
            tuple(c.under(st).verdict for c in self.result(s).checks for st in standards)
            for s in range(4)
        }
        assert len(said) == 1
