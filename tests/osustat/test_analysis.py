"""osustat.analyze: declared families, verdict words, self-describing outputs."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import osustat
from osustat.wording import describe_verdict, mde_description
from tests.fakes import RecordingBar
from tests.reference.statsmodels_multitest import multipletests

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "records.csv"


@pytest.fixture(scope="module")
def records():
    return pd.read_csv(EXAMPLE)


def run(records, **kw):
    kw.setdefault("n_resamples", 499)
    kw.setdefault("bootstrap_resamples", 100)
    return osustat.analyze(records, treatment="osu-mem", baseline="flat-vector", **kw)


class TestFamilies:
    @pytest.mark.parametrize(
        ("family", "sizes"),
        [("per-metric-budget", {4}), ("per-metric", {8}), ("all", {16})],
    )
    def test_family_sizes_and_holm_matches_statsmodels(self, records, family, sizes):
        res = run(records, family=family)
        rows = [r for c in res.comparisons for r in c.rows if r.family is not None]
        assert {r.family_size for r in rows} == sizes
        for name in {r.family for r in rows}:
            members = [r for r in rows if r.family == name]
            ref = multipletests([r.pvalue for r in members], method="holm")[1]
            np.testing.assert_allclose([r.pvalue_adjusted for r in members], ref, rtol=1e-12)
        # aggregates are outside every family
        aggs = [c.rows[-1] for c in res.comparisons]
        assert all(r.family is None and r.pvalue_adjusted is None for r in aggs)
        assert f"Correction family (`{family}`)" in res.to_markdown()

    def test_user_groups(self, records):
        fam = [[("hit@2", 128), ("hit@2", 256)], [("recall", 128), ("recall", 256)]]
        res = run(records, family=fam)
        assert res.family == "user"
        assert {r.family_size for c in res.comparisons for r in c.rows if r.family} == {8}
        with pytest.raises(ValueError, match=r"`family` leaves out .*\('recall', 256\)"):
            run(records, family=[[("hit@2", 128), ("hit@2", 256), ("recall", 128)]])
        with pytest.raises(ValueError, match="not analysed"):
            run(records, family=[[("hit@2", 999)]])

    def test_wider_family_changes_the_verdict_words(self, records):
        narrow = run(records, family="per-metric-budget", metrics=["hit@2"], budgets=[256])
        wide = run(records, family="all")
        row_n = narrow.comparisons[0].rows[3]  # T-E- at B=256
        row_w = next(c for c in wide.comparisons if c.heading == "hit@2 at B = 256").rows[3]
        assert row_n.pvalue == row_w.pvalue  # same test, same seed stream for this table
        assert "over m = 4" in row_n.verdict and "over m = 16" in row_w.verdict

    def test_no_cells_makes_aggregates_the_family(self, records):
        res = run(records, unit="episode", family="all")
        assert res.family_members == "aggregate tests"
        assert {c.rows[-1].family_size for c in res.comparisons} == {4}


@pytest.mark.parametrize("budgets", [["abc"], [None], [float("inf")], [0], [1.5], "128", [True]])
def test_bad_budgets_are_refused_by_name(records, budgets):
    # "128" used to be read as the budgets 1, 2, 8; ["abc"] / [None] surfaced float()'s error
    with pytest.raises((TypeError, ValueError), match="`budgets` must be"):
        run(records, budgets=budgets)


def test_one_budget_may_be_a_number(records):
    for b in (128, 128.0, np.int64(128)):
        assert [c.budget for c in run(records, budgets=b, metrics="hit@2").comparisons] == [128]


class TestVerdicts:
    # (effect, p, p adjusted, correction, family size, mde, mde alpha) -> the verdict's words
    @pytest.mark.parametrize(
        ("effect", "p", "p_adj", "correction", "m", "mde", "mde_alpha", "words"),
        [
            (0.16, 0.004, 0.064, "holm", 16, 0.3, 0.05 / 16,
             "not significant after Holm over m = 16 (raw p = .004)"),
            (-0.2, 0.0004, 0.0004, "none", 3, 0.1, 0.05,
             "hurts: significant at α = 0.05 (p < .001)"),
            (0.1, 0.3, None, "holm", 0, 0.1, 0.05, "not significant (p = .300, uncorrected)"),
        ],
        ids=["raw-significant-not-after-correction", "significant", "uncorrected"],
    )  # fmt: skip
    def test_words(self, effect, p, p_adj, correction, m, mde, mde_alpha, words):
        kw = {"correction": correction, "family_size": m, "mde": mde, "mde_alpha": mde_alpha}
        assert describe_verdict(effect, p, p_adj, alpha=0.05, **kw) == words

    def test_mde_uses_the_family_level(self, records):
        res = run(records, metrics=["recall"], budgets=[256])
        row = res.comparisons[0].rows[0]
        assert row.mde_alpha == pytest.approx(0.05 / 4)
        d = res.comparisons[0].result.paired
        mask = np.array([c.value == row.label for c in d.cells])
        cell = d.differences[mask]
        pairs = (d.treatment[mask], d.baseline[mask])  # recall: the tilt moves the treatment
        n = int(mask.sum())
        at_family = osustat.minimum_detectable_effect(
            None, n, alpha=0.05 / 4, differences=cell, pairs=pairs
        )
        assert row.mde == pytest.approx(at_family)
        assert row.mde > osustat.minimum_detectable_effect(None, n, differences=cell, pairs=pairs)


class TestOutputs:
    def test_old_keyword_names_are_deprecated_aliases(self, records):
        kw = {"metrics": ["hit@2"], "budgets": [256], "bootstrap_resamples": 100}
        new = run(records, n_resamples=199, rng=3, **kw).to_dict()
        with pytest.warns(DeprecationWarning, match="`resamples` is deprecated; use `n_resamples`"):
            with pytest.warns(DeprecationWarning, match="`seed` is deprecated; use `rng`"):
                pair = {"treatment": "osu-mem", "baseline": "flat-vector"}
                old = osustat.analyze(records, **pair, **kw, resamples=199, seed=3).to_dict()
        for key in ("comparisons", "seed", "resamples"):
            assert new[key] == old[key]
        with pytest.raises(TypeError, match="`rng` or its old name `seed`"):
            run(records, rng=3, seed=3, **kw)

    def test_json_is_self_describing(self, records):
        res = run(records, metrics=["hit@2", "recall"], budgets=[256], rng=7)
        p = json.loads(json.dumps(res.to_dict()))
        assert p["treatment"] == "osu-mem" and p["baseline"] == "flat-vector"
        assert p["seed"] == 7 and p["alpha"] == 0.05 and p["correction"] == "holm"
        assert p["provenance"]["inputs"][0]["sha256"]
        assert p["provenance"]["versions"]["osustat"] == osustat.__version__
        rows = p["comparisons"][0]["rows"]
        assert all(r["verdict"] for r in rows)
        exact = [r for r in rows if r["pvalue_exact"]]
        assert exact and all(r["n_resamples"] is None and r["pvalue_mc_se"] == 0 for r in exact)
        mc = [r for c in p["comparisons"] for r in c["rows"] if not r["pvalue_exact"]]
        for r in mc:
            assert r["pvalue_mc_se"] == pytest.approx(
                (r["pvalue"] * (1 - r["pvalue"]) / r["n_resamples"]) ** 0.5
            )
        frame = res.to_frame()
        assert len(frame) == sum(len(c["rows"]) for c in p["comparisons"])

    def test_markdown_formats(self, records):
        text = run(records).to_markdown()
        assert "-0.000" not in text and "p = <" not in text and "0.070." not in text
        assert "the 0 per-cell" not in text
        assert "exact (binomial)" in text and "Monte Carlo (B = 499)" in text
        assert "147573952589676412928" not in text

    def test_save_is_atomic_and_refuses_other_inputs(self, records, tmp_path):
        res = run(records, metrics=["hit@2"], budgets=[128, 256])
        out = res.save(tmp_path / "r")
        names = sorted(p.name for p in out.iterdir())
        assert names == sorted(
            [
                "report.md",
                "results.json",
                "provenance.json",
                "forest-hit2-B128.png",
                "forest-hit2-B128.svg",
                "forest-hit2-B256.png",
                "forest-hit2-B256.svg",
                "budgets-hit2.png",
                "budgets-hit2.svg",
            ]
        )
        res.save(tmp_path / "r")  # same inputs: replaced
        other = run(records[records["budget"] == 128], metrics=["hit@2"])
        # a Python caller is told its own argument (force=True), not the CLI's --force
        with pytest.raises(ValueError, match=r"^`out` .*made from different inputs.*force=True"):
            other.save(tmp_path / "r")
        other.save(tmp_path / "r", force=True)
        assert not (tmp_path / "r" / "forest-hit2-B256.png").exists()
        assert [p.name for p in tmp_path.iterdir()] == ["r"]  # no temporary folder left

    def test_save_refuses_a_different_run_of_the_same_inputs(self, records, tmp_path):
        # user2's review: an API save replaced a report of another alpha without a word
        res = run(records, metrics=["hit@2"], budgets=[256], family="per-metric")
        res.save(tmp_path / "r")
        res.save(tmp_path / "r")  # the same run again: replaced
        prov = json.loads((tmp_path / "r" / "provenance.json").read_text())
        assert prov["options"]["alpha"] == 0.05 and prov["options"]["pairs"] == [
            ["osu-mem", "flat-vector"]
        ]
        other = run(records, metrics=["hit@2"], budgets=[256], family="per-metric", alpha=0.1)
        with pytest.raises(ValueError, match=r"different run \(alpha: 0.05 there, 0.1 here\)"):
            other.save(tmp_path / "r")
        assert json.loads((tmp_path / "r" / "results.json").read_text())["alpha"] == 0.05
        other.save(tmp_path / "r", force=True)
        assert json.loads((tmp_path / "r" / "results.json").read_text())["alpha"] == 0.1
        # several pairs: the same rule (its renderers are the CLI's to register)
        from osustat.cli.main import _register_renderers

        _register_renderers()
        three = pd.concat([records, records[records["method"] == "osu-mem"].assign(method="c")])
        kw = {"baseline": "flat-vector", "metrics": ["hit@2"], "budgets": [256]}
        kw |= {"n_resamples": 99, "bootstrap_resamples": 50}
        osustat.analyze(three, treatment=["osu-mem", "c"], **kw).save(tmp_path / "m")
        with pytest.raises(ValueError, match=r"different run \(pairs: "):
            osustat.analyze(three, treatment=["c", "osu-mem"], **kw).save(tmp_path / "m")

    def test_paired_names(self, records):
        p = osustat.paired(records, "osu-mem", "flat-vector", metric="recall", budget=128)
        assert (p.treatment_name, p.baseline_name) == ("osu-mem", "flat-vector")


def test_results_compare_by_identity_and_are_keyword_only(records):
    # issue 9: dataclass equality over arrays raised ("truth value of an array is ambiguous")
    import dataclasses

    from osustat.cellwise import CellEffect

    res = run(records, metrics=["hit@2"], budgets=[128])
    comp = res.comparisons[0]
    assert res == res and comp == comp and comp.result == comp.result
    assert dataclasses.replace(res) != res  # a copy is another result, not an error
    row = comp.rows[0]
    assert row == dataclasses.replace(row)  # rows hold no arrays: compared by value
    with pytest.raises(TypeError):
        CellEffect(*[getattr(row.effect, f.name) for f in dataclasses.fields(CellEffect)])


class TestSelectionsCountEachTestOnce:
    """Issue 35 item 1: a repeated metric, budget or method is refused, naming it (one rule
    for every list of the API and the CLI), instead of entering the family twice."""

    @pytest.mark.parametrize(
        ("kw", "named"),
        [
            ({"metrics": ["hit@2", "hit@2"]}, "`metrics` names 'hit@2' twice"),
            ({"metrics": ["hit@2", "HIT@2"]}, "'hit@2' and 'HIT@2'"),
            ({"metrics": ["hit@2", " hit@ 2"]}, "`metrics` names 'hit@2' twice"),
            ({"budgets": [256, 256.0]}, "`budgets` names 256 twice"),
            ({"budgets": [256, np.int64(256)]}, "`budgets` names 256 twice"),
        ],
    )
    def test_repeat_is_an_error_naming_it(self, records, kw, named):
        with pytest.raises(ValueError, match=named.replace("(", r"\(")):
            run(records, **kw)

    def test_repeated_method_is_an_error(self, records):
        with pytest.raises(ValueError, match="`treatment` names 'osu-mem' twice"):
            osustat.analyze(
                records, treatment=["osu-mem", "osu-mem"], baseline="flat-vector",
                n_resamples=99, bootstrap_resamples=50,
            )  # fmt: skip

    def test_family_size_is_the_number_of_distinct_tests(self, records):
        res = run(records, metrics=["hit@2"], budgets=[256], family="all")
        assert {r.family_size for c in res.comparisons for r in c.rows if r.family} == {4}

    def test_plan_cells_repeat_is_an_error(self, records):
        with pytest.raises(ValueError, match="`cells` names 'all' twice"):
            osustat.plan_cells(
                records, "osu-mem", "flat-vector", effect=0.1, metric="recall", budget=256,
                cells=["all", "all"],
            )  # fmt: skip


def test_resampling_cap_is_the_core_one(records):
    """Issue 35 item 7: one cap (2**25) for the core, the CLI and the driver; 10**9 was a
    MemoryError after minutes."""
    from osustat._validation import MAX_RESAMPLES, UsageError, check_option_count

    assert MAX_RESAMPLES == 2**25  # the CLI's and the driver's counts: one check, one cap
    assert check_option_count(MAX_RESAMPLES, "--resamples") == MAX_RESAMPLES
    with pytest.raises(UsageError, match="`--resamples` must be at most 33,554,432"):
        check_option_count(MAX_RESAMPLES + 1, "--resamples")
    for kw in ({"n_resamples": 10**9}, {"bootstrap_resamples": MAX_RESAMPLES + 1}):
        with pytest.raises(ValueError, match="at most 33,554,432"):
            run(records, **kw)


class TestMonteCarloPNearAlpha:
    """Issue 35 item 13: a Monte Carlo p whose error straddles α decides no verdict."""

    def test_undecided_within_the_error(self):
        kw = {"alpha": 0.05, "family_size": 1, "mde": 0.1, "mde_alpha": 0.05}
        said = describe_verdict(0.2, 0.055, None, correction="none", pvalue_se=0.0022, **kw)
        assert said.startswith("undecided at this Monte Carlo precision: p = 0.0550")
        # settled: far from α, or exact
        assert (
            describe_verdict(0.2, 0.03, None, correction="none", pvalue_se=0.0017, **kw)[:5]
            == "helps"
        )
        assert describe_verdict(0.2, 0.055, None, correction="none", **kw).startswith("not sig")

    def test_corrected_p_carries_the_correction_factor(self):
        # Holm over 4: p_adj = 4 p; the error of p_adj is 4 times that of p
        kw = {"alpha": 0.05, "family_size": 4, "mde": 0.1, "mde_alpha": 0.0125}
        said = describe_verdict(0.2, 0.0135, 0.054, correction="holm", pvalue_se=0.0012, **kw)
        assert said.startswith("undecided") and "p_adj = 0.0540 ± 0.0048" in said
        far = describe_verdict(0.2, 0.0135, 0.054, correction="holm", pvalue_se=0.0002, **kw)
        assert far.startswith("not significant")


def test_a_rows_numbers_do_not_depend_on_the_other_metrics_asked_for(records):
    """Each comparison draws from a stream named by its metric and budget, so recall at 256
    prints the same Monte Carlo p and bootstrap interval alone, after hit@2, and with every
    budget (a new user's review: one metric's interval moved with the `--metric` list)."""

    def recall_256(**kw):
        res = run(records, **kw)
        [comp] = [c for c in res.comparisons if c.metric == "recall" and c.budget == 256]
        return [(r.label, r.pvalue, r.effect.ci) for r in comp.rows]

    alone = recall_256(metrics=["recall"], budgets=[256])
    assert recall_256(metrics=["hit@2", "recall"], budgets=[256]) == alone
    assert recall_256(metrics=["recall", "hit@2"], budgets=[128, 256]) == alone
    assert any(p is not None and p not in (0, 1) for _, p, _ in alone)  # Monte Carlo p's


def test_the_token_cost_left_out_by_default_is_named(records):
    # a red team (stop 60): `tokens` rows were left out of the default without a word
    tokens = records[records["metric"] == "recall"].assign(metric="tokens", value=100.0)
    both = pd.concat([records, tokens], ignore_index=True)
    res = run(both, metrics=None, budgets=[128])
    assert [c.metric for c in res.comparisons] == ["hit@2", "recall"]
    [note] = [n for n in res.input_notes if n.startswith("Not analysed by default: `tokens`")]
    assert "--metric tokens" in note and note in res.to_markdown()
    named = run(both, metrics=["hit@2", "tokens"], budgets=[128])
    assert not any("`tokens`" in n for n in named.input_notes)
    assert not any("`tokens`" in n for n in run(records, metrics=None, budgets=[128]).input_notes)


def test_the_default_metrics_are_those_every_compared_method_has(records):
    """Systems' files score different metrics (mem0's bleu and f1 beside the judge's grade
    Zep's file alone has): `analyze` without `metrics` failed on the first metric one method
    lacked ("method 'zep' has no records for metric 'bleu'"); it analyses the shared ones and
    names the rest. A named metric one method lacks is still an error."""
    extra = records[(records["method"] == "osu-mem") & (records["metric"] == "recall")].copy()
    extra["metric"] = "bleu"
    both = pd.concat([records, extra], ignore_index=True)
    res = run(both, metrics=None, budgets=[128])
    assert [c.metric for c in res.comparisons] == ["hit@2", "recall"]
    [note] = [n for n in res.input_notes if n.startswith("Not analysed")]
    assert (
        "1 metric-budget pair(s)" in note and "'flat-vector' has no records of bleu @ 128" in note
    )
    assert note in res.to_markdown()
    alone = run(records, metrics=None, budgets=[128])
    for mine, theirs in zip(res.comparisons, alone.comparisons, strict=True):
        assert [(r.pvalue, r.effect.ci) for r in mine.rows] == [
            (r.pvalue, r.effect.ci) for r in theirs.rows
        ]
    with pytest.raises(ValueError, match=r"method 'flat-vector' has no records for metric 'bleu'"):
        run(both, metrics=["bleu"], budgets=[128])
    only = pd.concat([extra, records[(records["method"] == "flat-vector")
                                     & (records["metric"] == "hit@2")]])  # fmt: skip
    with pytest.raises(ValueError, match=r"no metric and budget has records of every compared"):
        osustat.analyze(only, treatment="osu-mem", baseline="flat-vector", rng=0)


def test_a_family_without_per_cell_tests_is_said_so_not_m_0(records):
    # a new user read "judge @ 1: m = 0" beside "judge.cells @ 1: m = 4"
    plain = records[records["metric"] == "hit@2"].assign(metric="plain", cell=None)
    both = pd.concat([records[records["metric"] == "hit@2"], plain], ignore_index=True)
    res = run(both, budgets=[128])
    sentence = res.family_sentence()
    assert (
        "plain @ 128: no per-cell test, its aggregate alone; hit@2 @ 128: m = 4" in sentence
        or "hit@2 @ 128: m = 4; plain @ 128: no per-cell test, its aggregate alone" in sentence
    )
    assert "m = 0" not in sentence


def test_a_westfall_young_adjusted_p_near_alpha_is_undecided_whatever_the_raw_ps_method(records):
    """A statistician's check: T−E− at hit@2, B = 128 has an exact raw p (.014) but a Monte
    Carlo maxT adjusted p (.048 = 479/10,001 at seed 0; .0501 at seed 6): its error was taken
    as the raw p's (0), so the verdict flipped with the seed. It is undecided at both."""
    for seed in (0, 6):
        res = osustat.analyze(
            records, treatment="osu-mem", baseline="flat-vector", metrics=["hit@2"],
            budgets=[128], correction="maxt", rng=seed,
        )  # fmt: skip
        row = next(r for r in res.comparisons[0].rows if r.label == "T-E-")
        assert row.exact and 0.04 < row.pvalue_adjusted < 0.06
        assert row.verdict.startswith("undecided at this Monte Carlo precision: p_adj = ")


def test_answer_level_records_name_the_metric_alone_and_hold_one_budget(records):
    # a new user's imported answers read "judge at B = 1": a budget their system never had
    one = records[records["budget"] == 128].assign(budget=1)
    res = run(one, metrics=["hit@2"])  # every budget 1: read as answers by default
    assert res.budget_kind == "answers"
    assert run(one, budget_kind="tokens", metrics=["hit@2"]).comparisons[0].heading == (
        "hit@2 at B = 1"
    )
    assert run(records, metrics=["hit@2"]).budget_kind == "tokens"
    assert [c.heading for c in res.comparisons] == ["hit@2"]
    assert "hit@2: m = 4" in res.family_sentence() and "@ 1" not in res.family_sentence()
    assert "B = 1" not in res.to_markdown()
    with pytest.raises(ValueError, match=r"needs one budget; these records hold \[128, 256\]"):
        run(records, budget_kind="answers")
    with pytest.raises(ValueError, match=r"`budget_kind` must be one of \['tokens', 'depth'"):
        run(records, budget_kind="budget")


def test_the_mde_legend_names_the_level_of_the_correction_used(records):
    # a second user round: under --correction fdr_by the legend said "α/m (Bonferroni's
    # level, Holm's first step)" while results.json's mde_alpha was BY's first threshold
    by = run(records, metrics=["hit@2"], budgets=[128], correction="fdr_by").to_markdown()
    assert "at α/(m·H_m) (Benjamini–Yekutieli's first threshold" in by
    assert "Bonferroni's level" not in by
    holm = run(records, metrics=["hit@2"], budgets=[128]).to_markdown()
    assert "at α/m (Bonferroni's level, Holm's first step" in holm


@pytest.mark.parametrize(("scale", "words"), [
    (1e-6, "reach 1e-06 in absolute value; the report prints three decimals, so its means, Δ, "
           "intervals and MDEs print as 0.000 or with one digit: multiply the metric by 1e6"),
    (1e100, "its numbers print with 101 digits before the point: divide the metric by 1e100"),
    (1e-320, "multiply the metric by 1e32"),  # 1e320 or 1e321: a subnormal value
])  # fmt: skip
def test_a_metric_at_an_unreadable_scale_is_analysed_and_said(records, scale, words):
    # a reviewer (stop 57): recall scaled by 1e100 or 1e-320 crashed `analyze` in the MDE's
    # engines; by 1e-6 every mean, Δ and interval printed 0.000 beside "hurts: p = .022"
    rows = records[(records["metric"] == "recall") & (records["budget"] == 256)].copy()
    rows["value"], rows["metric"] = rows["value"] * scale, "score"  # recall is at most 1
    res = run(rows.copy(), bootstrap_resamples=50)
    agg = res.comparisons[0].rows[-1]
    rows["value"] = rows["value"] / scale
    one = run(rows, bootstrap_resamples=50).comparisons[0].rows[-1]
    assert agg.pvalue == one.pvalue  # the test does not depend on the scale
    assert np.isfinite(agg.mde) or np.isinf(one.mde)
    note = next(n for n in res.input_notes if n.startswith("Scale: the values of 'score'"))
    assert words in note
    assert not any(n.startswith("Scale:") for n in run(records, bootstrap_resamples=50).input_notes)


@pytest.mark.parametrize("unit", ["query", "episode"])
def test_two_identical_methods_print_no_mde_rather_than_underpowered(records, unit):
    # a red team (stop 57): a system against a copy of itself at the episode unit read
    # "underpowered at any effect" on every row
    same = records[records["method"] == "flat-vector"].assign(method="osu-mem")
    both = pd.concat([same, records[records["method"] == "flat-vector"]], ignore_index=True)
    res = run(both, metrics=["hit@2"], budgets=[256], unit=unit)
    rows = res.comparisons[0].rows
    assert rows and all(r.effect.effect == 0 and np.isinf(r.mde) for r in rows)
    words = "MDE not estimable: the two methods tied on all"
    assert all(mde_description(r.mde).startswith(words) for r in rows)
    assert all(words in r.verdict for r in rows[:-1])  # the cells' (in a family) say it too
    assert not any("underpowered" in r.verdict + mde_description(r.mde) for r in rows)
    for row in res.to_dict()["comparisons"][0]["rows"]:  # the JSON's note too (a reviewer)
        assert row["mde"] is None and row["mde_note"].startswith(words)


@pytest.mark.parametrize("pairs", [1, 3])
def test_progress_counts_the_tests_and_the_mde_searches(records, monkeypatch, pairs):
    # issue 37: on a million records the MDE searches after the tests took as long again and
    # no bar showed them (the comparisons' bar had ended before its 2 s delay)
    import osustat.analysis as analysis

    monkeypatch.setattr(analysis, "tqdm", RecordingBar)
    RecordingBar.made = []
    if pairs == 1:
        run(records, metrics=["hit@2", "recall"], budgets=[256])
    else:
        third = records[records["method"] == "flat-vector"].assign(method="third")
        osustat.analyze(pd.concat([records, third]), treatment=["osu-mem", "flat-vector",
                        "third"], all_pairs=True, metrics=["hit@2"], budgets=[256],
                        n_resamples=499, bootstrap_resamples=100)  # fmt: skip
    (bar,) = RecordingBar.made
    assert bar.total == 2 * (2 if pairs == 1 else 3) and bar.n == bar.total
    assert bar.desc.endswith("(tests, then MDEs)")
    assert (bar.options.get("delay"), bar.options.get("disable", False)) == (
        (2.0, None) if pairs == 1 else (None, False)
    )


def test_one_episode_says_its_intervals_resample_queries(records):
    # a reviewer (stop 57): with one episode the note said the intervals resample whole
    # episodes while every row's interval resampled its queries
    one = records.assign(episode_id="ep001")
    res = run(one, metrics=["recall"], budgets=[256], bootstrap_resamples=50)
    note = next(n for n in res.input_notes if n.startswith("Unit: query"))
    assert "1 of 1 episodes" in note and "and so do the intervals" in note
    assert {r.effect.ci.n_clusters for r in res.comparisons[0].rows} == {
        r.effect.n for r in res.comparisons[0].rows
    }
    several = run(records, metrics=["recall"], budgets=[256], bootstrap_resamples=50)
    assert "while the intervals resample whole episodes" in " ".join(several.input_notes)


def test_a_metric_on_one_shared_episode_is_left_out_of_the_default_and_said(records):
    # a red team (stop 57): a LoCoMo category present in one of two conversations aborted
    # the whole episode-level run ("share 1 episode on judge.cat3"); the default selection
    # leaves it out with a note, named with --metric it is still the error
    rows = records[records["budget"] == 256].copy()
    one = (rows["metric"] == "recall") & (rows["episode_id"] != "ep001")
    rows = rows[~one]  # recall now in one episode only
    res = run(rows, unit="episode", bootstrap_resamples=50)
    assert [c.heading for c in res.comparisons] == ["hit@2 at B = 256"]
    note = next(n for n in res.input_notes if n.startswith("Not analysed at the episode unit"))
    assert "1 metric-budget pair(s)" in note and "(recall @ 256 (1), shared episodes" in note
    with pytest.raises(ValueError, match=r"share 1 episode with values of recall .*\('ep001'\)"):
        run(rows, unit="episode", metrics=["recall"], bootstrap_resamples=50)
