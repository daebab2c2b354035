"""Scoring of one evidence selection: soft and hard recall of the listed events (paper §6.6).

The listed events and the ground-truth evidence steps are encoded with the same encoder;
**soft recall** is the mean over evidence steps of the best cosine to a listed event, **hard
recall** at ``tau`` the fraction of evidence steps whose best cosine is strictly above
``tau``. :mod:`osustat.analyses.evidence_selection.run` runs the selections.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from osustat._validation import as_float_matrix

__all__ = [
    "SelectionScore",
    "check_threshold",
    "hard_recall_metric",
    "max_cosines",
    "score_selection",
]


def check_threshold(threshold: Any) -> float:
    """`threshold` of hard recall as a float (a cosine in [-1, 1)), or a clear error."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float | np.floating):
        raise TypeError(f"`threshold` must be a number; got {type(threshold).__name__}.")
    if not -1.0 <= float(threshold) < 1.0:
        raise ValueError(f"`threshold` must be a cosine in [-1, 1); got {threshold}.")
    return float(threshold)


def hard_recall_metric(threshold: float = 0.5) -> str:
    """Record metric name of hard recall at `threshold`.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.scoring import hard_recall_metric
    >>> hard_recall_metric(0.5), hard_recall_metric(0.65)
    ('hard_recall@0.5', 'hard_recall@0.65')
    """
    return f"hard_recall@{check_threshold(threshold):g}"


def _matrix_iv(x: Any, name: str) -> NDArray[np.float64]:
    arr = as_float_matrix(
        x, name, shape="(n_rows, dim) (rows are embeddings)", min_rows=0, min_cols=0
    )
    norms = np.linalg.norm(arr, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"`{name}` has zero vectors (no direction) in rows {zero[:10].tolist()}.")
    return arr / norms[:, None] if arr.size else arr


def max_cosines(evidence: Any, listed: Any) -> NDArray[np.float64]:
    """For each evidence embedding, its largest cosine to any listed-event embedding.

    Parameters
    ----------
    evidence : array_like, shape (n_evidence, dim)
        Ground-truth evidence step embeddings (at least one row).
    listed : array_like, shape (n_listed, dim)
        Listed-event embeddings; may have no rows (then every maximum is 0).

    Returns
    -------
    numpy.ndarray, shape (n_evidence,)

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.scoring import max_cosines
    >>> max_cosines([[1, 0], [0, 1]], [[3, 4]]).round(2).tolist()
    [0.6, 0.8]
    """
    ev = _matrix_iv(evidence, "evidence")
    if ev.shape[0] == 0:
        raise ValueError("`evidence` must hold at least one evidence step embedding.")
    ls = np.asarray(listed, dtype=np.float64)
    if ls.size == 0:
        return np.zeros(ev.shape[0])
    ls = _matrix_iv(listed, "listed")
    if ls.shape[1] != ev.shape[1]:
        raise ValueError(
            f"`evidence` and `listed` must have the same dimension; got {ev.shape[1]} and "
            f"{ls.shape[1]}."
        )
    return np.clip((ev @ ls.T).max(axis=1), -1.0, 1.0)


@dataclass(frozen=True)
class SelectionScore:
    """Soft and hard recall of one selection.

    Attributes
    ----------
    soft_recall : float
        Mean over evidence steps of the max cosine to any listed event.
    hard_recall : float
        Fraction of evidence steps whose max cosine exceeds `threshold`.
    threshold : float
    max_cosines : tuple of float
        Per evidence step (keep these to re-score at another threshold).
    n_listed : int
    """

    soft_recall: float
    hard_recall: float
    threshold: float
    max_cosines: tuple[float, ...]
    n_listed: int


def score_selection(evidence: Any, listed: Any, *, threshold: float = 0.5) -> SelectionScore:
    """Soft and hard recall of listed events against ground-truth evidence embeddings.

    Parameters
    ----------
    evidence, listed : array_like
        As in :func:`max_cosines`; rows are normalized here, so any non-zero embeddings do.
    threshold : float
        Hard-recall threshold on the cosine (strict ``>``); the paper's .5 lies between
        unrelated pairs (about .1-.2) and paraphrases (about .7 and above).

    Returns
    -------
    SelectionScore

    Examples
    --------
    Evidence ``e1 = (1, 0)``, ``e2 = (0, 1)``; listed ``l = (3, 4)/5``: cosines .6 and .8.

    >>> from osustat.analyses.evidence_selection.scoring import score_selection
    >>> s = score_selection([[1, 0], [0, 1]], [[3, 4]], threshold=0.7)
    >>> round(s.soft_recall, 6), s.hard_recall
    (0.7, 0.5)
    """
    tau = check_threshold(threshold)
    m = max_cosines(evidence, listed)
    n_listed = 0 if np.asarray(listed).size == 0 else int(np.asarray(listed).shape[0])
    return SelectionScore(
        float(m.mean()), float(np.mean(m > tau)), tau, tuple(float(v) for v in m), n_listed
    )
