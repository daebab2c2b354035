"""One analysis object: :func:`analyze` records -> :class:`AnalysisResult`.

This is the Python entry to everything ``osustat analyze`` reports: for each (metric,
budget) it runs :func:`osustat.cellwise.cell_conditional`, corrects the per-cell p-values
over a *declared* family, computes the family-, verdict- and alpha-aware minimum detectable
effect and words each verdict to say exactly what happened. The result renders itself
(:meth:`~AnalysisResult.to_markdown`, :meth:`~AnalysisResult.to_json`,
:meth:`~AnalysisResult.to_frame`) and saves report + figures atomically
(:meth:`~AnalysisResult.save`). The CLI only parses options, calls :func:`analyze` and
writes.

Families (``family=``)
----------------------
The tests corrected together are the per-cell tests (T+E+, T+E-, T-E+, T-E-); the aggregate
rows are reported with their raw p and are not in any family. When no comparison has cells
(records without cells, or ``unit='episode'``) the aggregate tests are the family members.

- ``'per-metric-budget'`` (default): one family per (metric, budget) table;
- ``'per-metric'``: one family per metric across all budgets;
- ``'all'``: every test of the analysis in one family;
- a user list of groups, each a list of ``(metric, budget)`` pairs; every analysed
  (metric, budget) must be in exactly one group.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .cellwise import CellConditionalResult, CellEffect, cell_conditional
from .multitest import CORRECTIONS, adjust_pvalues
from .power import minimum_detectable_effect
from .provenance import Provenance, command_line, package_versions
from .records import paired, validate_records

__all__ = ["FAMILIES", "AnalysisResult", "Comparison", "Row", "analyze", "describe_verdict"]

FAMILIES = ("per-metric-budget", "per-metric", "all")

#: Power at which the minimum detectable effect is stated.
MDE_POWER = 0.8

_CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "sidak": "Šidák",
    "holm-sidak": "Holm–Šidák",
    "hommel": "Hommel",
    "fdr_bh": "Benjamini–Hochberg (FDR)",
    "fdr_by": "Benjamini–Yekutieli (FDR)",
    "none": "no correction",
}


def _p(p: float) -> str:
    """``.004``, ``< .001``: a p-value without its leading zero."""
    if p < 0.001:
        return "< .001"
    return f"{p:.3f}".lstrip("0") if p < 1 else "1.000"


def _peq(p: float) -> str:
    """``p = .004`` or ``p < .001``."""
    s = _p(p)
    return f"p {s}" if s.startswith("<") else f"p = {s}"


@dataclass(frozen=True)
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
    mde : float
        Minimum detectable effect at power .80 for the level this row is actually tested
        at: alpha / m for the family-wise corrections (the strictest step of Holm, Bonferroni
        level) and for FDR (its first step), alpha when uncorrected.
    mde_alpha : float
        That per-test level.
    verdict : str
        Plain words: see :func:`describe_verdict`.
    """

    label: str
    effect: CellEffect
    pvalue: float
    pvalue_adjusted: float | None
    family: str | None
    family_size: int
    mde: float
    mde_alpha: float
    verdict: str

    @property
    def exact(self) -> bool:
        return bool(self.effect.test.exact)

    @property
    def pvalue_se(self) -> float:
        """Monte Carlo standard error of the raw p (0 when exact): sqrt(p(1-p)/B)."""
        t = self.effect.test
        if t.exact:
            return 0.0
        return math.sqrt(t.pvalue * (1 - t.pvalue) / t.n_resamples)

    @property
    def pvalue_method(self) -> str:
        t = self.effect.test
        if t.exact:
            return {"exact-binomial": "exact (binomial)"}.get(t.method, "exact (enumeration)")
        return f"Monte Carlo (B = {t.n_resamples:,})"


@dataclass(frozen=True)
class Comparison:
    """One (metric, budget) table: the cell-conditional result and its rows."""

    metric: str
    budget: int
    heading: str
    result: CellConditionalResult
    rows: tuple[Row, ...]


def describe_verdict(
    effect: float,
    pvalue: float,
    pvalue_adjusted: float | None,
    *,
    alpha: float,
    correction: str,
    family_size: int,
    mde: float,
    mde_alpha: float,
) -> str:
    """Verdict words that say exactly what happened.

    Examples
    --------
    >>> from osustat.analysis import describe_verdict
    >>> describe_verdict(0.16, 0.004, 0.064, alpha=0.05, correction="holm", family_size=16,
    ...                  mde=0.2, mde_alpha=0.05 / 16)
    'not significant after Holm over m = 16 (raw p = .004)'
    >>> describe_verdict(0.3, 0.001, 0.004, alpha=0.05, correction="holm", family_size=4,
    ...                  mde=0.2, mde_alpha=0.0125)
    'helps: significant after Holm over m = 4 (p_adj = .004)'
    >>> describe_verdict(0.01, 0.6, 1.0, alpha=0.05, correction="holm", family_size=4,
    ...                  mde=0.15, mde_alpha=0.0125)
    'not significant (raw p = .600); effect below the MDE .150 at α/m'
    """
    name = _CORRECTION_NAMES.get(correction, correction)
    direction = "helps" if effect > 0 else "hurts"
    if pvalue_adjusted is None:  # outside every family: raw p
        if pvalue <= alpha:
            return f"{direction}: {_peq(pvalue)} uncorrected (not in a family)"
        return f"not significant ({_peq(pvalue)}, uncorrected)"
    corrected = correction != "none" and family_size > 1
    if pvalue_adjusted <= alpha:
        if corrected:
            return (
                f"{direction}: significant after {name} over m = {family_size} "
                f"({_peq(pvalue_adjusted).replace('p', 'p_adj', 1)})"
            )
        return f"{direction}: significant at α = {alpha:g} ({_peq(pvalue)})"
    if corrected and pvalue <= alpha:
        return f"not significant after {name} over m = {family_size} (raw {_peq(pvalue)})"
    if not math.isfinite(mde):
        return f"not significant (raw {_peq(pvalue)}); n too small to ever reach α/m"
    where = " at α/m" if corrected else ""
    if abs(effect) < mde:
        return f"not significant (raw {_peq(pvalue)}); effect below the MDE {_p(mde)}{where}"
    return f"not significant (raw {_peq(pvalue)})"


def _fmt(x: float, digits: int = 3) -> str:
    """Signed number; a value that rounds to zero prints as ``0.000`` (no ``-0.000``)."""
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    if math.isnan(x):
        return "n/a"
    s = f"{x:+.{digits}f}"
    return s[1:] if float(s) == 0 else s


@dataclass(frozen=True)
class AnalysisResult:
    """Everything :func:`analyze` computed, self-describing (see the module docstring)."""

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
    _figures: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- text --------------------------------------------------------------------------

    @property
    def budget_axis(self) -> str:
        return "depth k (documents retrieved)" if self.budget_kind == "depth" else "token budget B"

    def _where(self, budget: int) -> str:
        return f"depth {budget}" if self.budget_kind == "depth" else f"B = {budget}"

    def to_markdown(self, *, figures: dict[str, Any] | None = None) -> str:
        """The report (markdown). `figures` maps headings/keys to figure file names."""
        from osustat.reports.cellwise import render_analysis

        return render_analysis(self, figures or {})

    def family_sentence(self) -> str:
        name = _CORRECTION_NAMES.get(self.correction, self.correction)
        sizes = [len(self._members(g)) for g, _ in self.family_groups]
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
        listing = "; ".join(f"{g}: m = {len(self._members(g))}" for g, _ in self.family_groups if g)
        outside = (
            "aggregate rows are outside every family (raw p in both columns)"
            if self.family_members == "per-cell tests"
            else "there are no per-cell tests, so the aggregate tests form the families"
        )
        return (
            f"- Correction family (`{self.family}`): {desc} of the {self.family_members} "
            f"({listing}); {name} at α = {self.alpha:g}; {outside}."
        )

    def _members(self, group: str) -> list[Row]:
        return [r for c in self.comparisons for r in c.rows if r.family == group]

    # -- data --------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """A self-describing JSON-serializable dict (names, inputs + SHA-256, seed, family,
        alpha, versions, every row with its verdict)."""
        comps = []
        for c in self.comparisons:
            res = c.result
            rows = []
            for r in c.rows:
                e = r.effect
                rows.append(
                    {
                        "cell": r.label,
                        "n": e.n,
                        "fraction": e.fraction,
                        "treatment_mean": e.treatment_mean,
                        "baseline_mean": e.baseline_mean,
                        "effect": e.effect,
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
                        "mde": r.mde if math.isfinite(r.mde) else None,
                        "mde_alpha": r.mde_alpha,
                        "mde_power": MDE_POWER,
                        "verdict": r.verdict,
                    }
                )
            item: dict[str, Any] = {
                "comparison": c.heading,
                "unit": res.paired.unit,
                "metric": c.metric,
                "budget": c.budget,
                "budget_kind": self.budget_kind,
                "n_seeds": res.paired.n_seeds,
                "rows": rows,
                "excluded_cells": {k.value: v for k, v in res.excluded_cells.items()},
            }
            if res.interaction is not None:
                item["interaction"] = {
                    "method": res.interaction.method,
                    "statistic": res.interaction.statistic,
                    "pvalue": res.interaction.pvalue,
                }
            if res.break_even is not None:
                be = res.break_even
                item["break_even"] = {
                    "p_star": be.p_star,
                    "pi_tool": be.pi_tool,
                    "pi_any": be.pi_any,
                    "never_negative": be.never_negative,
                    "never_positive": be.never_positive,
                    "p_star_ci": be.ci,
                }
            if res.oracle is not None:
                o = res.oracle
                item["oracle_ceiling"] = {
                    "label": o.label,
                    "gain_over_baseline": o.gain_over_baseline,
                    "gain_over_treatment": o.gain_over_treatment,
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
                    "m": len(self._members(g)),
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
            "provenance": self.provenance.to_dict(),
            "comparisons": comps,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per (comparison, cell) with the same numbers as the report."""
        out = []
        payload = self.to_json()
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

        Returns the folder.
        """
        from osustat.reports.cellwise import write_figures

        from .provenance import PROVENANCE_FILE, atomic_output, write_json

        out = Path(out)
        with atomic_output(out, inputs_digest=self.provenance.inputs_digest, force=force) as tmp:
            names = write_figures(self, tmp) if figures else {}
            (tmp / "report.md").write_text(self.to_markdown(figures=names) + "\n", "utf-8")
            if json:
                write_json(tmp / "results.json", self.to_json())
            write_json(tmp / PROVENANCE_FILE, self.provenance.to_dict())
        return out


def _ci_method(e: CellEffect) -> str:
    clustered = e.ci.n_clusters < e.ci.n
    return f"{'cluster ' if clustered else ''}bootstrap {e.ci.method}"


# -- validation ---------------------------------------------------------------------------


def _check_options(
    correction: str, alpha: Any, level: Any, resamples: Any, bootstrap_resamples: Any, seed: Any
) -> tuple[float, float, int, int, int]:
    if correction not in (*CORRECTIONS, "none"):
        raise ValueError(
            f"`correction` must be one of {[*CORRECTIONS, 'none']}; got {correction!r}."
        )

    def prob(x: Any, name: str) -> float:
        try:
            v = float(x)
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must be a number in (0, 1); got {x!r}.") from None
        if not (0 < v < 1):
            raise ValueError(f"`{name}` must lie strictly between 0 and 1; got {x!r}.")
        return v

    def count(x: Any, name: str, low: int) -> int:
        if isinstance(x, bool) or not isinstance(x, int | np.integer) or int(x) < low:
            raise ValueError(f"`{name}` must be an integer >= {low}; got {x!r}.")
        return int(x)

    return (
        prob(alpha, "alpha"),
        prob(level, "level"),
        count(resamples, "resamples", 1),
        count(bootstrap_resamples, "bootstrap_resamples", 1),
        count(seed, "seed", 0),
    )


def _groups(
    family: str | Sequence[Sequence[tuple[str, int]]], pairs: Sequence[tuple[str, int]]
) -> list[tuple[str, list[tuple[str, int]]]]:
    if isinstance(family, str):
        if family == "per-metric-budget":
            return [(f"{m} @ {b}", [(m, b)]) for m, b in pairs]
        if family == "per-metric":
            metrics = list(dict.fromkeys(m for m, _ in pairs))
            return [(m, [(x, b) for x, b in pairs if x == m]) for m in metrics]
        if family == "all":
            return [("all", list(pairs))]
        raise ValueError(
            f"`family` must be one of {list(FAMILIES)} or a list of groups of (metric, budget) "
            f"pairs; got {family!r}."
        )
    groups: list[tuple[str, list[tuple[str, int]]]] = []
    seen: dict[tuple[str, int], int] = {}
    for g, members in enumerate(family):
        ms = []
        for item in members:
            try:
                m, b = item
                key = (str(m).strip().lower(), int(b))
            except (TypeError, ValueError):
                raise ValueError(
                    f"`family` group {g} must hold (metric, budget) pairs; got {item!r}."
                ) from None
            if key not in pairs:
                raise ValueError(
                    f"`family` group {g} names {key}, which is not analysed; analysed "
                    f"(metric, budget) pairs: {list(pairs)}."
                )
            if key in seen:
                raise ValueError(f"`family`: {key} is in groups {seen[key]} and {g}.")
            seen[key] = g
            ms.append(key)
        groups.append((f"group {g + 1}", ms))
    missing = [p for p in pairs if p not in seen]
    if missing:
        raise ValueError(f"`family` leaves out analysed (metric, budget) pairs {missing}.")
    return groups


def _records_digest(df: pd.DataFrame) -> str:
    return hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()


def analyze(
    records: pd.DataFrame | str | Path,
    *,
    treatment: str,
    baseline: str,
    metrics: Iterable[str] | str | None = None,
    budgets: Iterable[int] | int | None = None,
    unit: str = "query",
    family: str | Sequence[Sequence[tuple[str, int]]] = "per-metric-budget",
    correction: str = "holm",
    alpha: float = 0.05,
    level: float = 0.95,
    resamples: int = 10_000,
    bootstrap_resamples: int = 2_000,
    seed: int = 0,
    benchmark: str | None = None,
    budget_kind: str = "tokens",
    provenance: Provenance | None = None,
    input_notes: Sequence[str] = (),
) -> AnalysisResult:
    """Cell-conditional analysis of `treatment` vs `baseline` over metrics and budgets.

    Parameters
    ----------
    records : pandas.DataFrame or path
        Long records (:func:`osustat.validate_records`), or the path of a records file
        (read with :func:`osustat.load_records` and hashed for the provenance), e.g. from
        :func:`osustat.inputs.read_records`, :func:`osustat.records_from_trec` or
        :func:`osustat.records_from_retrievals` (``.records``).
    treatment, baseline : str
        Method names.
    metrics : str or iterable of str, optional
        Default: every metric in the records except ``tokens`` (a cost, not an outcome).
    budgets : int or iterable of int, optional
        Default: every budget in the records.
    unit : {'query', 'episode'}
    family : {'per-metric-budget', 'per-metric', 'all'} or list of groups
        The correction family (module docstring).
    correction : str
        One of :data:`osustat.multitest.CORRECTIONS` or ``'none'``.
    alpha : float
        Family-wise level (FDR level for ``fdr_*``).
    level : float
        Confidence level of the bootstrap intervals.
    resamples, bootstrap_resamples : int
        Sign-flip Monte Carlo resamples (exact tests need none) and bootstrap resamples.
    seed : int
        Master seed; each (metric, budget) gets a child of ``SeedSequence(seed)``.
    benchmark : str, optional
        Needed when the records hold several benchmarks.
    budget_kind : {'tokens', 'depth'}
        What the budget column counts (TREC cut-offs are depths): labels only.
    provenance : Provenance, optional
        The CLI passes the hashed input files; from Python the records are hashed as CSV.
    input_notes : sequence of str
        Lines describing how the records were built (shown in the report).

    Returns
    -------
    AnalysisResult

    Examples
    --------
    >>> import pandas as pd, osustat
    >>> df = pd.DataFrame({
    ...     "episode_id": [f"e{i % 6}" for i in range(24)] * 2,
    ...     "query_id": [f"q{i}" for i in range(24)] * 2,
    ...     "method": ["osu"] * 24 + ["flat"] * 24, "budget": 256, "metric": "hit@2",
    ...     "value": [1, 1, 0, 1, 1, 0] * 4 + [0, 1, 0, 1, 0, 0] * 4,
    ...     "cell": ["T+E+", "T-E-"] * 24})
    >>> res = osustat.analyze(df, treatment="osu", baseline="flat", resamples=999, seed=0)
    >>> [(r.label, r.family_size) for r in res.comparisons[0].rows]
    [('T+E+', 2), ('T-E-', 2), ('Aggregate', 0)]
    >>> res.comparisons[0].rows[0].verdict
    'helps: significant after Holm over m = 2 (p_adj = .016)'
    """
    alpha, level, resamples, bootstrap_resamples, seed = _check_options(
        correction, alpha, level, resamples, bootstrap_resamples, seed
    )
    if unit not in ("query", "episode"):
        raise ValueError(f"`unit` must be 'query' or 'episode'; got {unit!r}.")
    if budget_kind not in ("tokens", "depth"):
        raise ValueError(f"`budget_kind` must be 'tokens' or 'depth'; got {budget_kind!r}.")
    if isinstance(records, str | Path):
        from .inputs import load_records

        if provenance is None:
            provenance = Provenance.for_files([("records", records)], command=command_line())
        records = load_records(records)
    df = validate_records(records)
    if df.empty:
        raise ValueError("`records` holds no rows.")
    if benchmark is not None:
        known = sorted(df["benchmark"].unique().tolist())
        if benchmark not in known:
            raise ValueError(f"`benchmark` {benchmark!r} is not in the records; known: {known}.")
        df = df[df["benchmark"] == benchmark]
    present_metrics = sorted(df["metric"].unique().tolist())
    if metrics is None:
        ms = [m for m in present_metrics if m != "tokens"] or present_metrics
    else:
        ms = [metrics] if isinstance(metrics, str) else list(metrics)
        ms = ["".join(str(m).split()).lower() for m in ms]
        if not ms:
            raise ValueError("`metrics` is empty.")
        unknown = [m for m in ms if m not in present_metrics]
        if unknown:
            hint = ""
            if any(m.startswith("hit@") for m in unknown):
                hint = (
                    " hit@k is computed from raw retrievals or TREC runs for the k given by "
                    "`hit_k` (CLI: --hit-k), e.g. --hit-k "
                    + ",".join(m.split("@", 1)[1] for m in unknown if m.startswith("hit@"))
                    + "."
                )
            raise ValueError(
                f"`metrics` {unknown} are not in the records; metrics present: "
                f"{present_metrics}.{hint}"
            )
    present_budgets = sorted(int(b) for b in df["budget"].unique())
    if budgets is None:
        bs = present_budgets
    else:
        raw_bs = [budgets] if isinstance(budgets, int | np.integer) else list(budgets)
        bs = []
        for b in raw_bs:
            if isinstance(b, bool) or not float(b).is_integer() or int(b) <= 0:
                raise ValueError(f"`budgets` must be positive integers; got {b!r}.")
            bs.append(int(b))
        if not bs:
            raise ValueError("`budgets` is empty.")
        unknown_b = [b for b in bs if b not in present_budgets]
        if unknown_b:
            raise ValueError(
                f"`budgets` {unknown_b} are not in the records; budgets present: {present_budgets}."
            )
    pairs = [(m, b) for m in ms for b in bs]
    groups = _groups(family, pairs)

    seeds = np.random.SeedSequence(seed).spawn(len(pairs))
    raw: list[tuple[str, int, CellConditionalResult]] = []
    for k, (metric, budget) in enumerate(pairs):
        data = paired(
            df, treatment, baseline, metric=metric, budget=budget, unit=unit, benchmark=benchmark
        )
        res = cell_conditional(
            data,
            n_resamples=resamples,
            bootstrap_resamples=bootstrap_resamples,
            level=level,
            rng=np.random.default_rng(seeds[k]),
        )
        raw.append((metric, budget, res))

    has_cells = any(res.cells for _, _, res in raw)
    members_kind = "per-cell tests" if has_cells else "aggregate tests"

    def tested(res: CellConditionalResult) -> list[CellEffect]:
        return list(res.cells) if has_cells else [res.aggregate]

    adjusted: dict[tuple[int, int], tuple[float, str, int]] = {}  # (comparison, row) ->
    for g, ps in groups:
        idx = [
            (k, j)
            for k, (m, b, res) in enumerate(raw)
            if (m, b) in ps
            for j, _ in enumerate(tested(res))
        ]
        if not idx:
            continue
        pv = [tested(raw[k][2])[j].test.pvalue for k, j in idx]
        if correction == "none":
            adj = pv
        else:
            adj = adjust_pvalues(pv, method=correction, alpha=alpha).pvalues_adjusted.tolist()
        for (k, j), p in zip(idx, adj, strict=True):
            adjusted[(k, j)] = (min(float(p), 1.0), g, len(idx))

    comparisons = []
    exclusions: list[tuple[str, int]] = []
    for k, (metric, budget, res) in enumerate(raw):
        where = f"depth {budget}" if budget_kind == "depth" else f"B = {budget}"
        heading = f"{metric} at {where}"
        members = tested(res)
        rows = []
        for e in (*res.cells, res.aggregate):
            pos = next((i for i, x in enumerate(members) if x is e), None)
            p_adj: float | None = None
            fam: str | None = None
            m = 0
            if pos is not None:
                p_adj, fam, m = adjusted[(k, pos)]
            mde_alpha = alpha / m if (m > 1 and correction != "none") else alpha
            sd = float(np.std(_diffs(res, e), ddof=1)) if e.n >= 2 else float("nan")
            mde = (
                minimum_detectable_effect(sd, e.n, alpha=mde_alpha, power=MDE_POWER)
                if e.n >= 2 and math.isfinite(sd)
                else float("inf")
            )
            rows.append(
                Row(
                    label="Aggregate" if e.cell is None else e.cell.value,
                    effect=e,
                    pvalue=e.test.pvalue,
                    pvalue_adjusted=p_adj,
                    family=fam,
                    family_size=m,
                    mde=mde,
                    mde_alpha=mde_alpha,
                    verdict=describe_verdict(
                        e.effect,
                        e.test.pvalue,
                        p_adj,
                        alpha=alpha,
                        correction=correction,
                        family_size=m,
                        mde=mde,
                        mde_alpha=mde_alpha,
                    ),
                )
            )
        for c, n in res.excluded_cells.items():
            exclusions.append(
                (
                    f"{res.paired.unit} units of cell {c.value} in {heading} (fewer than 2: no "
                    "per-cell test; kept in the aggregate)",
                    n,
                )
            )
        comparisons.append(Comparison(metric, budget, heading, res, tuple(rows)))
    if provenance is None:
        provenance = Provenance(
            command=command_line(),
            inputs=(
                (
                    "records (in-memory DataFrame, SHA-256 of its CSV)",
                    "<DataFrame>",
                    _records_digest(df),
                ),
            ),
            versions=package_versions(),
        )
    provenance = Provenance(
        command=provenance.command,
        inputs=provenance.inputs,
        seeds={"master": seed, **dict(provenance.seeds)},
        resamples={
            "sign-flip (Monte Carlo)": resamples,
            "bootstrap": bootstrap_resamples,
            **dict(provenance.resamples),
        },
        exclusions=(*provenance.exclusions, *exclusions),
        versions=provenance.versions,
    )
    return AnalysisResult(
        treatment=treatment,
        baseline=baseline,
        unit=unit,
        benchmark=benchmark,
        family=family if isinstance(family, str) else "user",
        family_groups=tuple((g, tuple(ps)) for g, ps in groups),
        correction=correction,
        alpha=alpha,
        level=level,
        resamples=resamples,
        bootstrap_resamples=bootstrap_resamples,
        seed=seed,
        budget_kind=budget_kind,
        comparisons=tuple(comparisons),
        provenance=provenance,
        input_notes=tuple(input_notes),
        family_members=members_kind,
    )


def _diffs(res: CellConditionalResult, e: CellEffect) -> np.ndarray:
    d = res.paired.differences
    if e.cell is None or res.paired.cells is None:
        return d
    mask = np.fromiter((x is e.cell for x in res.paired.cells), dtype=bool, count=d.size)
    return d[mask]
