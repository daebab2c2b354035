"""The report sections for user retrievers (``--retriever``): means beside the paper's methods
(:func:`render_user_methods`) and the paired tests against them (:func:`render_user_tests`,
computed by ``analyses.driver.user_retriever_tests``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import pandas as pd

from osustat.formatting import fmt_interval, fmt_p, fmt_signed

from ._style import IntervalTest, interval_test_notes, md_table

__all__ = ["render_user_methods", "render_user_tests"]


def render_user_methods(
    records: pd.DataFrame,
    names: Sequence[str],
    *,
    references: Sequence[str],
    metrics: Sequence[str] = ("hit@2", "recall"),
) -> str:
    """Markdown section comparing user retrievers `names` with `references` (means)."""
    if not names:
        return ""
    shown = [*names, *(r for r in references if r not in names)]
    sub = records[records["method"].isin(shown) & records["metric"].isin(metrics)]
    lines = [
        "## Your retrievers",
        "",
        "User retrievers run beside the paper's methods on the same episodes, queries and "
        f"budgets: {', '.join(f'`{n}`' for n in names)}. Means per query (n = queries); the "
        "cell-conditional paired test of each benchmark is the command under its table.",
    ]
    baseline = references[0] if references else names[0]
    rank = {m: k for k, m in enumerate(shown)}
    for bench, frame in sub.groupby("benchmark", sort=True):
        table = frame.groupby(["method", "budget", "metric"])["value"].agg(["mean", "size"])
        present = [m for m in metrics if m in set(frame["metric"])]
        lines += ["", f"**{bench}**", ""]
        lines.append("| method | budget | " + " | ".join(present) + " | n |")
        lines.append("|---|---|" + "---|" * len(present) + "---|")
        keys = sorted({(m, b) for m, b, _ in table.index}, key=lambda k: (rank[k[0]], k[1]))
        for method, budget in keys:
            cells = [
                f"{table.loc[(method, budget, m), 'mean']:.3f}"
                if (method, budget, m) in table.index
                else "-"
                for m in present
            ]
            n = int(table.loc[(method, budget, present[0]), "size"])
            bold = f"**{method}**" if method in names else method
            lines.append(f"| {bold} | {budget} | " + " | ".join(cells) + f" | {n} |")
        args = ["analyze", "records.csv", "--treatment", names[0], "--baseline", baseline]
        command = shlex.join(["osustat", *args, "--benchmark", str(bench)])
        lines += ["", f"Paired test: `{command}`"]
    return "\n".join(lines)


def render_user_tests(
    table: pd.DataFrame, skipped: pd.DataFrame, *, n_resamples: int, level: float = 0.95
) -> str:
    """Markdown: every user retriever minus each reference method, paired per query, and the
    count and list of the (benchmark, budget, metric) groups that could not be tested."""
    lines = [
        "### Paired tests against the paper's methods",
        "",
        "Per benchmark, budget and metric: mean paired difference (your retriever − reference) "
        f"over the queries both answered (seeds averaged per query), {level:.0%} bootstrap CI "
        "clustered "
        f"by episode (expanded for few episodes), two-sided paired sign-flip p "
        f"({n_resamples:,} resamples or exact), and Holm's adjustment over all tests of the "
        "same retriever. `user_retriever_tests.csv` holds the table.",
        "",
    ]
    if table.empty:
        lines.append("No reference method shares queries with your retrievers in these records.")
    else:
        lines += _tests_table(table) + _agreement(table, level)
    lines += ["", *_skipped_lines(skipped)]
    return "\n".join(lines)


def _tests_table(table: pd.DataFrame) -> list[str]:
    rows = [
        [
            f"**{r.retriever}**",
            r.reference,
            r.benchmark,
            str(r.budget),
            r.metric,
            str(r.n),
            fmt_signed(r.effect),
            fmt_interval(r.ci_low, r.ci_high, missing="-"),
            fmt_p(r.p, missing="not testable (n = 1)" if r.n < 2 else "-"),
            fmt_p(r.p_holm, missing="-"),
        ]
        for r in table.itertuples(index=False)
    ]
    header = ["retriever", "reference", "benchmark", "budget", "metric", "n", "effect", "CI"]
    return md_table([*header, "p", "p (Holm)"], rows)


def _agreement(table: pd.DataFrame, level: float) -> list[str]:
    """The rows whose bootstrap interval and p disagree about 0, explained as ``analyze``
    explains them (the interval inverting the test; the smallest p it can reach): rows
    :func:`osustat.analyses.driver.user_retriever_tests` gave an inverted interval."""
    if "test_ci_low" not in table:
        return []
    rows = [
        IntervalTest(
            f"{r.retriever} − {r.reference}, {r.benchmark}, budget {r.budget}, {r.metric} "
            f"({r.episodes} episode{'s' if r.episodes != 1 else ''})",
            (r.ci_low, r.ci_high),
            r.p,
            (r.test_ci_low, r.test_ci_high),
            r.min_p,
        )
        for r in table.itertuples(index=False)
        if r.test_ci_low == r.test_ci_low  # not NaN: the two disagree
    ]
    return interval_test_notes(
        rows,
        level=level,
        interval="bootstrap interval (resampling whole episodes)",
        test="sign-flip test beside it",
    )


def _skipped_lines(skipped: pd.DataFrame) -> list[str]:
    n = len(skipped)
    if not n:
        return ["Skipped groups: 0 (every benchmark, budget and metric was shared)."]
    lines = [
        f"Skipped groups: {n} (retriever, reference, benchmark, budget, metric) groups not "
        "tested because the two methods do not share them (`user_retriever_skipped.csv`):",
        "",
    ]
    rows = [
        [r.retriever, r.reference, str(r.benchmark), str(r.budget), r.metric, r.reason]
        for r in skipped.itertuples(index=False)
    ]
    header = ["retriever", "reference", "benchmark", "budget", "metric", "reason"]
    return lines + md_table(header, rows)
