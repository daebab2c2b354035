"""The claim model: kinds, keys, and the frozen :class:`Claim` / :class:`ClaimsFile` types.

Parsing and validation of the TOML claims file live in :mod:`osustat.audit.claims`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from osustat.cells import Cell
from osustat.multitest import CORRECTIONS

__all__ = [
    "CLAIM_KEYS",
    "DIRECTIONS",
    "FAMILY_CORRECTIONS",
    "KINDS",
    "SEED_HANDLING",
    "UNITS",
    "Claim",
    "ClaimsFile",
    "Family",
    "ReportedP",
]

#: Claimed direction of ``treatment - baseline`` relative to ``threshold``.
DIRECTIONS = ("greater", "less")
#: How the claim's own p-value treated several seeds: ``'average'`` (per-query average
#: across seeds, then one paired test; Appendix F), ``'pooled'`` (each (query, seed) pair
#: counted as an independent unit) or ``'fisher'`` (per-seed p-values Fisher-combined).
SEED_HANDLING = ("average", "pooled", "fisher")
UNITS = ("query", "episode")
#: Claim kinds: a paired difference (tested), an ordering of means (descriptive, no test),
#: a method x cell interaction (tested), equivalence within a margin (TOST) and a relative
#: effect (ratio of means, Fieller CI).
KINDS = ("difference", "means", "interaction", "equivalence", "relative")
#: Corrections a family may declare as the one its authors applied (``'none'``: each claim
#: at its own level, the paper's practice).
FAMILY_CORRECTIONS = ("none", *CORRECTIONS)

#: key -> (required, description); the order is the order of docs/audit.md.
CLAIM_KEYS: dict[str, tuple[bool, str]] = {
    "id": (True, "unique name of the claim"),
    "family": (True, "correction family the claim belongs to"),
    "kind": (False, "'difference' (default), 'means', 'interaction', 'equivalence', 'relative'"),
    "treatment": (True, "method name in the records"),
    "baseline": (True, "method name in the records"),
    "metric": (True, "metric name, e.g. 'hit@2' or 'recall'"),
    "budget": (True, "token budget (positive integer)"),
    "cell": (False, "'T+E+', 'T+E-', 'T-E+', 'T-E-' or 'aggregate' (all kinds but interaction)"),
    "direction": (False, "'greater' or 'less' (difference, means, relative kinds)"),
    "threshold": (False, "claimed bound on the effect (default 0; relative: on the ratio - 1)"),
    "margin": (False, "equivalence margin m > 0: the claim is |treatment - baseline| < m"),
    "unit": (False, "'query' (default) or 'episode'"),
    "benchmark": (False, "benchmark name in the records"),
    "seed": (False, "use only this seed of the records (per-seed claims)"),
    "reported_effect": (False, "the effect as printed (metric units)"),
    "reported_means": (False, "[treatment mean, baseline mean] as printed"),
    "reported_p": (False, "p as printed: a number or '<.001', '<=.002', '>=.05', ..."),
    "reported_ci": (False, "[low, high] as printed"),
    "reported_n": (False, "number of units as printed"),
    "reported_resamples": (False, "sign flips / permutations the claim's test used"),
    "reported_over": (False, "'query': the printed effect or means weigh every query alike"),
    "seeds": (False, "how the claim's p treated seeds: 'average' (default), 'pooled', 'fisher'"),
    "source": (False, "where the claim is printed (table, row)"),
    "note": (False, "free text"),
}
_P_TEXT = re.compile(r"^\s*(<=|>=|<|>|=)?\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class ReportedP:
    """A p-value as printed: ``relation`` is one of ``'='``, ``'<'``, ``'<='``, ``'>'``, ``'>='``.

    >>> from osustat.audit.claim import ReportedP
    >>> ReportedP.parse("<.001"), ReportedP.parse(0.022).text
    (ReportedP(relation='<', value=0.001, text='<.001'), '0.022')
    """

    relation: str
    value: float
    text: str

    @classmethod
    def parse(cls, raw: Any) -> ReportedP:
        if isinstance(raw, bool):
            raise TypeError(f"a p-value must be a number or a string like '<.001'; got {raw!r}.")
        if isinstance(raw, int | float):
            value, relation, text = float(raw), "=", f"{float(raw):g}"
        elif isinstance(raw, str):
            m = _P_TEXT.match(raw)
            if m is None:
                raise ValueError(
                    f"cannot read p-value {raw!r}; write a number or a bound such as "
                    "'<.001', '<=.002', '=.022' or '>=.05'."
                )
            relation, value, text = m.group(1) or "=", float(m.group(2)), raw.strip()
        else:
            raise TypeError(
                f"a p-value must be a number or a string like '<.001'; got {type(raw).__name__}."
            )
        if not (0.0 < value <= 1.0):
            raise ValueError(f"a p-value must lie in (0, 1]; got {raw!r}.")
        return cls(relation, value, text)

    @property
    def upper(self) -> float:
        """The largest p the printed value allows (1 for ``'>'``/``'>='`` bounds)."""
        return 1.0 if self.relation in (">", ">=") else self.value

    def __str__(self) -> str:
        """``'p = 0.022'`` or ``'p <.001'``."""
        return f"p = {self.text}" if self.text[:1] not in "<>=" else f"p {self.text}"


@dataclass(frozen=True)
class Family:
    """A correction family: the claims whose p-values are corrected together.

    ``correction`` is the correction the claims' authors applied (the "as tested" standard;
    ``'none'`` by default, the paper's practice); ``strict_correction`` is the one the strict
    standard applies over the family's checkable claims (Holm by default).
    """

    name: str
    correction: str = "none"
    alpha: float = 0.05
    description: str = ""
    strict_correction: str = "holm"


@dataclass(frozen=True)
class Claim:
    """One claim about ``treatment - baseline`` (see :data:`CLAIM_KEYS` for the fields).

    ``cell`` is None for the aggregate (and for interaction claims, which span the cells).
    ``direction`` is ``'two-sided'`` for the kinds without one (interaction, equivalence).
    ``claimed_effect`` is the magnitude the claim stands for: the reported effect, else the
    difference of the reported means (for ``relative``: their ratio minus 1), else a nonzero
    threshold, else None.
    """

    id: str
    family: str
    treatment: str
    baseline: str
    metric: str
    budget: int
    cell: Cell | None
    direction: str
    threshold: float = 0.0
    unit: str = "query"
    benchmark: str | None = None
    reported_effect: float | None = None
    reported_means: tuple[float, float] | None = None
    reported_p: ReportedP | None = None
    reported_ci: tuple[float, float] | None = None
    reported_n: int | None = None
    reported_resamples: int | None = None
    seeds: str = "average"
    source: str = ""
    note: str = ""
    line: int | None = None
    kind: str = "difference"
    margin: float | None = None
    seed: int | None = None
    #: ``'query'`` when a claim tested at the episode unit prints its effect or means pooled
    #: over queries (an accuracy over questions): ER and ΔRI then compare like with like
    reported_over: str | None = None

    @property
    def cell_label(self) -> str:
        return "aggregate" if self.cell is None else self.cell.value

    @property
    def claimed_effect(self) -> float | None:
        if self.reported_effect is not None:
            return self.reported_effect
        if self.reported_means is not None:
            t, b = self.reported_means
            if self.kind == "relative":
                return t / b - 1.0 if b > 0 else None
            return t - b
        return self.threshold if self.threshold != 0 else None

    def statement(self) -> str:
        """What the claim asserts of ``treatment`` and ``baseline``, by kind (no scope).

        The one place a claim's kind becomes words: :meth:`describe` and the audit report
        (:mod:`osustat.reports.audit`) both build on it.

        >>> from osustat.audit.claim import Claim
        >>> Claim(id="a", family="f", treatment="osu", baseline="flat", metric="hit@2",
        ...       budget=256, cell=None, direction="greater", threshold=0.05).statement()
        'osu − flat > 0.05'
        """
        sign = ">" if self.direction == "greater" else "<"
        t, b = self.treatment, self.baseline
        if self.kind == "interaction":
            return f"{t} − {b} differs across cells"
        if self.kind == "equivalence":
            return f"|{t} − {b}| < {self.margin:g}"
        if self.kind == "relative":
            return f"{t} / {b} − 1 {sign} {self.threshold:g}"
        if self.kind == "means":
            return f"mean {t} {sign} mean {b}"
        return f"{t} − {b} {sign} {self.threshold:g}"

    @property
    def budget_label(self) -> str:
        """``'B=256'``; empty for answer-level records' placeholder budget of 1 (a graded
        answer has no budget of ours: ``osustat import``)."""
        from osustat.io.join import ANSWER_BUDGET

        return "" if self.budget == ANSWER_BUDGET else f"B={self.budget}"

    def describe(self) -> str:
        """One-line statement of the claim, e.g. ``'osu-mem − flat > 0 on hit@2, B=256, T+E+'``."""
        bench = f"{self.benchmark}, " if self.benchmark else ""
        seed = f", seed {self.seed}" if self.seed is not None else ""
        budget = f"{self.budget_label}, " if self.budget_label else ""
        where = f"{bench}{budget}{self.cell_label} ({self.unit}{seed})"
        descriptive = " (descriptive)" if self.kind == "means" else ""
        return f"{self.statement()} on {self.metric}, {where}{descriptive}"


@dataclass(frozen=True)
class ClaimsFile:
    """A parsed claims file: its claims in file order and their families."""

    claims: tuple[Claim, ...]
    families: dict[str, Family]
    title: str
    source: str
