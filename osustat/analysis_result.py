"""The result of :func:`osustat.analyze`: rows, comparisons and their JSON / markdown.

:class:`AnalysisResult` is self-describing: every :class:`Row` carries its raw and corrected
p, its correction family, its minimum detectable effect (with the method that computed it)
and its verdict in words (:func:`describe_verdict`). It gives its data
(:meth:`~AnalysisResult.to_json` text, :meth:`~AnalysisResult.to_dict`,
:meth:`~AnalysisResult.to_frame`, :meth:`~AnalysisResult.to_latex`, notebook views); the
conveniences
:meth:`~AnalysisResult.to_markdown` and :meth:`~AnalysisResult.save` (report + figures,
atomically) go through the renderers registered in :mod:`osustat.renderers`, so the core never
imports ``reports``. The computation is in :mod:`osustat.analysis`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from osustat.power import PowerValue

from .cellwise import MDE_POWER, CellConditionalResult, CellEffect
from .provenance import Provenance
from .reproduction import ReproductionMeasures
from .wording import CORRECTION_NAMES, not_estimable, underpowered

__all__ = ["AnalysisResult", "Comparison", "Row"]


@dataclass(frozen=True, kw_only=True)
class Row:
    """One reported row: a cell (or the aggregate) of one (metric, budget) comparison.

    Attributes
    ----------
    label : str
        ``'T+E+'``, …, or ``'Aggregate'``.
    effect : CellEffect
        The statistics (:class:`osustat.cellwise.CellEffect`).
    pvalue : float
        Raw p of the paired sign-flip test.
    pvalue_adjusted : float or None
        Corrected p within `family`; None for rows outside every family (aggregates when
        cells exist).
    family : str or None
        Name of the family this row was corrected in.
    family_size : int
        m, the number of tests in that family (0 outside every family).
    mde : PowerValue
        Minimum detectable effect at power .80 of the test this row runs, at the level it is
        actually tested at: the correction's strictest step,
        :func:`osustat.multitest.strictest_level` (alpha / m for Holm, Bonferroni, Hommel,
        Benjamini-Hochberg and -- a conservative bound -- the Westfall-Young step-down;
        Sidak's level for Sidak and Holm-Sidak; alpha / (m H_m) for Benjamini-Yekutieli),
        alpha when uncorrected.
        Computed from the row's differences by :func:`osustat.minimum_detectable_effect`
        (``mde.method``: exact binomial for 0/1 differences, ``'empirical'`` -- the test
        on data sets resampled from the row's differences, ties kept -- otherwise); infinite
        when no effect of that kind reaches that power (:data:`UNDERPOWERED`).
    mde_alpha : float
        That per-test level.
    verdict : str
        Plain words: see :func:`describe_verdict`.
    reproduction : ReproductionMeasures or None
        Effect ratio and ΔRI against the original (:func:`osustat.analyze`'s `reference` or
        `paper_means`), None when no original was given for this row.
    """

    label: str
    effect: CellEffect
    pvalue: float
    pvalue_adjusted: float | None
    family: str | None
    family_size: int
    mde: PowerValue
    mde_alpha: float
    verdict: str
    reproduction: ReproductionMeasures | None = None

    @property
    def mde_method(self) -> str:
        """``'exact-binomial'``, ``'empirical'``, ``'simulation'`` or ``'normal'``."""
        return str(getattr(self.mde, "method", "normal"))

    @property
    def exact(self) -> bool:
        return bool(self.effect.test.exact)

    @property
    def pvalue_se(self) -> float:
        """Monte Carlo standard error of the raw p (0 when exact): sqrt(p(1-p)/B)."""
        return self.effect.test.pvalue_se

    @property
    def pvalue_method(self) -> str:
        t = self.effect.test
        if t.exact:
            return {"exact-binomial": "exact (binomial)"}.get(t.method, "exact (enumeration)")
        return f"Monte Carlo (B = {t.n_resamples:,})"


@dataclass(frozen=True, kw_only=True, eq=False)
class Comparison:
    """One (metric, budget) table: the cell-conditional result and its rows (compared by
    identity: the result holds arrays)."""

    metric: str
    budget: int
    heading: str
    result: CellConditionalResult
    rows: tuple[Row, ...]

    def __repr__(self) -> str:
        return f"<Comparison {self.heading}: {len(self.rows)} rows>"


@dataclass(frozen=True, kw_only=True, eq=False)
class AnalysisResult:
    """Everything :func:`osustat.analyze` computed, self-describing (see the module
    docstring; compared by identity: it holds arrays)."""

    treatment: str
    baseline: str
    unit: str
    benchmark: str | None
    family: str
    family_groups: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    correction: str
    alpha: float
    level: float
    resamples: int
    bootstrap_resamples: int
    seed: int
    budget_kind: str
    comparisons: tuple[Comparison, ...]
    provenance: Provenance
    input_notes: tuple[str, ...] = ()
    family_members: str = "per-cell tests"
    methods_not_compared: tuple[str, ...] = ()
    _figures: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- text --------------------------------------------------------------------------

    @property
    def budget_axis(self) -> str:
        return "depth k (documents retrieved)" if self.budget_kind == "depth" else "token budget B"

    def to_markdown(self, *, figures: dict[str, Any] | None = None) -> str:
        """The report (markdown). `figures` maps headings/keys to figure file names (a
        saved report's; an empty map says that none could be drawn)."""
        from .renderers import renderer

        return str(renderer("analysis-markdown")(self, figures))

    def family_sentence(self) -> str:
        name = CORRECTION_NAMES.get(self.correction, self.correction)
        sizes = [self.family_size(g) for g, _ in self.family_groups]
        if not any(sizes):
            return (
                "- Correction family: none (no tests to correct); every p is reported raw and "
                "named as such."
            )
        desc = {
            "per-metric-budget": "one family per (metric, budget) table",
            "per-metric": "one family per metric across budgets",
            "all": "one family of every test of this report",
        }.get(self.family, "the user's families")
        listing = "; ".join(
            f"{g}: m = {self.family_size(g)}"
            if self.family_size(g)
            else f"{g}: no per-cell test, its aggregate alone"
            for g, _ in self.family_groups
            if g
        )
        outside = (
            "aggregate rows are outside every family (their p is raw; the corrected column shows —)"
            if self.family_members == "per-cell tests"
            else "there are no per-cell tests, so the aggregate tests form the families"
        )
        tested = [m for m in sizes if m]
        across = (
            f"; nothing is corrected across the {len(tested)} families ({sum(tested)} tests): "
            "each holds α on its own, so a report of many tables expects some false "
            "rejections among them (`--family per-metric` or `all`, Python `family=`, "
            "corrects across tables)"
            if len(tested) > 1
            else ""
        )
        return (
            f"- Correction family (`{self.family}`): {desc} of the {self.family_members} "
            f"({listing}); {name} at α = {self.alpha:g}; {outside}{across}."
        )

    def _members(self, group: str) -> list[Row]:
        return [r for c in self.comparisons for r in c.rows if r.family == group]

    def family_size(self, group: str) -> int:
        """m of a family: its tests over every method pair of the analysis (a
        :class:`MultiAnalysisResult`'s families span the pairs), 0 for an empty one."""
        return max((r.family_size for r in self._members(group)), default=0)

    # -- data --------------------------------------------------------------------------

    def __repr__(self) -> str:
        from ._analysis_views import short_repr

        return short_repr(self)

    def _repr_markdown_(self) -> str:
        """Notebook view: one table line per row (Δ with marks, W/T/L, d_z, CLES, p)."""
        from ._analysis_views import markdown_table

        return markdown_table(self)

    def _repr_html_(self) -> str:
        from ._analysis_views import html_table

        return html_table(self)

    def to_latex(self, *, digits: int = 3) -> str:
        """A booktabs ``tabular`` for a paper: the better mean in bold, Δ with its
        significance marks (:func:`osustat.stars` of the corrected p), W/T/L, d_z, CLES, p."""
        from ._analysis_views import latex_table

        return latex_table(self, digits=digits)

    def to_json(self) -> str:
        """The results as JSON text: :meth:`to_dict` with NaN/inf as null."""
        from .provenance import json_text

        return json_text(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """A self-describing JSON-serializable dict (names, inputs + SHA-256, seed, family,
        alpha, versions, every row with its verdict, W/T/L and effect sizes)."""
        comps = []
        for c in self.comparisons:
            res = c.result
            rows = [_row_dict(r) for r in c.rows]
            item: dict[str, Any] = {
                "comparison": c.heading,
                "unit": res.paired.unit,
                "metric": c.metric,
                "budget": c.budget,
                "budget_kind": self.budget_kind,
                "n_seeds": res.paired.n_seeds,
                "n_queries": res.paired.n_queries,
                "rows": rows,
                "excluded_cells": {k.value: v for k, v in res.excluded_cells.items()},
            }
            if res.interaction is not None:
                item["interaction"] = _pick(res.interaction, "method", "statistic", "pvalue")
            if res.break_even is not None:
                be = res.break_even
                item["break_even"] = {
                    **_pick(be, "p_star", "pi_tool", "pi_any", "never_negative", "never_positive"),
                    "p_star_ci": None if be.ci is None else [be.ci.low, be.ci.high],
                }
            if res.oracle is not None:
                o = res.oracle
                item["oracle_ceiling"] = {
                    **_pick(o, "label", "gain_over_baseline", "gain_over_treatment"),
                    "routed_cells": [x.value for x in o.routed_cells],
                }
            comps.append(item)
        return {
            "schema": "osustat.analysis/1",
            "treatment": self.treatment,
            "baseline": self.baseline,
            "benchmark": self.benchmark,
            "unit": self.unit,
            "metrics": sorted({c.metric for c in self.comparisons}),
            "budgets": sorted({c.budget for c in self.comparisons}),
            "budget_kind": self.budget_kind,
            "family": self.family,
            "families": {
                g: {
                    "members": [list(m) for m in ms],
                    "m": self.family_size(g),
                }
                for g, ms in self.family_groups
            },
            "family_members": self.family_members,
            "correction": self.correction,
            "alpha": self.alpha,
            "level": self.level,
            "mde_power": MDE_POWER,
            "seed": self.seed,
            "resamples": self.resamples,
            "bootstrap_resamples": self.bootstrap_resamples,
            "input_notes": list(self.input_notes),
            "methods_not_compared": list(self.methods_not_compared),
            "provenance": self.provenance.to_dict(),
            "comparisons": comps,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per (comparison, cell) with the same numbers as the report."""
        out = []
        payload = self.to_dict()
        for item in payload["comparisons"]:
            for row in item["rows"]:
                flat = {k: v for k, v in row.items() if k != "ci"}
                flat.update(ci_low=row["ci"][0], ci_high=row["ci"][1])
                out.append(
                    {
                        "comparison": item["comparison"],
                        "unit": item["unit"],
                        "metric": item["metric"],
                        "budget": item["budget"],
                        **flat,
                    }
                )
        return pd.DataFrame(out)

    def save(
        self, out: str | Path, *, force: bool = False, json: bool = True, figures: bool = True
    ) -> Path:
        """Write ``report.md``, ``results.json``, ``provenance.json`` and the figures (SVG
        + PNG at 150 dpi) into `out`, atomically (:func:`osustat.provenance.atomic_output`).

        An existing non-empty `out` is replaced only when it holds the same run: the same
        inputs and the same :meth:`run_options` (and, between two command-line reports, the
        same command line); a different run is refused, naming what differs, unless
        `force`. Returns the folder.
        """
        from .provenance import PROVENANCE_FILE, write_json
        from .renderers import renderer

        out = Path(out)
        prov = replace(self.provenance, options=self.run_options())
        with prov.atomic_output(out, force=force) as tmp:
            names = renderer("analysis-figures")(self, tmp) if figures else None
            (tmp / "report.md").write_text(self.to_markdown(figures=names) + "\n", "utf-8")
            if json:
                write_json(tmp / "results.json", self.to_dict())
            write_json(tmp / PROVENANCE_FILE, prov.to_dict())
        return out

    def run_options(self) -> dict[str, Any]:
        """What determines this run beside its inputs, as recorded in a saved folder's
        ``provenance.json`` (``options``) and compared before that folder is replaced."""
        return analysis_options(self, [(self.treatment, self.baseline)], self.family_groups)


def analysis_options(
    first: AnalysisResult, pairs: Any, family_groups: Any, **shared: Any
) -> dict[str, Any]:
    """The options of an analysis of `pairs` whose first pair's result is `first`
    (:meth:`AnalysisResult.run_options`; `shared` overrides what the pairs share). A named
    family's members follow from the pairs, metrics and budgets: only a user's are listed."""
    user = shared.get("family", first.family) == "user"
    return {
        "pairs": [list(p) for p in pairs],
        "metrics": sorted({c.metric for c in first.comparisons}),
        "budgets": sorted({c.budget for c in first.comparisons}),
        "budget_kind": first.budget_kind,
        "unit": first.unit,
        "benchmark": first.benchmark,
        "family": first.family,
        "families": [[g, [list(m) for m in ms]] for g, ms in family_groups] if user else None,
        "correction": first.correction,
        "alpha": first.alpha,
        "level": first.level,
        "seed": first.seed,
        "resamples": first.resamples,
        "bootstrap_resamples": first.bootstrap_resamples,
        **shared,
    }


def _pick(obj: Any, *names: str) -> dict[str, Any]:
    """The named attributes of a result as JSON keys of the same names."""
    return {name: getattr(obj, name) for name in names}


def _row_dict(r: Row) -> dict[str, Any]:
    """One row of :meth:`AnalysisResult.to_dict`'s comparisons (its ER/ΔRI keys only where an
    original is given)."""
    e = r.effect
    out: dict[str, Any] = {
        "cell": r.label,
        "n": e.n,
        "fraction": e.fraction,
        "treatment_mean": e.treatment_mean,
        "baseline_mean": e.baseline_mean,
        "effect": e.effect,
        "wins": e.wins,
        "ties": e.ties,
        "losses": e.losses,
        "effect_size_dz": _finite(e.effect_size_dz),
        "cles": e.cles,
        "ci": [e.ci.low, e.ci.high],
        "ci_level": e.ci.level,
        "ci_method": _ci_method(e),
        "pvalue": r.pvalue,
        "pvalue_exact": r.exact,
        "pvalue_method": e.test.method,
        "pvalue_mc_se": r.pvalue_se,
        "n_resamples": None if r.exact else e.test.n_resamples,
        "pvalue_adjusted": r.pvalue_adjusted,
        "family": r.family,
        "family_size": r.family_size,
        "contribution": e.contribution,
        "mde": None if _mde_note(r.mde) else float(r.mde),
        "mde_method": r.mde_method,
        "mde_note": _mde_note(r.mde),
        "mde_range": _mde_range(r.mde),
        "mde_p_nonzero": getattr(r.mde, "p_nonzero", None),
        "mde_simulations": getattr(r.mde, "n_simulations", 0) or None,
        "mde_alpha": r.mde_alpha,
        "mde_power": MDE_POWER,
        "verdict": r.verdict,
    }
    if r.reproduction is not None:
        out.update(r.reproduction.to_dict())
    return out


def _mde_note(mde: float) -> str | None:
    """Why a row's MDE is not one number (JSON ``mde`` null): no effect reaches the power,
    or too few differences to estimate it (``mde_range`` then holds its range)."""
    if getattr(mde, "mde_range", None) is not None:  # first: a range's value is its upper end
        return not_estimable(mde)
    return underpowered(mde) if not math.isfinite(mde) else None


def _mde_range(mde: float) -> list[float] | None:
    ends = getattr(mde, "mde_range", None)
    return None if ends is None else [float(ends[0]), float(ends[1])]


def _finite(x: float) -> float | None:
    """JSON has no NaN: an undefined value (d_z of constant differences) is null."""
    return float(x) if math.isfinite(x) else None


def _ci_method(e: CellEffect) -> str:
    clustered = e.ci.n_clusters < e.ci.n
    return f"{'cluster ' if clustered else ''}bootstrap {e.ci.method}"
