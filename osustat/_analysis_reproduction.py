"""ER and ΔRI on :func:`osustat.analyze`'s rows (issue 24; private to :mod:`osustat.analysis`).

The reproduction is the analysed records; the original is a reference run (records of the
original experiment, paired the same way) or the paper's printed means of one comparison.
Each row (a cell or the aggregate) gets :func:`osustat.reproduction.reproduction_measures`
on its own units: the reference's units of the same cell, resampled jointly with ours when
they are the same units (one collection), independently otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import check_means_pair
from .analysis_result import Row
from .records import PairedRecords
from .reproduction import reproduction_measures

__all__ = ["check_paper_means", "with_reproduction"]


def check_paper_means(
    paper_means: Any, pairs: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], tuple[float, float]]:
    """``{(metric, budget): (treatment mean, baseline mean)}`` from `analyze`'s argument: a
    mapping, or one pair of numbers when the analysis has one comparison."""
    if paper_means is None:
        return {}
    if not isinstance(paper_means, Mapping):
        if len(pairs) != 1:
            raise ValueError(
                f"`paper_means` as one (treatment, baseline) pair needs one comparison; this "
                f"analysis has {len(pairs)} ({', '.join(f'{m}@{b}' for m, b in pairs[:4])}"
                f"{', …' if len(pairs) > 4 else ''}): select one metric and one budget "
                "(--metric and --budget; `metrics=`, `budgets=` in Python), or, in Python, give "
                "a dict {(metric, budget): (t, b)}."
            )
        paper_means = {pairs[0]: paper_means}
    out = {}
    for key, value in paper_means.items():
        if key not in pairs:
            raise ValueError(
                f"`paper_means` names {key!r}, which is not among the analysed comparisons "
                f"{list(pairs)}."
            )
        out[key] = check_means_pair(value, f"paper_means[{key!r}]")
    return out


def _mask(data: PairedRecords, label: str) -> NDArray[np.bool_]:
    if label == "Aggregate" or data.cells is None:
        return np.ones(data.n, dtype=bool)
    return np.array([c.value == label for c in data.cells], dtype=bool)


def _clusters(data: PairedRecords, mask: NDArray[np.bool_]) -> NDArray[Any] | None:
    if data.unit != "query":
        return None
    ep = data.episode_ids[mask]
    return ep if np.unique(ep).size >= 2 else None


def with_reproduction(
    rows: Sequence[Row],
    data: PairedRecords,
    *,
    reference: PairedRecords | None,
    paper_means: tuple[float, float] | None,
    level: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[Row, ...]:
    """`rows` with ``reproduction`` set: every row against a reference run; the aggregate
    row against printed means. A row whose cell the reference lacks (fewer than 2 units)
    keeps None."""
    out = []
    for row in rows:
        mask = _mask(data, row.label)
        t, b = data.treatment[mask], data.baseline[mask]
        measures = None
        if reference is not None:
            ref = _mask(reference, row.label)
            if ref.sum() >= 2:
                ids, ref_ids = data.ids[mask], reference.ids[ref]
                same = ids.size == ref_ids.size and set(ids) == set(ref_ids)
                order = np.argsort(ref_ids)[np.argsort(np.argsort(ids))] if same else None
                ot, ob = reference.treatment[ref], reference.baseline[ref]
                measures = reproduction_measures(
                    t,
                    b,
                    original_treatment=ot if order is None else ot[order],
                    original_baseline=ob if order is None else ob[order],
                    same_units=same,
                    clusters=_clusters(data, mask),
                    original_clusters=None if same else _clusters(reference, ref),
                    level=level,
                    n_resamples=n_resamples,
                    rng=rng,
                )
        elif paper_means is not None and row.label == "Aggregate":
            measures = reproduction_measures(
                t,
                b,
                original_means=paper_means,
                clusters=_clusters(data, mask),
                level=level,
                n_resamples=n_resamples,
                rng=rng,
            )
        out.append(dataclasses.replace(row, reproduction=measures))
    return tuple(out)
