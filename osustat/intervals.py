"""The one confidence-interval type of the statistics core."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["ConfidenceInterval"]


@dataclass(frozen=True, kw_only=True)
class ConfidenceInterval:
    """A two-sided confidence interval ``[low, high]`` at `level`.

    Every interval of the core is one: sign-flip inversion
    (:meth:`SignFlipResult.confidence_interval`), the bootstrap (:class:`BootstrapCI` is a
    ``ConfidenceInterval`` that also carries its estimate and resampling sizes) and the
    Fieller interval of a ratio (:attr:`RatioResult.interval`). It unpacks and indexes as
    the pair ``(low, high)``, as the bare tuples it replaces did.

    Attributes
    ----------
    low, high : float
        Bounds; ``-inf``/``inf`` for an unbounded side.
    level : float
        Confidence level in (0, 1).
    method : str
        How the interval was computed.

    Examples
    --------
    >>> from osustat import ConfidenceInterval
    >>> ci = ConfidenceInterval(low=-0.1, high=0.3, level=0.95, method="example")
    >>> low, high = ci
    >>> (low, high) == (ci[0], ci[1]), ci.contains(0.0)
    (True, True)
    """

    low: float
    high: float
    level: float
    method: str

    def __iter__(self) -> Iterator[float]:
        yield self.low
        yield self.high

    def __getitem__(self, index: int) -> float:
        return (self.low, self.high)[index]

    def __len__(self) -> int:
        return 2

    def contains(self, value: float) -> bool:
        """Whether ``low <= value <= high``."""
        return self.low <= value <= self.high
