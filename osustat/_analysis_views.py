"""Compact views of an :class:`~osustat.analysis_result.AnalysisResult`: the short ``repr``,
the notebook table (markdown / HTML) and the LaTeX table for papers.

These are summaries of numbers the result already holds (one line per reported row); the
full report stays :meth:`~osustat.analysis_result.AnalysisResult.to_markdown`. Significance
marks are :func:`osustat.stars` of the corrected p (the raw p for rows outside every family).
"""

from __future__ import annotations

import html
import math
from typing import Any

from .multitest import stars

# The result and its rows are typed Any here: this module is imported by
# osustat.analysis_result, and importing it back (even for type checking) is a cycle.
AnalysisResult = Any
Row = Any

__all__ = ["html_table", "latex_table", "markdown_table", "short_repr"]

_HEADER = ("comparison", "cell", "n", "treatment", "baseline", "Δ", "W/T/L", "d_z", "CLES", "p")


def _num(x: float, digits: int = 3) -> str:
    if not math.isfinite(x):
        return "n/a"
    s = f"{x:.{digits}f}"
    return s.lstrip("-") if float(s) == 0 else s


def _p(row: Row) -> float:
    return row.pvalue_adjusted if row.pvalue_adjusted is not None else row.pvalue


def _pfmt(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}"


def _cells(res: AnalysisResult) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for c in res.comparisons:
        for r in c.rows:
            e = r.effect
            p = _p(r)
            out.append(
                (
                    c.heading,
                    r.label,
                    str(e.n),
                    _num(e.treatment_mean),
                    _num(e.baseline_mean),
                    _num(e.effect) + stars(p),
                    f"{e.wins}/{e.ties}/{e.losses}",
                    _num(e.effect_size_dz, 2),
                    _num(e.cles),
                    _pfmt(p),
                )
            )
    return out


def short_repr(res: AnalysisResult) -> str:
    """One line: the methods, the grid, the family and the seed."""
    n_tests = sum(r.family is not None for c in res.comparisons for r in c.rows)
    metrics = len({c.metric for c in res.comparisons})
    budgets = len({c.budget for c in res.comparisons})
    return (
        f"<AnalysisResult {res.treatment!r} vs {res.baseline!r}: {metrics} metric(s) × "
        f"{budgets} budget(s), {len(res.comparisons)} comparisons, {n_tests} tests in "
        f"{len(res.family_groups)} famil{'y' if len(res.family_groups) == 1 else 'ies'} "
        f"({res.correction}, α = {res.alpha:g}), seed {res.seed}>"
    )


def _caption(res: AnalysisResult) -> str:
    return (
        f"{res.treatment} vs {res.baseline}. Δ = treatment − baseline with marks on the "
        f"{'corrected' if res.correction != 'none' else 'raw'} p ({res.correction}; "
        ". ≤ .10, * ≤ .05, ** ≤ .01, *** ≤ .001); W/T/L = units the treatment wins, ties, "
        "loses; d_z = mean Δ / SD of Δ; CLES = (W + T/2) / n."
    )


def markdown_table(res: AnalysisResult) -> str:
    """The notebook view: one markdown table line per reported row, and a caption."""
    lines = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in _cells(res)]
    return f"**{short_repr(res)[1:-1]}**\n\n" + "\n".join(lines) + f"\n\n*{_caption(res)}*\n"


def html_table(res: AnalysisResult) -> str:
    """The same table as HTML (every cell escaped)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in _HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>" for r in _cells(res)
    )
    return (
        f"<p><b>{html.escape(short_repr(res)[1:-1])}</b></p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"<p><i>{html.escape(_caption(res))}</i></p>"
    )


_TEX = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}"}
_TEX.update({"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"})


def _tex(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)


def latex_table(res: AnalysisResult | list[AnalysisResult], *, digits: int = 3) -> str:
    """A ``tabular`` (booktabs) for a paper: one line per (comparison, cell), the two
    methods' means with the better one in bold, Δ with its significance marks as a
    superscript, W/T/L, d_z, CLES and the p the marks use.

    Several results (one per method pair of a multi-method analysis) give one table with
    the treatment and baseline named on every line. Ties between the two means bold
    neither. Marks follow :func:`osustat.stars` on the corrected p (raw p outside every
    family).
    """
    parts = res if isinstance(res, list) else [res]
    several = len(parts) > 1
    if several:
        cols, head = "llllrrrrcrrr", r"Treatment & Baseline & Comparison & Cell & $n$ & "
        head += r"treatment & baseline & $\Delta$ & W/T/L & $d_z$ & CLES & $p$ \\"
    else:
        t_name, b_name = _tex(parts[0].treatment), _tex(parts[0].baseline)
        cols = "llrrrrcrrr"
        head = (
            f"Comparison & Cell & $n$ & {t_name} & {b_name} & $\\Delta$ & W/T/L & $d_z$ & CLES & "
            r"$p$ \\"
        )
    lines = [rf"\begin{{tabular}}{{{cols}}}", r"\toprule", head, r"\midrule"]
    for part in parts:
        who = f"{_tex(part.treatment)} & {_tex(part.baseline)} & " if several else ""
        for c in part.comparisons:
            for r in c.rows:
                lines.append(who + _latex_line(c.heading, r, digits))
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _latex_line(heading: str, r: Row, digits: int) -> str:
    e = r.effect
    t, b = f"{e.treatment_mean:.{digits}f}", f"{e.baseline_mean:.{digits}f}"
    if float(t) > float(b):
        t = rf"\textbf{{{t}}}"
    elif float(b) > float(t):
        b = rf"\textbf{{{b}}}"
    p = _p(r)
    mark = stars(p)
    delta = _num(e.effect, digits) + (f"$^{{{mark}}}$" if mark else "")
    p_text = "$<$.001" if p < 0.001 else f"{p:.3f}"
    return (
        f"{_tex(heading)} & {_tex(r.label)} & {e.n} & {t} & {b} & {delta} & "
        f"{e.wins}/{e.ties}/{e.losses} & {_num(e.effect_size_dz, 2)} & "
        f"{_num(e.cles)} & {p_text} \\\\"
    )
