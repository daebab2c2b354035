"""Evidence-structure cells (the paper's Definition 2) and pairwise sharing rates.

A query's cell is a property of its ground-truth evidence, not of any method: T+ when at
least one pair of distinct evidence steps shares a tool signature, E+ when at least one pair
shares an entity string. The two pairs need not be the same (Section 6.2).
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import list_some

__all__ = [
    "CELLS",
    "Cell",
    "SharingRates",
    "as_cells",
    "cell_codes",
    "label_cell",
    "per_cell_values",
    "sharing_rates",
]


class Cell(enum.Enum):
    """The four evidence-structure cells, in the paper's table order."""

    TE = "T+E+"
    T_ONLY = "T+E-"
    E_ONLY = "T-E+"
    NEITHER = "T-E-"

    @property
    def tool_shared(self) -> bool:
        return self in (Cell.TE, Cell.T_ONLY)

    @property
    def entity_shared(self) -> bool:
        return self in (Cell.TE, Cell.E_ONLY)

    @classmethod
    def parse(cls, value: Any) -> Cell:
        """Parse ``'T+E+'``-style labels; the Unicode minus and ``'TE'`` spellings are accepted.

        >>> Cell.parse("T-E+") is Cell.E_ONLY, Cell.parse("T−E−") is Cell.NEITHER
        (True, True)
        """
        if isinstance(value, Cell):
            return value
        if isinstance(value, str):
            key = value.strip().upper().replace("−", "-").replace("–", "-").replace(" ", "")
            for cell in cls:
                if cell.value == key:
                    return cell
        raise ValueError(f"Unknown cell label {value!r}; expected one of {[c.value for c in cls]}.")

    @classmethod
    def from_flags(cls, tool: bool, entity: bool) -> Cell:
        return {
            (True, True): cls.TE,
            (True, False): cls.T_ONLY,
            (False, True): cls.E_ONLY,
            (False, False): cls.NEITHER,
        }[(bool(tool), bool(entity))]

    def __str__(self) -> str:
        return self.value


#: Cells in table order.
CELLS: tuple[Cell, ...] = tuple(Cell)


#: Code of each cell: its position in :data:`CELLS`.
_CODE = {c: k for k, c in enumerate(CELLS)}
_CELL_ARRAY = np.array(CELLS, dtype=object)


def cell_codes(cells: Any, name: str = "cells") -> NDArray[np.int64]:
    """The integer code of each unit's cell: its position in :data:`CELLS` (0 = ``T+E+``).

    Each distinct label is parsed once, so selecting a cell is an integer comparison
    (``codes == k``) rather than a Python loop over cell objects. Raises ``ValueError``
    naming the positions of unknown labels.

    >>> from osustat.cells import cell_codes
    >>> cell_codes(["T+E+", "T-E-", "T+E+"]).tolist()
    [0, 3, 0]
    """
    values = list(np.asarray(cells, dtype=object).ravel()) if not isinstance(cells, list) else cells
    out = np.empty(len(values), dtype=np.int64)
    known: dict[Any, int] = {}
    bad: list[int] = []
    for i, v in enumerate(values):
        try:
            out[i] = known[v]
        except (KeyError, TypeError):  # first sight of the label, or an unhashable one
            try:
                code = _CODE[Cell.parse(v)]
            except ValueError:
                bad.append(i)
                continue
            out[i] = code
            try:
                known[v] = code
            except TypeError:
                pass
    if bad:
        shown = list_some((f"{i} ({values[i]!r})" for i in bad), quote=False)
        raise ValueError(
            f"`{name}` has unknown cell labels at positions {shown}; expected one of "
            f"{[c.value for c in Cell]}."
        )
    return out


def per_cell_values(values: Any, name: str) -> dict[Cell, float]:
    """A mapping cell -> finite number, from a mapping (keys parsed with :meth:`Cell.parse`)
    or a length-4 sequence in table order; `name` words the errors.

    >>> from osustat.cells import per_cell_values
    >>> per_cell_values([0.1, 0.2, 0.3, 0.4], "effects")[Cell.NEITHER]
    0.4
    """
    if isinstance(values, Mapping):
        out = {}
        for key, v in values.items():
            try:
                cell = Cell.parse(key)
            except ValueError:
                raise ValueError(
                    f"`{name}` has an unknown cell key {key!r}; expected keys among "
                    f"{[c.value for c in CELLS]}."
                ) from None
            out[cell] = float(v)
    else:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (4,):
            raise ValueError(
                f"`{name}` must be a mapping cell -> value or 4 values in the order "
                f"{[c.value for c in CELLS]}; got shape {arr.shape}."
            )
        out = dict(zip(CELLS, arr.tolist(), strict=True))
    bad = [str(c) for c, v in out.items() if not math.isfinite(v)]
    if bad:
        raise ValueError(f"`{name}` must be finite; NaN or infinite for cells {bad}.")
    return out


def as_cells(cells: Any, name: str = "cells") -> NDArray[np.object_]:
    """Parse a sequence of labels into an object array of :class:`Cell`.

    Raises ``ValueError`` naming the positions of unknown labels.
    """
    return _CELL_ARRAY[cell_codes(cells, name)]


def _evidence_iv(
    tools: Sequence[Any], entities: Sequence[Collection[str]] | None
) -> tuple[list[Any], list[frozenset[str]]]:
    if isinstance(tools, str) or not isinstance(tools, Sequence | np.ndarray):
        raise TypeError("`tools` must be a sequence with one tool signature (or None) per step.")
    tools = list(tools)
    if entities is None:
        ents: list[frozenset[str]] = [frozenset() for _ in tools]
    else:
        if isinstance(entities, str) or not isinstance(entities, Sequence | np.ndarray):
            raise TypeError("`entities` must be a sequence with one set of strings per step.")
        ents = []  # filled below
        for i, e in enumerate(entities):
            if isinstance(e, str):
                raise TypeError(
                    f"`entities[{i}]` must be a collection of strings, not a single string "
                    f"{e!r} (wrap it: {{{e!r}}})."
                )
            ents.append(frozenset(e or ()))
    if len(ents) != len(tools):
        raise ValueError(
            f"`tools` and `entities` must have one entry per evidence step; got {len(tools)} "
            f"and {len(ents)}."
        )
    return tools, ents


def label_cell(tools: Sequence[Any], entities: Sequence[Collection[str]] | None = None) -> Cell:
    """Label a query's evidence with its cell (Definition 2).

    Parameters
    ----------
    tools : sequence
        One tool signature per evidence step, or ``None`` for a step without a tool call.
        ``None`` never matches anything, including another ``None``.
    entities : sequence of collections of str, optional
        One set of entity strings per evidence step (empty when a step has none).

    Returns
    -------
    Cell
        T+ when some pair of distinct steps has the same (non-None) tool signature, E+ when
        some pair of distinct steps shares at least one entity string.

    Examples
    --------
    >>> from osustat import label_cell
    >>> label_cell(["search(q)", "book(id)", "search(q)"], [{"NYC"}, {"LAX"}, set()])
    <Cell.T_ONLY: 'T+E-'>
    >>> label_cell([None, None], [{"u1", "f9"}, {"f9"}])
    <Cell.E_ONLY: 'T-E+'>
    """
    tools_l, ents = _evidence_iv(tools, entities)
    real = [t for t in tools_l if t is not None]
    tool_shared = len(set(real)) < len(real)
    seen: set[str] = set()
    entity_shared = False
    for e in ents:
        if seen & e:
            entity_shared = True
            break
        seen |= e
    return Cell.from_flags(tool_shared, entity_shared)


@dataclass(frozen=True, kw_only=True)
class SharingRates:
    """Fraction of pairs of distinct evidence steps that share each view (Appendix D).

    A rate is NaN when the query has fewer than two evidence steps (no pairs).
    """

    entity: float
    tool: float
    subgoal: float
    n_pairs: int


def sharing_rates(
    tools: Sequence[Any],
    entities: Sequence[Collection[str]] | None = None,
    subgoals: Sequence[Any] | None = None,
) -> SharingRates:
    """Pairwise sharing rate of a query's evidence along the entity, tool and subgoal views.

    Parameters
    ----------
    tools, entities
        As in :func:`label_cell`.
    subgoals : sequence, optional
        One subgoal id per evidence step (``None`` matches nothing). Without it the subgoal
        rate is NaN.

    Returns
    -------
    SharingRates
        ``entity``: fraction of pairs sharing at least one entity string; ``tool``: fraction
        with an identical tool signature; ``subgoal``: fraction with an identical subgoal id;
        ``n_pairs``: number of unordered pairs.

    Examples
    --------
    >>> from osustat import sharing_rates
    >>> r = sharing_rates(["a", "a", "b"], [{"x"}, set(), {"x"}], subgoals=[1, 1, 1])
    >>> round(r.entity, 3), round(r.tool, 3), r.subgoal, r.n_pairs
    (0.333, 0.333, 1.0, 3)
    """
    tools_l, ents = _evidence_iv(tools, entities)
    if subgoals is not None:
        subgoals = list(subgoals)
        if len(subgoals) != len(tools_l):
            raise ValueError(
                f"`subgoals` must have one entry per evidence step; got {len(subgoals)} for "
                f"{len(tools_l)} steps."
            )
    pairs = list(itertools.combinations(range(len(tools_l)), 2))
    if not pairs:
        return SharingRates(entity=np.nan, tool=np.nan, subgoal=np.nan, n_pairs=0)

    def same(values: Sequence[Any], i: int, j: int) -> bool:
        return values[i] is not None and values[i] == values[j]

    tool = sum(same(tools_l, i, j) for i, j in pairs) / len(pairs)
    entity = sum(bool(ents[i] & ents[j]) for i, j in pairs) / len(pairs)
    if subgoals is None:
        subgoal = np.nan
    else:
        subgoal = sum(same(subgoals, i, j) for i, j in pairs) / len(pairs)
    return SharingRates(entity=entity, tool=tool, subgoal=subgoal, n_pairs=len(pairs))
