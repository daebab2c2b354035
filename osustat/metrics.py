"""The one registry of metric names: pattern, bounds, and whether values are 0/1.

Records (:func:`osustat.validate_records`) and claims (:func:`osustat.parse_claims`) read the
rules of a metric from here, so a metric's range is stated once. Names are compared after
removing whitespace and lower-casing (:func:`normalize_metric`); a metric that matches no
entry is allowed and only has to be finite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "METRICS",
    "MetricSpec",
    "count_metrics",
    "metric_spec",
    "normalize_metric",
]


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """What the values of a family of metrics may be.

    Attributes
    ----------
    name : str
        The family's name as documented (``'hit@k'``).
    pattern : str
        Regular expression the whole normalized metric name matches.
    low, high : float or None
        Bounds of a value (None: unbounded on that side).
    binary : bool
        Values are exactly 0 or 1.
    meaning : str
        One line for error messages and documentation.
    """

    name: str
    pattern: str
    low: float | None
    high: float | None
    binary: bool
    meaning: str

    def matches(self, metric: str) -> bool:
        return re.fullmatch(self.pattern, metric) is not None

    @property
    def unit_interval(self) -> bool:
        """Values lie in [0, 1] (so paired differences lie in [-1, 1])."""
        return self.low == 0.0 and self.high == 1.0


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name="hit@k",
        pattern=r"hit@\d+",
        low=0.0,
        high=1.0,
        binary=True,
        meaning="1 if at least k evidence steps were retrieved, else 0",
    ),
    MetricSpec(
        name="recall",
        pattern=r"(hard_)?recall(_near|_far)?(@[0-9.]+)?",
        low=0.0,
        high=1.0,
        binary=False,
        meaning="fraction of evidence retrieved (recall, recall_near, recall_far, recall@k, "
        "hard_recall@tau)",
    ),
    MetricSpec(
        name="soft_recall",
        pattern=r"soft_recall",
        low=None,  # a mean of cosines: in [-1, 1] for real embeddings, not range-checked
        high=None,
        binary=False,
        meaning="mean over evidence steps of the largest cosine to a listed event",
    ),
    MetricSpec(
        name="tokens",
        pattern=r"tokens",
        low=0.0,
        high=None,
        binary=False,
        meaning="tokens of the retrieved context",
    ),
)


def normalize_metric(metric: object) -> str:
    """The metric's canonical spelling: no whitespace, lower case (``'Hit @2'`` -> ``'hit@2'``)."""
    return "".join(str(metric).split()).lower()


def metric_spec(metric: str) -> MetricSpec | None:
    """The registry entry a (normalized) metric name belongs to, or None.

    >>> from osustat.metrics import metric_spec
    >>> metric_spec("hit@2").binary, metric_spec("recall_near").unit_interval
    (True, True)
    >>> metric_spec("ndcg@10") is None
    True
    """
    for spec in METRICS:
        if spec.matches(metric):
            return spec
    return None


def count_metrics(found: int, n_evidence: int, ks: Sequence[int]) -> list[tuple[str, float]]:
    """``hit@k`` for each k, then ``recall``, of a query with `found` of its evidence retrieved.

    The one definition used by every producer of records (``retrieval.outcomes_to_records``
    and, through :func:`osustat.io.evidence.evidence_metrics`, every loader of raw retrievals or
    TREC runs): ``hit@k`` is 1.0 when at least
    ``k`` of the ``n_evidence`` evidence steps were retrieved (the paper's Hit@2; *not* TREC
    Success@k), ``recall`` is ``found / n_evidence``.

    >>> from osustat.metrics import count_metrics
    >>> count_metrics(2, 3, (1, 2, 3))
    [('hit@1', 1.0), ('hit@2', 1.0), ('hit@3', 0.0), ('recall', 0.6666666666666666)]
    """
    if n_evidence < 1:
        raise ValueError("a query with no evidence has no hit@k or recall.")
    out = [(f"hit@{k}", float(found >= k)) for k in ks]
    out.append(("recall", found / n_evidence))
    return out
