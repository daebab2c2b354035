"""Consistency checks on a paper's own printed numbers (``osustat audit --check-paper``).

A claims audit (:func:`osustat.audit.run.audit`) asks whether *records* reproduce a paper's
claims. Some problems need no records at all: the printed numbers contradict each other, a
metric definition, or the paper's own sentences. This module checks such relations, listed
in a TOML file (``analyses/claims/paper_checks.toml``), and returns findings about the paper.

Kinds of check (:data:`CHECK_KINDS`):

``recall-hit-bound``
    With ``n`` evidence steps per query and ``Hit@k`` = share of queries with at least ``k``
    of them retrieved, a query's retrieved count ``c`` satisfies ``c >= k`` on a hit and
    ``c <= k - 1`` otherwise, so ``k H / n <= Recall <= ((k - 1)(1 - H) + n H) / n`` (for
    ``n = 3, k = 2``: ``Recall <= (1 + 2 Hit@2) / 3``). A printed (Hit@k, Recall) pair
    outside these bounds cannot come from one set of queries under these definitions.
``at-most``
    A printed value against a bound the paper's own text implies (e.g. a recall above the
    ceiling that evicting 13.2% of evidence steps would impose if they were unreachable).
``printed-gap-within-margin``
    A sentence that says printed values lie within a margin of a reference (e.g. a caption's
    "within ±1 pp of Flat Vector"), checked on the printed values.
``interaction-p-attainable``
    A printed p of the paper's centered sign-flip method x cell interaction test
    (Section 6.3), against the largest p the printed per-cell mean gaps allow for 0/1
    differences: every query's difference ±1 (the largest within-cell spread a 0/1 metric
    permits). A printed p far above it does not follow from the printed cells.

Each check returns a :class:`PaperCheck` with one row per printed cell and whether it holds.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from osustat.interaction import interaction_test

__all__ = ["CHECK_KINDS", "PaperCheck", "PaperRow", "check_paper", "load_paper_checks"]

CHECK_KINDS = (
    "recall-hit-bound",
    "at-most",
    "printed-gap-within-margin",
    "interaction-p-attainable",
)
_KEYS = {
    "recall-hit-bound": {"n_evidence", "k", "cells"},
    "at-most": {"value", "bound", "bound_from"},
    "printed-gap-within-margin": {"margin", "pairs"},
    "interaction-p-attainable": {"reported_p", "cell_sizes", "cell_gaps", "cells"},
}
_COMMON = {"id", "kind", "source", "statement"}


@dataclass(frozen=True)
class PaperRow:
    """One printed cell of a check: its label, the printed numbers, the bound, and whether
    the relation holds."""

    label: str
    printed: tuple[float, ...]
    bound: float
    holds: bool


@dataclass(frozen=True)
class PaperCheck:
    """A relation the paper's printed numbers must satisfy, and the rows that do not."""

    id: str
    kind: str
    source: str
    statement: str
    rows: tuple[PaperRow, ...]

    @property
    def violations(self) -> tuple[PaperRow, ...]:
        return tuple(r for r in self.rows if not r.holds)

    @property
    def holds(self) -> bool:
        return not self.violations


def load_paper_checks(path: str | Path) -> tuple[dict[str, Any], ...]:
    """Read the checks of a TOML file (``[[check]]`` tables); errors name the check."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"paper checks file {str(p)!r} does not exist.")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: not valid TOML ({exc}).") from None
    unknown = sorted(set(data) - {"title", "check"})
    if unknown:
        raise ValueError(f"{p}: unknown top-level key(s) {unknown}; known: ['check', 'title'].")
    out = []
    for i, raw in enumerate(data.get("check", []), 1):
        where = f"{p}: check #{i} ({raw.get('id', '?')!r})"
        kind = raw.get("kind")
        if kind not in CHECK_KINDS:
            raise ValueError(f"{where}: `kind` must be one of {list(CHECK_KINDS)}; got {kind!r}.")
        need = _COMMON | _KEYS[kind]
        optional = {"cells"} if kind == "interaction-p-attainable" else set()
        missing = sorted(need - optional - set(raw))
        extra = sorted(set(raw) - need)
        if missing or extra:
            raise ValueError(f"{where}: missing keys {missing}, unknown keys {extra}.")
        out.append(dict(raw))
    return tuple(out)


def _bound_rows(spec: dict[str, Any]) -> list[PaperRow]:
    n, k = int(spec["n_evidence"]), int(spec["k"])
    if not 1 <= k <= n:
        raise ValueError(f"check {spec['id']!r}: need 1 <= k <= n_evidence; got k={k}, n={n}.")
    rows = []
    for label, hit, recall in spec["cells"]:
        upper = ((k - 1) * (1 - hit) + n * hit) / n
        lower = k * hit / n
        holds = lower - 5e-4 <= recall <= upper + 5e-4  # printed to 3 decimals
        rows.append(PaperRow(str(label), (float(hit), float(recall)), upper, holds))
    return rows


def _interaction_row(spec: dict[str, Any], n_resamples: int, rng: Any) -> PaperRow:
    sizes = [int(x) for x in spec["cell_sizes"]]
    gaps = [float(x) for x in spec["cell_gaps"]]
    labels = spec.get("cells", ["T+E+", "T+E-", "T-E+", "T-E-"][: len(sizes)])
    d, cells = [], []
    for n, g, lab in zip(sizes, gaps, labels, strict=True):
        plus = round(n * (1 + g) / 2)
        d += [1.0] * plus + [-1.0] * (n - plus)
        cells += [lab] * n
    res = interaction_test(
        np.asarray(d), cells, method="centered-signflip", n_resamples=n_resamples, rng=rng
    )
    reported = float(spec["reported_p"])
    slack = 3 * math.sqrt(max(res.pvalue * (1 - res.pvalue), 1e-12) / n_resamples)
    holds = reported <= res.pvalue + slack or reported <= 2 * res.pvalue
    return PaperRow(f"p as printed {reported:g}", (reported,), float(res.pvalue), holds)


def check_paper(
    checks: tuple[dict[str, Any], ...], *, n_resamples: int = 10_000, rng: Any = 0
) -> tuple[PaperCheck, ...]:
    """Evaluate every check of :func:`load_paper_checks` (`rng` seeds the interaction test).

    Examples
    --------
    >>> spec = {"id": "b", "kind": "recall-hit-bound", "source": "T", "statement": "s",
    ...         "n_evidence": 3, "k": 2, "cells": [["ok", 0.5, 0.6], ["bad", 0.4, 0.7]]}
    >>> [(r.label, r.holds, round(r.bound, 3)) for r in check_paper((spec,))[0].rows]
    [('ok', True, 0.667), ('bad', False, 0.6)]
    """
    out = []
    gen = np.random.default_rng(rng)
    for spec in checks:
        kind = spec["kind"]
        if kind == "recall-hit-bound":
            rows = _bound_rows(spec)
        elif kind == "at-most":
            v, b = float(spec["value"]), float(spec["bound"])
            rows = [PaperRow(str(spec["bound_from"]), (v,), b, v <= b)]
        elif kind == "printed-gap-within-margin":
            m = float(spec["margin"])
            rows = [
                PaperRow(str(lab), (float(t), float(r)), m, abs(t - r) <= m + 5e-4)
                for lab, t, r in spec["pairs"]
            ]
        else:
            rows = [_interaction_row(spec, n_resamples, gen)]
        out.append(
            PaperCheck(
                str(spec["id"]), kind, str(spec["source"]), str(spec["statement"]), tuple(rows)
            )
        )
    return tuple(out)
