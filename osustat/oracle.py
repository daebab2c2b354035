"""The oracle-routing ceiling (Section 7): the gain a per-cell router could hide, in sample.

Routing each cell to the better of two methods, with the ground-truth cell labels of the same
queries, sizes what the aggregate effect averages away; it is an in-sample upper bound, never
a deployable gain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cells import CELLS, Cell, per_cell_values

__all__ = ["OracleCeiling", "oracle_ceiling"]


@dataclass(frozen=True)
class OracleCeiling:
    """In-sample oracle-routing ceiling (Section 7): never a deployable gain.

    Attributes
    ----------
    gain_over_baseline : float
        Aggregate effect of routing the `routed_cells` to the treatment and the rest to the
        baseline, relative to the baseline everywhere: ``sum_{c routed} n_c Delta_c / N``.
    gain_over_treatment : float
        The same routing relative to the treatment everywhere:
        ``gain_over_baseline - aggregate``.
    aggregate : float
        Treatment minus baseline over all queries, ``sum_c n_c Delta_c / N``.
    routed_cells : tuple of Cell
        Cells routed to the treatment.
    n : int
        Total count ``N`` (-1 when `counts` were fractions rather than counts).
    label : str
        Always ``'in-sample upper bound (oracle cell labels)'``.
    """

    gain_over_baseline: float
    gain_over_treatment: float
    aggregate: float
    routed_cells: tuple[Cell, ...]
    n: int
    label: str = "in-sample upper bound (oracle cell labels)"


def oracle_ceiling(effects: Any, counts: Any, *, route: Any = None) -> OracleCeiling:
    """Route each cell to the better method and size the gain hidden by the aggregate.

    Parameters
    ----------
    effects : mapping or sequence of 4
        Per-cell effect (treatment minus baseline).
    counts : mapping or sequence of 4
        Number of queries per cell.
    route : Cell, str or iterable of them, optional
        Cells routed to the treatment (a single cell may be given alone, e.g. ``"T+E+"``);
        default: the cells with a positive effect.

    Returns
    -------
    OracleCeiling

    Notes
    -----
    It uses ground-truth cell labels of the same queries it is evaluated on, so it is an
    in-sample upper bound that sizes the cell-mixture structure, not an estimate of what a
    deployable router would gain.

    Examples
    --------
    The paper's Section 7 figure from Table 4 (Hit@2, B = 256):

    >>> from osustat import oracle_ceiling
    >>> o = oracle_ceiling([0.179, -0.031, 0.159, -0.129], [56, 96, 44, 132])
    >>> round(100 * o.gain_over_baseline, 1), [str(c) for c in o.routed_cells]
    (5.2, ['T+E+', 'T-E+'])
    """
    eff = per_cell_values(effects, "effects")
    cnt = per_cell_values(counts, "counts")
    bad = [str(c) for c, v in cnt.items() if v < 0]
    if bad:
        raise ValueError(f"`counts` must be non-negative; negative for cells {bad}.")
    missing = [str(c) for c, v in cnt.items() if v > 0 and c not in eff]
    if missing:
        raise ValueError(f"`effects` has no value for cells {missing}, which have queries.")
    total = sum(cnt.values())
    if total <= 0:
        raise ValueError("`counts` must have a positive total.")
    if route is None:
        routed = tuple(c for c in CELLS if cnt.get(c, 0) > 0 and eff.get(c, 0.0) > 0)
    else:
        routed_set = set()
        if isinstance(route, str | Cell):  # one cell, not an iterable of characters
            route = [route]
        for c in route:
            try:
                routed_set.add(Cell.parse(c))
            except ValueError:
                raise ValueError(
                    f"`route` has an unknown cell {c!r}; expected cells among "
                    f"{[x.value for x in CELLS]}."
                ) from None
        routed = tuple(c for c in CELLS if c in routed_set)
    aggregate = sum(cnt[c] * eff[c] for c in cnt if cnt[c] > 0) / total
    gain = sum(cnt.get(c, 0.0) * eff.get(c, 0.0) for c in routed) / total
    counts_given = all(float(v).is_integer() for v in cnt.values())
    n = int(total) if counts_given else -1  # fractions given: there is no count
    return OracleCeiling(gain, gain - aggregate, aggregate, routed, n)
