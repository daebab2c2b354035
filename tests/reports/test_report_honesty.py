"""Reports that do not contradict themselves (issue 23 item 7): an interval beside a test that
disagrees with it about 0 gets a sentence saying so and why; figures name what they leave out;
no Python True/False in prose."""

import numpy as np
import pandas as pd
import pytest

from osustat import analyze
from osustat.analyses.synthetic.report_render import CURVE_METHODS, _figure_scope
from osustat.reports.cellwise import render_analysis


def _records() -> pd.DataFrame:
    # T+E+: 5 of 12 queries lose a hit (7 ties): a bootstrap resample of the 12 episodes has
    # mean 0 only when it draws ties alone, (7/12)^12 = .0015, below even the expanded tail
    # at k = 12 (1.1%), so the interval excludes 0; but with 5 non-zero differences the
    # two-sided sign-flip test cannot go below 2 / 2**5 = .0625.
    rows = []
    for i in range(12):
        for method, value in (("new", 0 if i < 5 else 1), ("old", 1)):
            rows.append(
                {"episode_id": f"e{i}", "query_id": f"q{i}", "method": method, "budget": 256,
                 "metric": "hit@2", "value": value, "cell": "T+E+"}
            )  # fmt: skip
    for i in range(12, 36):
        for method, value in (("new", i % 2), ("old", (i // 2) % 2)):
            rows.append(
                {"episode_id": f"e{i}", "query_id": f"q{i}", "method": method, "budget": 256,
                 "metric": "hit@2", "value": value, "cell": "T-E-"}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_interval_that_excludes_zero_beside_a_non_significant_p_is_explained():
    res = analyze(_records(), treatment="new", baseline="old", n_resamples=999, rng=0)
    row = next(r for r in res.comparisons[0].rows if r.label == "T+E+")
    assert row.effect.ci.high < 0 and row.pvalue > 0.05  # the contradiction this is about
    text = render_analysis(res, figures={})
    assert "Interval and test disagree about 0 in 1 row" in text
    line = next(x for x in text.splitlines() if x.startswith("- T+E+: the 95% bootstrap"))
    assert "excludes 0 but p = .062 > α = 0.05" in line
    assert "the test cannot go below p = .062" in line
    inverted = row.effect.test.confidence_interval(0.95)
    assert inverted.contains(0.0)  # the interval of the same test agrees with its p
    assert line.endswith(f"the interval inverting the test is [{inverted.low:+.3f}, 0.000].")


def test_agreeing_rows_get_no_sentence():
    rec = _records()
    rec = rec[rec["cell"] == "T-E-"]
    res = analyze(rec, treatment="new", baseline="old", n_resamples=999, rng=0)
    assert "disagree about 0" not in render_analysis(res, figures={})


def test_budget_curve_caption_names_the_methods_it_leaves_out():
    present = [*CURVE_METHODS, "No LT Memory", "Sliding Window", "OSU-Mem + GF"]
    text = _figure_scope(np.array(present), "Table 9")
    assert text.startswith(f"*The figure draws {len(CURVE_METHODS)} of {len(present)} methods")
    assert text.endswith("Table 9): No LT Memory, Sliding Window, OSU-Mem + GF.*")
    assert _figure_scope(np.array(CURVE_METHODS), "Table 9").endswith("methods.*")


def test_the_mde_legend_and_a_fallen_back_row_say_how_the_count_ratios_were_tilted():
    # issue 35 item 9 (the preamble described old MDE engines) and a review of the treatment's
    # tilt (a row whose own mean is beyond the treatment's tilt's reach had its differences
    # tilted silently): recall over 4 items, half the units tied at the ceiling (1, 1)
    t = np.array([1] * 10 + [1, 0.75, 0.75, 0.5, 0.75, 0.5, 0.25, 0.75, 0.5, 0.5])
    b = np.array([1] * 10 + [0.75, 0.25, 0.5, 0.25, 0.5, 0.5, 0.25, 0.25, 0.75, 0.25])
    t, b = np.tile(t, 3), np.tile(b, 3)
    rows = [
        {"episode_id": f"e{i}", "query_id": f"q{i}", "method": m, "budget": 256,
         "metric": "recall", "value": v, "cell": "T+E+"}
        for i in range(t.size)
        for m, v in (("new", t[i]), ("old", b[i]))
    ]  # fmt: skip
    res = analyze(pd.DataFrame(rows), treatment="new", baseline="old", n_resamples=999, rng=0)
    row = next(r for r in res.comparisons[0].rows if r.label == "T+E+")
    assert row.mde.method == "empirical-tilt" and row.mde.tilted == "differences"
    text = render_analysis(res, figures={})
    assert "the baseline's stay as observed" not in text
    assert "each unit's baseline kept beside its treatment value, or the differences where" in text
    line = next(x for x in text.splitlines() if x.startswith("| T+E+"))
    assert "tilted: the differences, as the treatment's tilt reaches a mean difference" in line


def test_rows_whose_interval_rests_on_five_or_fewer_clusters_are_named():
    # T+E+ spans 12 episodes (not named); a cell over 3 episodes is named with its k,
    # with the bound on any bootstrap interval's coverage there
    frame = _records()
    few = frame["cell"].eq("T-E-") & frame["episode_id"].isin(["e12", "e13", "e14"])
    frame.loc[few, "cell"] = "T+E-"
    frame.loc[few, "episode_id"] = frame.loc[few, "query_id"].map(lambda q: f"x{int(q[1:]) % 3}")
    res = analyze(frame, treatment="new", baseline="old", n_resamples=999, rng=0)
    row = next(r for r in res.comparisons[0].rows if r.label == "T+E-")
    assert row.effect.ci.n_clusters == 3
    line = next(x for x in render_analysis(res, figures={}).splitlines()
                if x.startswith("Intervals from 5 or fewer units"))  # fmt: skip
    assert "T+E- (k = 3)" in line and "T+E+" not in line
    assert "coverage at most .94 at k = 5, .88 at 4, .75 at 3, .50 at 2" in line


def test_break_even_symbols_are_defined_where_a_break_even_line_is_printed():
    # a reviewer met "p* = 55.3% T+E+, π_T+* = …, π_any+* = …" and "0%†" with no definition
    defined = "p* is the share of T+E+ units at which the aggregate Δ would be 0"
    res = analyze(_records(), treatment="new", baseline="old", n_resamples=99, rng=0)
    assert res.comparisons[0].result.break_even is not None
    text = render_analysis(res, figures={})
    assert "- Break-even" in text and defined in text
    rec = _records()
    alone = analyze(rec[rec["cell"] == "T-E-"], treatment="new", baseline="old",
                    n_resamples=99, rng=0)  # fmt: skip
    assert alone.comparisons[0].result.break_even is None
    assert defined not in render_analysis(alone, figures={})


def test_forest_marks_rows_resting_on_five_or_fewer_clusters_hollow_with_their_k():
    from matplotlib.colors import to_hex

    from osustat.reports.cellwise import forest_figure

    frame = _records()
    few = frame["cell"].eq("T-E-") & frame["episode_id"].isin([f"e{i}" for i in range(12, 18)])
    frame.loc[few, "cell"] = "T+E-"
    frame.loc[few, "episode_id"] = frame.loc[few, "query_id"].map(lambda q: f"x{int(q[1:]) % 3}")
    res = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0)
    comp = res.comparisons[0]
    fig = forest_figure(comp.result, title="t")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # 6 queries in 3 episodes: k beside n; the others' episodes hold one query each
    assert "T+E- (n=6, k=3)" in labels and "T+E+ (n=12)" in labels
    hollow = [ln for ln in ax.get_lines() if ln.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and list(hollow[0].get_xdata()) == [
        r.effect.effect for r in comp.rows if r.label == "T+E-"
    ]
    assert to_hex(hollow[0].get_color()) == to_hex("tab:blue")
    # drawn above the filled point it covers (at equal zorder the error bar's marker won)
    others = [ln for ln in ax.get_lines() if ln is not hollow[0]]
    assert hollow[0].get_zorder() > max(ln.get_zorder() for ln in others)
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = render_analysis(res, figures={comp.heading: "forest"})
    assert "hollow points: intervals from 5 or fewer units or clusters" in text


def test_caption_names_the_exact_intervals_and_no_draws_when_every_row_is_exact():
    # a reviewer read "2,000 resamples (every distinct resample, enumerated …: all rows)"
    frame = _records()
    frame["episode_id"] = frame["query_id"].map(lambda q: f"e{int(q[1:]) % 8}")
    res = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0)
    assert all(r.effect.ci.exact for c in res.comparisons for r in c.rows)
    text = render_analysis(res, figures={})
    assert "every distinct resample, enumerated (10 or fewer units or clusters)" in text
    assert "2,000 resamples" not in text.split("## ")[0]
    mixed = analyze(_records(), treatment="new", baseline="old", n_resamples=99, rng=0)
    exact = sum(r.effect.ci.exact for c in mixed.comparisons for r in c.rows)
    rows = sum(len(c.rows) for c in mixed.comparisons)
    head = render_analysis(mixed, figures={}).split("## ")[0]
    if 0 < exact < rows:
        assert f"2,000 resamples; every distinct resample, enumerated (10 or fewer units or " \
               f"clusters) for {exact} of the {rows} rows" in head  # fmt: skip
    else:
        assert "2,000 resamples" in head and exact == 0


def test_table_gives_each_rows_episodes_where_the_interval_resamples_them():
    # a reviewer could read k only off the forest's labels; the table had n (queries) alone
    frame = _records()
    frame["episode_id"] = frame["query_id"].map(lambda q: f"e{int(q[1:]) % 8}")
    res = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0)
    text = render_analysis(res, figures={})
    lines = text.splitlines()
    head = next(x for x in lines if x.startswith("| Cell |"))
    cols = [c.strip() for c in head.strip("|").split("|")]
    assert cols[:3] == ["Cell", "n (queries)", "episodes (CI's clusters)"]
    for row in res.comparisons[0].rows:
        cells = next(x for x in lines if x.startswith(f"| {row.label} |")).strip("|").split("|")
        assert len(cells) == len(cols)
        assert int(cells[2]) == row.effect.ci.n_clusters < row.effect.n
    assert "Column “episodes (CI's clusters)”" in text
    # one query per episode: the intervals resample the queries themselves, no column
    plain = render_analysis(analyze(_records(), treatment="new", baseline="old",
                                    n_resamples=99, rng=0), figures={})  # fmt: skip
    assert "episodes (CI's clusters)" not in plain


def test_the_legend_gives_one_bullet_per_rule():
    # a reader of the report met the MDE's rules as one 350-word sentence
    res = analyze(_records(), treatment="new", baseline="old", n_resamples=99, rng=0)
    head = render_analysis(res, figures={}).split("\n## ")[0]
    for start in ("- MDE: the smallest true Δ", "  - 0/1 differences: exact binomial",
                  "- MDE not one number:", "  - differences not normal-shaped",
                  "- MDE, measured limit", "- Paired sign-flip tests:", "- Intervals: ",
                  "- Significance marks", "- f·Δ:", "- W/T/L:", "- Break-even"):  # fmt: skip
        assert any(line.startswith(start) for line in head.splitlines()), start
    assert max(len(line.split()) for line in head.splitlines()) < 160


def test_an_episode_unit_table_says_how_many_queries_its_units_average():
    # a new user could not tell from the report that a pair stood on 1,537 of 1,540
    # questions: at the episode unit the table gave only "n (episodes) 10"
    frame = _records()
    frame["episode_id"] = frame["query_id"].map(lambda q: f"e{int(q[1:]) % 8}")
    res = analyze(frame, treatment="new", baseline="old", unit="episode", n_resamples=99, rng=0)
    comp = res.comparisons[0]
    assert comp.result.paired.n_queries == 36 and comp.rows[-1].effect.n == 8
    lines = render_analysis(res, figures={}).splitlines()
    head = next(x for x in lines if x.startswith("| Cell |"))
    assert head.startswith("| Cell | n (episodes) | queries (averaged) | share |")
    assert next(x for x in lines if x.startswith("| Aggregate |")).startswith(
        "| Aggregate | 8 | 36 |"
    )
    assert res.to_dict()["comparisons"][0]["n_queries"] == 36
    query = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0)
    assert "queries (averaged)" not in render_analysis(query, figures={})


def test_a_row_undecided_at_its_monte_carlo_precision_gets_no_significance_mark():
    # a red team's 30 differences whose exact p is about .050: the row's verdict said
    # "undecided" while the sig. column printed * with seed 0 (p .048) and . with seed 2
    rng = np.random.default_rng(7)
    z = rng.normal(0, 1, 30)
    d = z - z.mean() + 0.3125
    base = rng.uniform(0, 1, 30)
    rows = [
        {"episode_id": f"e{i}", "query_id": f"q{i}", "method": m, "budget": 1, "metric": "score",
         "value": base[i] + (d[i] if m == "A" else 0.0)}
        for i in range(30) for m in ("A", "B")
    ]  # fmt: skip
    marks = set()
    for seed in (0, 2):
        res = analyze(pd.DataFrame(rows), treatment="A", baseline="B", rng=seed)
        row = res.comparisons[0].rows[-1]
        assert row.verdict.startswith("undecided at this Monte Carlo precision")
        line = next(x for x in render_analysis(res, figures={}).splitlines()
                    if x.startswith("| Aggregate |"))  # fmt: skip
        marks.add(line.split(" | ")[14])
    assert marks == {"?"}


def test_the_query_unit_says_what_it_assumes_where_episodes_hold_several_queries():
    # a statistician: the query-level caveat was printed for registered benchmarks only, while
    # any records' episodes may hold several queries the tests treat as independent
    frame = _records()
    res = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0)
    assert not [n for n in res.input_notes if n.startswith("Unit:")]  # one query per episode
    frame["episode_id"] = frame["query_id"].map(lambda q: f"e{int(q[1:]) % 8}")
    res = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0)
    [note] = [n for n in res.input_notes if n.startswith("Unit:")]
    assert note.startswith("Unit: query; 8 of 8 episodes hold several queries")
    assert note in render_analysis(res, figures={})
    said = analyze(frame, treatment="new", baseline="old", n_resamples=99, rng=0,
                   input_notes=["Unit: query, asked for."])  # fmt: skip
    assert [n for n in said.input_notes if n.startswith("Unit:")] == ["Unit: query, asked for."]
    episode = analyze(frame, treatment="new", baseline="old", unit="episode", n_resamples=99, rng=0)
    assert not [n for n in episode.input_notes if n.startswith("Unit: query")]


def _no_cells(budgets=(256,), metrics=("hit@2",)) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = [
        {"episode_id": f"e{i}", "query_id": f"q{i}", "method": m, "budget": b, "metric": k,
         "value": float(rng.integers(0, 2))}
        for i in range(30) for m in ("new", "old") for b in budgets for k in metrics
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_saved_report_without_figures_says_why(tmp_path):
    # one budget and no cells: --out wrote no figure and the report did not say so, while
    # --help promised figures (an IR researcher's single-depth run without an evidence file)
    res = analyze(_no_cells(), treatment="new", baseline="old", n_resamples=99, rng=0)
    text = (res.save(tmp_path / "out") / "report.md").read_text()
    assert "## Figures" in text and "None drawn: a forest plot needs cells" in text
    assert not list((tmp_path / "out").glob("*.png"))
    # shown without files (to_markdown) or saved without figures: nothing to explain
    assert "None drawn" not in res.to_markdown()
    saved = res.save(tmp_path / "nofig", figures=False)
    assert "None drawn" not in (saved / "report.md").read_text()
    # with figures, no such section
    two = analyze(
        _no_cells(budgets=(128, 256)), treatment="new", baseline="old", n_resamples=99, rng=0
    )
    assert "None drawn" not in (two.save(tmp_path / "two") / "report.md").read_text()


@pytest.mark.parametrize(("family", "said"), [("per-metric-budget", True), ("all", False)])
def test_several_families_say_that_nothing_is_corrected_across_them(family, said):
    # 4 tables, each its own family of one: every verdict read "significant at α = 0.05"
    # with nothing saying that 4 tests ran uncorrected against each other
    records = _no_cells(budgets=(128, 256), metrics=("hit@2", "hit@1"))
    res = analyze(records, treatment="new", baseline="old", n_resamples=99, rng=0, family=family)
    clause = "nothing is corrected across the 4 families (4 tests)"
    assert (clause in res.family_sentence()) is said
