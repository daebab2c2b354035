"""One analysis object: :func:`analyze` records -> :class:`AnalysisResult`.

This is the Python entry to everything ``osustat analyze`` reports: for each (metric,
budget) it runs :func:`osustat.cellwise.cell_conditional`, corrects the per-cell p-values
over a *declared* family, computes the family-, verdict- and alpha-aware minimum detectable
effect and words each verdict to say exactly what happened. The result renders itself
(:meth:`~AnalysisResult.to_markdown`, :meth:`~AnalysisResult.to_json` (text),
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

Several method pairs (``treatment``/``baseline`` lists or ``all_pairs``): the named families
span every pair (m counts all pairs' tests), and a user group item may also be
``(treatment, baseline, metric, budget)``, one pair's table; the result is a
:class:`~osustat.analysis_multi.MultiAnalysisResult`. ``correction='maxt'`` / ``'minp'``
resample each family with one sign per unit shared by all its tests
(:mod:`osustat.stepdown`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from osustat.power import PowerValue
from osustat.schema import ValidatedRecords, validate_records
from osustat.wording import describe_verdict

from ._analysis_options import (
    BUDGET_KINDS,
    check_options,
    family_groups,
    method_pairs,
    pair_label,
    select,
    self_pairs,
    table_heading,
)
from ._analysis_reproduction import check_paper_means, with_reproduction
from ._deprecation import renamed_keywords
from ._validation import list_some
from .analysis_multi import MultiAnalysisResult
from .analysis_result import AnalysisResult, Comparison, Row
from .cells import CELLS, cell_codes
from .cellwise import (
    MDE_SEED,
    CellConditionalResult,
    CellEffect,
    cell_conditional,
    search_mde,
)
from .io.join import ANSWER_BUDGET
from .io.reading import Loaded
from .multitest import adjust_pvalues, strictest_level
from .provenance import Provenance, command_line, package_versions
from .records import paired
from .stepdown import STEPDOWN_METHODS, westfall_young
from .streams import stream_seed

__all__ = ["analyze"]


def _records_digest(df: pd.DataFrame) -> str:
    return hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()


@renamed_keywords(resamples="n_resamples", seed="rng")
def analyze(
    records: pd.DataFrame | str | Path | Loaded,
    *,
    treatment: str | Sequence[str] | None = None,
    baseline: str | Sequence[str] | None = None,
    all_pairs: bool = False,
    metrics: Iterable[str] | str | None = None,
    budgets: Iterable[int] | int | None = None,
    unit: str = "query",
    family: str | Sequence[Sequence[Any]] = "per-metric-budget",
    correction: str = "holm",
    alpha: float = 0.05,
    level: float = 0.95,
    n_resamples: int = 10_000,
    bootstrap_resamples: int = 2_000,
    rng: int = 0,
    benchmark: str | None = None,
    budget_kind: str | None = None,
    provenance: Provenance | None = None,
    input_notes: Sequence[str] = (),
    reference: pd.DataFrame | str | Path | None = None,
    paper_means: Any = None,
    workers: Callable[[Callable[[Any], Any], Iterable[Any]], Iterable[Any]] | None = None,
) -> AnalysisResult | MultiAnalysisResult:
    """Cell-conditional analysis of `treatment` vs `baseline` over metrics and budgets.

    Parameters
    ----------
    records : pandas.DataFrame, path or Loaded
        Long records (:func:`osustat.validate_records`), or the path of a records file
        (read with :func:`osustat.load_records` and hashed for the provenance), or what
        :func:`osustat.records_from_trec` or :func:`osustat.records_from_retrievals` return
        (a :class:`~osustat.io.reading.Loaded`): then, as in the CLI, the report's header
        says how the records were built, names every query the loader left out (the
        provenance counts them) and calls TREC cut-offs depths. Their ``.records`` alone
        carry none of that.
    treatment, baseline : str or list of str
        Method names. Two names give one comparison and an :class:`AnalysisResult` (as
        always); a list on either side compares every treatment with every baseline and
        gives a :class:`MultiAnalysisResult` whose families span the method pairs.
    all_pairs : bool
        Compare every pair of the methods named in `treatment` and `baseline` (the first
        named is the treatment), or of every method in the records when none is named; gives
        a :class:`MultiAnalysisResult`.
    metrics : str or iterable of str, optional
        Default: every metric in the records except ``tokens`` (a cost, not an outcome)
        that every compared method has at the budget; the pairs left out are named in
        ``input_notes``.
    budgets : int or iterable of int, optional
        Default: every budget in the records.
    unit : {'query', 'episode'}
        ``'episode'`` averages an episode's queries first; it tests no cell (a cell labels a
        query), and when the compared rows carry cells the report's header says so ("Cells
        not tested", also in ``input_notes``; the CLI repeats it on stderr).
    family : {'per-metric-budget', 'per-metric', 'all'} or list of groups
        The correction family (module docstring).
    correction : str
        One of :data:`osustat.multitest.CORRECTIONS`, ``'maxt'`` or ``'minp'`` (Westfall–Young
        step-down over one sign-flip matrix shared by every test of the family:
        :func:`osustat.stepdown.westfall_young`), or ``'none'``.
    alpha : float
        Family-wise level (FDR level for ``fdr_*``).
    level : float
        Confidence level of the bootstrap intervals.
    n_resamples, bootstrap_resamples : int
        Sign-flip Monte Carlo resamples (default 10,000; exact tests need none) and bootstrap
        resamples.
    rng : int
        Master seed (default 0; an integer, as the provenance records it): each (metric,
        budget) draws from its own stream named by them
        (:func:`osustat.streams.stream_seed`), so a row's numbers do not depend on which
        other metrics or budgets are analysed with it.
    benchmark : str, optional
        Needed when the records hold several benchmarks. The result's ``benchmark`` (JSON
        key ``benchmark``) is the benchmark analysed: the one named, else the records' only
        one (``'default'`` for records without a ``benchmark`` column).
    budget_kind : {None, 'tokens', 'depth', 'answers'}
        What the budget column counts (TREC cut-offs are depths): labels only. ``'answers'``:
        answer-level records (``osustat import``: a system's graded answers), one placeholder
        budget of 1 -- headings name the metric alone; several budgets are refused. None
        (default): ``'answers'`` when every analysed budget is 1 (no retrieval runs at one
        token), else ``'tokens'``; the result's ``budget_kind`` says which.
    provenance : Provenance, optional
        The CLI passes the hashed input files; from Python the records are hashed as CSV.
    input_notes : sequence of str
        Lines describing how the records were built (shown in the report).
    reference : pandas.DataFrame or path, optional
        Records of the original experiment (same methods, metrics and budgets): every row
        gains the effect ratio and ΔRI of this analysis against it, with bootstrap
        intervals (:func:`osustat.reproduction.reproduction_measures`; ``Row.reproduction``,
        JSON keys ``effect_ratio``, ``delta_ri`` and their ``_ci``).
    paper_means : (float, float) or dict, optional
        The paper's printed (treatment, baseline) means: one pair when the analysis has one
        (metric, budget) comparison, else ``{(metric, budget): (t, b)}``. Aggregate rows gain
        ER and ΔRI against them (intervals: the reproduction's sampling error only).
    workers : map-like callable, optional
        Runs the comparisons (one task per method pair and (metric, budget), carrying the
        pair's rows), as scipy's ``workers``: called as ``workers(func, tasks)`` on batches
        of tasks, it must return ``func(task)`` for each task in order (e.g.
        ``multiprocessing.Pool(2).map``, or for a Dask cluster ``lambda f, xs:
        client.gather(client.map(f, xs))``). Default: the built-in ``map``, in this process.
        The rows' MDE searches (one per row, at its family's level) are handed to it too,
        after the correction. Every comparison's seed and the MDE's are fixed, so the result
        is the same either way.

    Returns
    -------
    AnalysisResult or MultiAnalysisResult
        One comparison (two method names) or several (a list, or `all_pairs`). Methods of
        the records that no pair uses are listed in ``methods_not_compared`` and in the
        provenance's exclusions (never silently ignored); so is the pair of a method named
        both as treatment and as baseline with itself, which is skipped.

    Examples
    --------
    >>> import pandas as pd, osustat
    >>> hits = {"osu": [1, 1, 0, 1, 1, 0], "tree": [1, 0, 0, 1, 1, 1], "flat": [0, 1, 0, 1, 0, 0]}
    >>> df = pd.DataFrame([
    ...     {"episode_id": f"e{i % 6}", "query_id": f"q{i}", "method": m, "budget": 256,
    ...      "metric": "hit@2", "value": v[i % 6], "cell": ["T+E+", "T-E-"][i % 2]}
    ...     for m, v in hits.items() for i in range(24)])
    >>> res = osustat.analyze(df, treatment="osu", baseline="flat", n_resamples=999, rng=0)
    >>> [(r.label, r.family_size) for r in res.comparisons[0].rows]
    [('T+E+', 2), ('T-E-', 2), ('Aggregate', 0)]
    >>> res.comparisons[0].rows[0].verdict
    'helps: significant after Holm over m = 2 (p_adj = .016)'
    >>> res.methods_not_compared
    ('tree',)
    >>> both = osustat.analyze(df, treatment=["osu", "tree"], baseline="flat", rng=0)
    >>> [(r.label, r.family_size) for r in both.result("tree", "flat").comparisons[0].rows]
    [('T+E+', 4), ('T-E-', 4), ('Aggregate', 0)]
    """
    alpha, level, resamples, bootstrap_resamples, seed = _analyze_iv(
        correction, alpha, level, n_resamples, bootstrap_resamples, rng, unit, budget_kind
    )
    records, provenance, loaded_notes, loaded_kind = _read_records(records, provenance)
    budget_kind = budget_kind if budget_kind is not None else loaded_kind
    input_notes = (*loaded_notes, *input_notes)
    plan = _plan(
        records,
        treatment,
        baseline,
        all_pairs=all_pairs,
        metrics=metrics,
        budgets=budgets,
        family=family,
        benchmark=benchmark,
        paper_means=paper_means,
        reference=reference,
        kind=budget_kind,
        unit=unit,
    )
    input_notes = (*input_notes, *plan.notes, *_cells_not_tested(plan, unit))
    input_notes = (*input_notes, *_query_unit_caveat(plan, unit, input_notes))
    input_notes = (*input_notes, *_scale_notes(plan))
    with _bar(plan) as bar:
        raw = _run(
            plan,
            bar=bar,
            workers=workers,
            unit=unit,
            benchmark=benchmark,
            n_resamples=resamples,
            bootstrap_resamples=bootstrap_resamples,
            level=level,
            alpha=alpha,
            seed=seed,
        )
        has_cells = any(res.cells for part in raw for _, _, res in part)
        every = _tables(
            plan,
            raw,
            bar=bar,
            has_cells=has_cells,
            correction=correction,
            alpha=alpha,
            resamples=resamples,
            seed=seed,
            kind=plan.kind,
            workers=workers,
            reproduction={
                "unit": unit,
                "benchmark": benchmark,
                "level": level,
                "bootstrap_resamples": bootstrap_resamples,
                "seed": seed,
            },
        )
    prov = _run_provenance(provenance, plan, every, seed, resamples, bootstrap_resamples)
    return _results(
        plan,
        [comps for comps, _ in every],
        single=isinstance(treatment, str) and isinstance(baseline, str) and not all_pairs,
        unit=unit,
        benchmark=benchmark if benchmark is not None else _only_benchmark(plan.df),
        family=family,
        correction=correction,
        alpha=alpha,
        level=level,
        resamples=resamples,
        bootstrap_resamples=bootstrap_resamples,
        seed=seed,
        budget_kind=plan.kind,
        provenance=prov,
        input_notes=tuple(input_notes),
        has_cells=has_cells,
    )


def _analyze_iv(
    correction: str,
    alpha: float,
    level: float,
    n_resamples: int,
    bootstrap_resamples: int,
    rng: int,
    unit: str,
    budget_kind: str | None,
) -> tuple[float, float, int, int, int]:
    """Validate :func:`analyze`'s options: (alpha, level, resamples, bootstrap resamples,
    seed)."""
    checked = check_options(correction, alpha, level, n_resamples, bootstrap_resamples, rng)
    if unit not in ("query", "episode"):
        raise ValueError(f"`unit` must be 'query' or 'episode'; got {unit!r}.")
    if budget_kind is not None and budget_kind not in BUDGET_KINDS:
        raise ValueError(f"`budget_kind` must be one of {list(BUDGET_KINDS)}; got {budget_kind!r}.")
    return checked


def _read_records(
    records: pd.DataFrame | str | Path | Loaded, provenance: Provenance | None
) -> tuple[pd.DataFrame, Provenance | None, list[str], str | None]:
    """(records, provenance, notes on the input, its budget kind): a records file is read
    (its provenance hashing it, unless one is given); a loader's :class:`Loaded` gives its
    notes, exclusions and budget kind; a DataFrame passes as it is."""
    if isinstance(records, Loaded):
        if provenance is None:
            provenance = _in_memory_provenance(records.records)
        if not provenance.exclusions:
            provenance = replace(provenance, exclusions=records.exclusion_counts())
        return records.records, provenance, records.report_notes(), records.budget_kind
    if isinstance(records, str | Path):
        from osustat.io.reading import load_records

        if provenance is None:
            provenance = Provenance.for_files([("records", records)], command=command_line())
        records = load_records(records)
    return records, provenance, [], None


def _run_provenance(
    given: Provenance | None,
    plan: _Plan,
    every: Sequence[tuple[list[Comparison], list[tuple[str, int]]]],
    seed: int,
    resamples: int,
    bootstrap_resamples: int,
) -> Provenance:
    """The run's provenance: its exclusions and the simulated MDEs of its tables."""
    return _provenance(
        given,
        plan.df,
        seed,
        resamples,
        bootstrap_resamples,
        _exclusions(every, plan.unused, plan.itself),
        simulated=[
            r.mde
            for comps, _ in every
            for c in comps
            for r in c.rows
            if r.mde_method in ("simulation", "empirical", "empirical-tilt")
        ],
    )


@dataclass(frozen=True)
class _Plan:
    """What :func:`analyze` compares, checked before any computation."""

    df: ValidatedRecords  # validated records (of `benchmark`, if named)
    methods: list[tuple[str, str]]  # (treatment, baseline) pairs
    unused: list[str]  # methods of the records in no pair
    pairs: list[tuple[str, int]]  # (metric, budget) comparisons
    groups: list[tuple[str, Any]]  # correction families
    printed: dict[tuple[str, int], Any]  # the paper's means per (metric, budget)
    ref_df: pd.DataFrame | None  # validated reference records
    itself: list[str]  # methods named as treatment and baseline: no pair with itself
    notes: list[str]  # what the default selection left out, and why
    kind: str = "tokens"  # what the budget counts (`budget_kind`, resolved)


def _plan(
    records: pd.DataFrame,
    treatment: str | Sequence[str] | None,
    baseline: str | Sequence[str] | None,
    *,
    all_pairs: bool,
    metrics: Iterable[str] | str | None,
    budgets: Iterable[int] | int | None,
    family: str | Sequence[Sequence[Any]],
    benchmark: str | None,
    paper_means: Any,
    reference: pd.DataFrame | str | Path | None,
    kind: str | None = None,
    unit: str = "query",
) -> _Plan:
    """Validate the records and every choice, and list the comparisons (no statistics)."""
    df = validate_records(records)
    if df.empty:
        raise ValueError("`records` holds no rows.")
    if benchmark is not None:
        known = sorted(df["benchmark"].unique().tolist())
        if benchmark not in known:
            raise ValueError(f"`benchmark` {benchmark!r} is not in the records; known: {known}.")
        df = df.select_rows(df["benchmark"] == benchmark)  # still validated
    methods, unused = method_pairs(df, treatment, baseline, all_pairs)
    ms, bs = select(df, metrics, budgets)
    # A TREC measure with its own cut-off (nDCG@10) is recorded at one depth only: the
    # comparisons are the (metric, budget) pairs the records hold, never an empty one.
    present = set(zip(df["metric"].tolist(), df["budget"].astype(int).tolist(), strict=True))
    pairs = [(m, b) for m in ms for b in bs if (m, b) in present]
    if not pairs:
        raise ValueError(
            f"no record has any of the metrics {ms} at any of the budgets {bs}; pairs present: "
            f"{sorted(present)[:10]}."
        )
    if kind is None:  # answers where every budget is the placeholder 1
        kind = "answers" if {b for _, b in pairs} == {ANSWER_BUDGET} else "tokens"
    if kind == "answers" and len({b for _, b in pairs}) > 1:
        raise ValueError(
            "`budget_kind='answers'` (answer-level records) needs one budget; these records "
            f"hold {sorted({b for _, b in pairs})}."
        )
    notes: list[str] = []
    if metrics is None:  # the default, every metric: those every compared method has
        pairs, notes = _shared_pairs(df, methods, pairs, kind)
        compared = {x for pair in methods for x in pair}
        held = "tokens" not in ms and any(m == "tokens" for m, _ in present)  # no scan if not
        if held and df["method"][df["metric"] == "tokens"].isin(compared).any():
            notes.append(
                "Not analysed by default: `tokens` (the retrieved context's token cost, not a "
                "measure of quality); name it with --metric tokens (`metrics=['tokens']`) to "
                "compare it."
            )
        if unit == "episode":  # and, at the episode unit, on two episodes or more
            pairs, few = _episode_testable(df, methods, pairs, kind)
            notes += few
    groups = family_groups(family, pairs, methods, kind)
    printed = check_paper_means(paper_means, pairs)
    if reference is not None and printed:
        raise ValueError("give the original as `reference` records or as `paper_means`, not both.")
    ref_df = None
    if reference is not None:
        if isinstance(reference, str | Path):
            from osustat.io.reading import load_records

            reference = load_records(reference)
        ref_df = validate_records(reference)
    itself = self_pairs(treatment, baseline, all_pairs)
    return _Plan(df, methods, unused, pairs, groups, printed, ref_df, itself, notes, kind)


def _shared_pairs(
    df: pd.DataFrame,
    methods: list[tuple[str, str]],
    pairs: list[tuple[str, int]],
    kind: str = "tokens",
) -> tuple[list[tuple[str, int]], list[str]]:
    """The (metric, budget) pairs every compared method has records of, and a note naming
    the others with the methods lacking them (systems' files often score different metrics:
    mem0's bleu and f1 beside a judge's grade Zep's file alone has)."""
    compared = list(dict.fromkeys(x for pair in methods for x in pair))
    have = df.loc[df["method"].isin(compared), ["method", "metric", "budget"]].drop_duplicates()
    held = {(m, int(b)): set(g["method"]) for (m, b), g in have.groupby(["metric", "budget"])}
    kept = [p for p in pairs if held.get(p, set()) >= set(compared)]
    left = [p for p in pairs if p not in kept]
    if not left:
        return pairs, []
    if not kept:
        raise ValueError(
            "no metric and budget has records of every compared method "
            f"({', '.join(map(repr, compared))}); "
            + "; ".join(f"{m} at {b}: only {sorted(held.get((m, b), set()))}" for m, b in left[:6])
            + ". Name the methods that share a metric, or the metric with --metric (`metrics`)."
        )
    lacking: dict[tuple[str, ...], list[str]] = {}
    for m, b in left:
        who = tuple(sorted(set(compared) - held.get((m, b), set())))
        lacking.setdefault(who, []).append(pair_label(m, b, kind))
    said = "; ".join(
        f"{', '.join(map(repr, who))} {'has' if len(who) == 1 else 'have'} no records of "
        f"{list_some(items, quote=False)}"
        for who, items in lacking.items()
    )
    return kept, [
        f"Not analysed: {len(left)} {'metric' if kind == 'answers' else 'metric-budget pair'}(s) "
        "that not every compared method has "
        f"({said}); by default the metrics every compared method has are analysed — name a "
        "metric with --metric (`metrics`) to see what it lacks."
    ]


def _episode_testable(
    df: pd.DataFrame, methods: list[tuple[str, str]], pairs: list[tuple[str, int]], kind: str
) -> tuple[list[tuple[str, int]], list[str]]:
    """The default's (metric, budget) pairs on which every compared pair of methods shares
    two episodes or more, and a note naming the others: a stratum that sits in one episode
    of the records (a LoCoMo category in one of two conversations) has no episode-level test,
    and aborted the whole run (a red team, stop 57); named with --metric it is still an
    error that says why."""
    rows = df[df["method"].isin({x for pair in methods for x in pair})]
    episodes = {
        key: set(g["episode_id"])
        for key, g in rows.groupby(["method", "metric", "budget"], sort=False)
    }
    kept: list[tuple[str, int, int]] = []
    few: list[tuple[str, int, int]] = []
    for m, b in pairs:
        shared = min(
            len(episodes.get((t, m, b), set()) & episodes.get((c, m, b), set())) for t, c in methods
        )
        (kept if shared >= 2 else few).append((m, b, shared))
    if not few:
        return pairs, []
    if not kept:
        return pairs, []  # nothing else to analyse: the error names the first
    said = list_some([f"{pair_label(m, b, kind)} ({n})" for m, b, n in few], quote=False)
    return [(m, b) for m, b, _ in kept], [
        f"Not analysed at the episode unit: {len(few)} "
        f"{'metric' if kind == 'answers' else 'metric-budget pair'}(s) whose values the "
        f"compared methods share in fewer than 2 episodes ({said}, shared episodes in "
        "brackets): an episode-level test needs two; name one with --metric (`metrics`) to "
        "see it, or compare at --unit query."
    ]


def _only_benchmark(df: pd.DataFrame) -> str | None:
    """The benchmark of records that hold one (the result states what was analysed; the
    comparisons need no name for it), else None."""
    names = df["benchmark"].unique()
    return str(names[0]) if len(names) == 1 else None


def _query_unit_caveat(plan: _Plan, unit: str, notes: Sequence[str]) -> list[str]:
    """At the query unit, when episodes hold several queries (of the first compared method,
    metric and budget): what the query-level procedures assume, said once (none when a
    caller's note already says the unit, as the CLI's does for a benchmark declaring it)."""
    if unit != "query" or any(n.startswith("Unit:") for n in notes):
        return []
    df = plan.df
    (metric, budget), method = plan.pairs[0], plan.methods[0][0]
    rows = df[df["method"] == method]  # one pass over the records, then over its rows
    rows = rows[(rows["metric"] == metric) & (rows["budget"] == budget)]
    per = rows.groupby("episode_id", sort=False)["query_id"].nunique()
    shared = int((per > 1).sum())
    if not shared:
        return []
    # one episode cannot be resampled: the intervals then resample its queries (cellwise)
    intervals = (
        "while the intervals resample whole episodes"
        if len(per) > 1
        else "and so do the intervals (one episode: nothing to resample but its queries)"
    )
    return [
        f"Unit: query; {shared:,} of {len(per):,} episodes hold several queries, which may "
        "share the episode's memory: the sign-flip tests, the interaction test and the "
        f"break-even band treat them as independent, {intervals}; --unit episode "
        "(`unit='episode'`) tests at the episode level."
    ]


#: The largest |value| of a metric below which, or from which on, its numbers printed with
#: three decimals mislead (read 0.000, or run to many digits): the report says so.
READABLE_SCALE = (0.01, 1e6)


def _scale_notes(plan: _Plan) -> list[str]:
    """A note per compared metric whose values three decimals cannot show: all below .01 in
    absolute value (means, Δ and intervals read 0.000 beside a significant p) or from 10^6 on
    (numbers of many digits). The tests, p-values and MDEs do not depend on the scale; what
    is printed does, so the note names the power of ten that makes it readable."""
    df = plan.df
    methods = list(dict.fromkeys(x for pair in plan.methods for x in pair))
    compared = df[df["method"].isin(methods)]
    notes = []
    for metric in dict.fromkeys(m for m, _ in plan.pairs):
        budgets = [b for m, b in plan.pairs if m == metric]  # the budgets analysed only
        rows = (compared["metric"] == metric) & compared["budget"].isin(budgets)
        values = compared.loc[rows, "value"].to_numpy(dtype=float)
        values = np.abs(values[np.isfinite(values)])
        top = float(values.max()) if values.size else 0.0
        if top == 0 or READABLE_SCALE[0] <= top < READABLE_SCALE[1]:
            continue
        power = math.floor(math.log10(top))
        if top < READABLE_SCALE[0]:
            shown = "its means, Δ, intervals and MDEs print as 0.000 or with one digit"
            fix = f"multiply the metric by 1e{-power}"
        else:
            shown = f"its numbers print with {power + 1} digits before the point"
            fix = f"divide the metric by 1e{power}"
        notes.append(
            f"Scale: the values of {metric!r} reach {top:.3g} in absolute value; the report "
            f"prints three decimals, so {shown}: {fix} for readable numbers (its tests, "
            "p-values and verdicts do not depend on the scale)."
        )
    return notes


def _cells_not_tested(plan: _Plan, unit: str) -> list[str]:
    """A note when the compared rows carry cells that the unit cannot test (``'episode'``: a
    cell labels a query, an episode holds queries of several cells), else none. Said in the
    report's header and, by the CLI, on stderr: the cells are not ignored silently."""
    if unit != "episode":
        return []
    df = plan.df
    metrics = list(dict.fromkeys(m for m, _ in plan.pairs))
    methods = list(dict.fromkeys(x for pair in plan.methods for x in pair))
    labelled = df["cell"].notna() & df["metric"].isin(metrics) & df["method"].isin(methods)
    if not labelled.any():
        return []
    carrying = sorted(set(df.loc[labelled, "metric"].tolist()))
    cells = df.loc[labelled].groupby("metric")["cell"].nunique()
    single = [m for m in carrying if cells[m] == 1]
    one_cell = (
        f" (a metric whose labelled queries are all of one cell — {list_some(single)} — is "
        "that cell's test at the episode unit: its table's aggregate row, over the episodes "
        "that hold such queries)"
        if single
        else ""
    )
    return [
        f"Cells not tested: the records label queries with cells on {list_some(carrying)}, "
        "but the unit of analysis is the episode: a cell labels a query, and an episode (a "
        "conversation) holds queries of several cells, so there are no per-cell tests, no "
        "method × cell interaction test and no forest figure, only each table's aggregate"
        f"{one_cell}; --unit query (unit='query') tests the cells at the query level. At the "
        "episode unit a row's means are means of episode means (each episode weighs the "
        "same), not the pooled share over all queries."
    ]


#: The names of a comparison's random streams (with its metric and budget): its tests and
#: intervals, and its reproduction measures (ER, ΔRI) against a reference.
COMPARISON_STREAM = "analyze"
REPRODUCTION_STREAM = "analyze-reproduction"

#: Comparisons handed to `workers` at a time: their method pairs' rows are in memory together.
TASKS_PER_BATCH = 64


def _run(
    plan: _Plan,
    *,
    bar: Any,
    workers: Callable[[Callable[[Any], Any], Iterable[Any]], Iterable[Any]] | None,
    **settings: Any,
) -> list[list[tuple[str, int, CellConditionalResult]]]:
    """Each method pair's cell-conditional results, one per (metric, budget), computed by
    :func:`_comparison` through `workers` (a map-like callable; built-in ``map`` when None),
    :data:`TASKS_PER_BATCH` comparisons at a time, in order; `bar` (:func:`_bar`) counts
    them."""
    # Each comparison's stream is named by its (metric, budget), never by its position: a
    # row's numbers do not depend on which other metrics or budgets were asked for, and every
    # method pair gets the same streams, so a pair's rows equal its analysis alone.
    seed = settings.pop("seed")
    seeds = [stream_seed(seed, COMPARISON_STREAM, m, b) for m, b in plan.pairs]
    # Each pair's rows taken once (in the table's order), so pairing a comparison scans the
    # two methods' rows only, not every method's (10^6 rows for 50 methods: issue 37).
    rows = plan.df.rows_by("method")
    per_pair = len(plan.pairs)
    tasks = (
        _Task(plan.df.take_rows(np.sort(np.concatenate([rows[t], rows[b]]))), t, b, settings)
        for t, b in plan.methods
    )
    work = (
        (task, metric, budget, seeds[k])
        for task in tasks
        for k, (metric, budget) in enumerate(plan.pairs)
    )
    mapper = map if workers is None else workers
    raw: list[list[tuple[str, int, CellConditionalResult]]] = []
    many = _many(plan)
    while batch := list(islice(work, TASKS_PER_BATCH)):
        for metric, budget, res in mapper(_comparison, batch):
            if not raw or len(raw[-1]) == per_pair:
                raw.append([])
            raw[-1].append((metric, budget, res))
            if not many or len(raw[-1]) == per_pair:
                bar.update()
    return raw


def _many(plan: _Plan) -> bool:
    """Whether progress counts method pairs (three or more) rather than comparisons."""
    return len(plan.methods) >= 3


def _bar(plan: _Plan) -> Any:
    """Progress, two steps per method pair from three pairs on, else per comparison: its
    tests (:func:`_run`), then its table's MDE searches (:func:`_tables`, as long again on a
    million records: issue 37); the comparisons' bar once 2 s have passed, on a terminal
    only (None: off when stderr is not a TTY)."""
    if _many(plan):
        return tqdm(
            total=2 * len(plan.methods), desc="method pairs (tests, then MDEs)", leave=False
        )
    desc = " vs ".join(plan.methods[0]) if len(plan.methods) == 1 else "comparisons"
    total = 2 * len(plan.methods) * len(plan.pairs)
    return tqdm(
        total=total,
        desc=f"{desc} (tests, then MDEs)",
        unit="step",
        delay=2.0,
        disable=None,
        leave=False,
    )


@dataclass(frozen=True)
class _Task:
    """One method pair's rows and the settings of its comparisons."""

    df: ValidatedRecords
    treatment: str
    baseline: str
    settings: dict[str, Any]


def _comparison(
    work: tuple[_Task, str, int, np.random.SeedSequence],
) -> tuple[str, int, CellConditionalResult]:
    """One (metric, budget) comparison of a method pair (module level, so a process pool or
    a Dask cluster can run it)."""
    task, metric, budget, seed = work
    opts = dict(task.settings)
    unit, benchmark = opts.pop("unit"), opts.pop("benchmark")
    data = paired(
        task.df,
        task.treatment,
        task.baseline,
        metric=metric,
        budget=budget,
        unit=unit,
        benchmark=benchmark,
    )
    return metric, budget, cell_conditional(data, rng=np.random.default_rng(seed), **opts)


def _tables(
    plan: _Plan,
    raw: Sequence[Sequence[tuple[str, int, CellConditionalResult]]],
    *,
    has_cells: bool,
    correction: str,
    alpha: float,
    resamples: int,
    seed: int,
    kind: str,
    reproduction: dict[str, Any],
    bar: Any,
    workers: Callable[[Callable[[Any], Any], Iterable[Any]], Iterable[Any]] | None = None,
) -> list[tuple[list[Comparison], list[tuple[str, int]]]]:
    """Each method pair's tables and exclusions: the tested rows (the per-cell tests, or the
    aggregates when no comparison has cells) corrected over their families. With `workers`,
    the rows' MDE searches run there first (else each row searches its own when built).
    `bar` counts the tables (the method pairs from three on)."""
    tested = {
        (p, k): list(res.cells) if has_cells else [res.aggregate]
        for p, part in enumerate(raw)
        for k, (_, _, res) in enumerate(part)
    }
    adjusted = _adjust(raw, tested, plan.groups, correction, alpha, resamples, seed)
    if workers is not None:
        _search_mdes(raw, tested, adjusted, alpha, correction, workers)
    many = _many(plan)
    out = []
    for p in range(len(plan.methods)):
        out.append(
            _comparisons(
                raw[p],
                tested,
                adjusted,
                p,
                alpha=alpha,
                correction=correction,
                kind=kind,
                resamples=resamples,
                reproduce=_reproducer(
                    plan.ref_df, plan.printed, plan.methods[p], pairs=plan.pairs, **reproduction
                ),
                done=None if many else bar.update,
            )
        )
        if many:
            bar.update()
    return out


def _exclusions(
    every: Sequence[tuple[Any, list[tuple[str, int]]]],
    unused: Sequence[str],
    itself: Sequence[str] = (),
) -> list[tuple[str, int]]:
    """Every exclusion of the comparisons, the methods no pair compares, and the pairs of a
    method with itself (named as treatment and baseline) that were skipped."""
    exclusions = [x for _, excl in every for x in excl]
    if itself:
        exclusions.append(
            (
                f"pair(s) of a method with itself not compared "
                f"({', '.join(f'{m!r} vs {m!r}' for m in itself)}): the method is named as "
                "treatment and as baseline",
                len(itself),
            )
        )
    if unused:
        exclusions.append(
            (
                f"method(s) in the records not compared ({', '.join(map(repr, unused))}): name "
                "them as treatment or baseline, or pass all_pairs (--all-pairs), to compare them",
                len(unused),
            )
        )
    return exclusions


def _results(
    plan: _Plan,
    comparisons: Sequence[Sequence[Comparison]],
    *,
    single: bool,
    family: str | Sequence[Sequence[Any]],
    has_cells: bool,
    **common: Any,
) -> AnalysisResult | MultiAnalysisResult:
    """One :class:`AnalysisResult` per method pair (`common`: the settings every pair's
    result states); the first alone for a single pair, else all in a
    :class:`MultiAnalysisResult` whose families span the pairs."""
    family_name = family if isinstance(family, str) else "user"
    results = tuple(
        AnalysisResult(
            treatment=t,
            baseline=b,
            family=family_name,
            family_groups=tuple(
                (g, tuple((m, bb) for q, m, bb in keys if q == p)) for g, keys in plan.groups
            ),
            comparisons=tuple(comparisons[p]),
            family_members="per-cell tests" if has_cells else "aggregate tests",
            methods_not_compared=tuple(plan.unused),
            **common,
        )
        for p, (t, b) in enumerate(plan.methods)
    )
    if single:
        return results[0]
    return MultiAnalysisResult(
        pairs=tuple(plan.methods),
        results=results,
        family=family_name,
        family_groups=tuple(
            (g, tuple((*plan.methods[q], m, b) for q, m, b in keys)) for g, keys in plan.groups
        ),
        correction=common["correction"],
        alpha=common["alpha"],
        provenance=common["provenance"],
        methods_not_compared=tuple(plan.unused),
    )


def _comparisons(
    raw: Sequence[tuple[str, int, CellConditionalResult]],
    tested: dict[tuple[int, int], list[CellEffect]],
    adjusted: dict[tuple[int, int, int], tuple[float, str, int]],
    p: int,
    *,
    alpha: float,
    correction: str,
    kind: str,
    resamples: int,
    reproduce: Callable[[int, list[Row], CellConditionalResult], list[Row]] | None = None,
    done: Callable[[], Any] | None = None,
) -> tuple[list[Comparison], list[tuple[str, int]]]:
    """One method pair's tables (rows with their family's corrected p) and exclusions;
    `reproduce` adds ER and ΔRI to the rows of comparison k where an original is given;
    `done` is called after each table."""
    comparisons = []
    exclusions: list[tuple[str, int]] = []
    for k, (metric, budget, res) in enumerate(raw):
        heading = table_heading(metric, budget, kind)
        rows = []
        for e in (*res.cells, res.aggregate):
            family_info = _family_info(tested, adjusted, p, k, e)
            rows.append(
                _row(res, e, family_info, alpha=alpha, correction=correction, resamples=resamples)
            )
        if reproduce is not None:
            rows = reproduce(k, rows, res)
        for c, n in res.excluded_cells.items():
            exclusions.append(
                (
                    f"{res.paired.unit} units of cell {c.value} in {heading} (fewer than 2: no "
                    "per-cell test; kept in the aggregate)",
                    n,
                )
            )
        comparisons.append(
            Comparison(metric=metric, budget=budget, heading=heading, result=res, rows=tuple(rows))
        )
        if done is not None:
            done()
    return comparisons, exclusions


def _reproducer(
    ref_df: pd.DataFrame | None,
    printed: dict[tuple[str, int], Any],
    method_pair: tuple[str, str],
    *,
    pairs: Sequence[tuple[str, int]],
    unit: str,
    benchmark: str | None,
    level: float,
    bootstrap_resamples: int,
    seed: Any,
) -> Callable[[int, list[Row], CellConditionalResult], list[Row]] | None:
    """ER and ΔRI for one method pair's rows against the reference records or the paper's
    printed means, or None when neither is given. Each comparison draws from its own named
    stream (:data:`REPRODUCTION_STREAM`, metric, budget), apart from the comparison's."""
    if ref_df is None and not printed:
        return None
    treatment, baseline = method_pair

    def reproduce(k: int, rows: list[Row], res: CellConditionalResult) -> list[Row]:
        metric, budget = pairs[k]
        if ref_df is None and (metric, budget) not in printed:
            return rows
        reference = None
        if ref_df is not None:
            try:
                reference = paired(
                    ref_df,
                    treatment,
                    baseline,
                    metric=metric,
                    budget=budget,
                    unit=unit,
                    benchmark=benchmark,
                )
            except ValueError as exc:  # say which records lack it: the reference's
                said = str(exc).replace("not in the records", "not in the reference records")
                raise ValueError(f"`reference`: {said}") from None
        return list(
            with_reproduction(
                rows,
                res.paired,
                reference=reference,
                paper_means=printed.get((metric, budget)),
                level=level,
                n_resamples=bootstrap_resamples,
                rng=np.random.default_rng(stream_seed(seed, REPRODUCTION_STREAM, metric, budget)),
            )
        )

    return reproduce


def _adjust(
    raw: Sequence[Sequence[tuple[str, int, CellConditionalResult]]],
    tested: dict[tuple[int, int], list[CellEffect]],
    groups: Sequence[tuple[str, Sequence[tuple[int, str, int]]]],
    correction: str,
    alpha: float,
    resamples: int,
    seed: int,
) -> dict[tuple[int, int, int], tuple[float, str, int]]:
    """(method pair, comparison, tested row) -> (corrected p, family name, family size m).

    The step-down corrections (``'maxt'``, ``'minp'``) resample every test of a family
    with one sign per unit (:func:`osustat.stepdown.westfall_young`), from the family's own
    named stream (:func:`osustat.streams.stream_seed`); the corrected p is never below the
    row's raw p (the step-down's own marginal p estimates the same number with other sign
    vectors).
    """
    adjusted: dict[tuple[int, int, int], tuple[float, str, int]] = {}
    for g, keys in groups:
        idx = [
            (p, k, j)
            for p, part in enumerate(raw)
            for k, (m, b, _) in enumerate(part)
            if (p, m, b) in keys
            for j in range(len(tested[(p, k)]))
        ]
        if not idx:
            continue
        pv = [tested[(p, k)][j].test.pvalue for p, k, j in idx]
        if correction == "none":
            adj = pv
        elif correction in STEPDOWN_METHODS:
            units = [_unit_values(raw[p][k][2], tested[(p, k)][j]) for p, k, j in idx]
            wy = westfall_young(
                [d for _, d in units],
                [u for u, _ in units],
                method=correction,
                n_resamples=resamples,
                alpha=alpha,
                rng=np.random.default_rng(stream_seed(seed, "westfall-young", g)),
            )
            adj = np.maximum(wy.pvalues_adjusted, pv).tolist()
        else:
            adj = adjust_pvalues(pv, method=correction, alpha=alpha).pvalues_adjusted.tolist()
        for key, q in zip(idx, adj, strict=True):
            adjusted[key] = (min(float(q), 1.0), g, len(idx))
    return adjusted


def _family_info(
    tested: dict[tuple[int, int], list[CellEffect]],
    adjusted: dict[tuple[int, int, int], tuple[float, str, int]],
    p: int,
    k: int,
    e: CellEffect,
) -> tuple[float | None, str | None, int]:
    """(corrected p, family, m) of row `e` of pair `p`'s comparison `k`; (None, None, 0) for
    a row outside every family."""
    pos = next((i for i, x in enumerate(tested[(p, k)]) if x is e), None)
    return adjusted[(p, k, pos)] if pos is not None else (None, None, 0)


def _search_mdes(
    raw: Sequence[Sequence[tuple[str, int, CellConditionalResult]]],
    tested: dict[tuple[int, int], list[CellEffect]],
    adjusted: dict[tuple[int, int, int], tuple[float, str, int]],
    alpha: float,
    correction: str,
    workers: Callable[[Callable[[Any], Any], Iterable[Any]], Iterable[Any]],
) -> None:
    """Search every row's MDE at its level through `workers` (the calling process searched
    them one by one after the comparisons: 24,500 rows for 50 methods), and hold each in its
    row; the same search and seed, so the same values."""
    todo = []
    for p, part in enumerate(raw):
        for k, (_, _, res) in enumerate(part):
            for e in (*res.cells, res.aggregate):
                level = strictest_level(
                    _family_info(tested, adjusted, p, k, e)[2], alpha, correction
                )
                if not e.mde_levels.searched(level):
                    todo.append((e, level))
    while batch := todo[: TASKS_PER_BATCH * 16]:
        del todo[: len(batch)]
        found = workers(search_mde, [e.mde_levels.task(a) for e, a in batch])
        for (e, a), mde in zip(batch, found, strict=True):
            e.mde_levels.keep(a, mde)


def _row(
    res: CellConditionalResult,
    e: CellEffect,
    family_info: tuple[float | None, str | None, int],
    *,
    alpha: float,
    correction: str,
    resamples: int,
) -> Row:
    """One reported row: its family, the MDE of its test at its level, its verdict. A
    Westfall–Young adjusted p is a Monte Carlo p of its own (`resamples` sign vectors shared by
    the family), whatever the raw p's method: its error is its own, not the raw p's scaled."""
    p_adj, fam, m = family_info
    adjusted_se = (
        math.sqrt(p_adj * (1.0 - p_adj) / resamples)
        if p_adj is not None and correction in STEPDOWN_METHODS
        else None
    )
    mde_alpha = strictest_level(m, alpha, correction)
    mde = e.mde_at(mde_alpha)  # searched only at the level printed
    return Row(
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
            pvalue_se=e.test.pvalue_se,
            pvalue_adjusted_se=adjusted_se,
        ),
    )


def _in_memory_provenance(df: pd.DataFrame) -> Provenance:
    """The provenance of records handed over in memory: their CSV's SHA-256."""
    return Provenance(
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


def _provenance(
    given: Provenance | None,
    df: pd.DataFrame,
    seed: int,
    resamples: int,
    bootstrap_resamples: int,
    exclusions: Sequence[tuple[str, int]],
    *,
    simulated: Sequence[PowerValue],
) -> Provenance:
    """The given provenance (or one hashing the in-memory records) plus this run's seeds,
    resamples and exclusions (and the simulated MDEs' fixed seed and data sets, if any)."""
    mde_seeds = {"MDE simulation (fixed)": MDE_SEED} if simulated else {}
    mde_sims = {"MDE simulation (data sets)": simulated[0].n_simulations} if simulated else {}
    if given is None:
        given = _in_memory_provenance(df)
    return replace(  # the command, its arguments, the inputs and versions as given
        given,
        seeds={"master": seed, **mde_seeds, **dict(given.seeds)},
        resamples={
            "sign-flip (Monte Carlo)": resamples,
            "bootstrap": bootstrap_resamples,
            **mde_sims,
            **dict(given.resamples),
        },
        exclusions=(*given.exclusions, *exclusions),
    )


def _mask(res: CellConditionalResult, e: CellEffect) -> np.ndarray:
    if e.cell is None or res.paired.cells is None:
        return np.ones(res.paired.n, dtype=bool)
    return cell_codes(res.paired.cells) == CELLS.index(e.cell)


def _unit_values(res: CellConditionalResult, e: CellEffect) -> tuple[np.ndarray, np.ndarray]:
    """The row's units (ids shared across method pairs, metrics and budgets) and differences."""
    mask = _mask(res, e)
    return res.paired.ids[mask], res.paired.differences[mask]
