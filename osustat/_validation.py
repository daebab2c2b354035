"""Input normalization shared by the public functions (scipy's ``_<name>_iv`` habit).

Every check raises ``ValueError``/``TypeError`` that names the argument in backticks and,
where it helps, the offending positions, so a user can find the bad row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Sized
from typing import Any

import numpy as np
from numpy.typing import NDArray

ALTERNATIVES = ("two-sided", "greater", "less")

#: Most offending positions listed in an error message before it says "and N more".
_MAX_LISTED = 10


def list_some(items: Iterable[Any], limit: int = _MAX_LISTED, *, quote: bool = True) -> str:
    """Render up to `limit` items for an error message, saying how many were left out."""
    items = list(items)
    shown = ", ".join(repr(x) if quote and isinstance(x, str) else str(x) for x in items[:limit])
    if len(items) > limit:
        shown += f", ... and {len(items) - limit} more"
    return shown


def as_float_vector(x: Any, name: str, *, min_size: int = 1) -> NDArray[np.float64]:
    """Return `x` as a finite 1-D float array or raise naming `name` and the bad positions."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be array-like of real numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"`{name}` must be finite; NaN or infinite values at positions {list_some(bad)}."
        )
    if arr.size < min_size:
        raise ValueError(f"`{name}` must have at least {min_size} observations; got {arr.size}.")
    return arr


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"`alternative` must be one of {set(ALTERNATIVES)}; got {alternative!r}.")
    return alternative


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"`{name}` must be an integer; got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}; got {value}.")
    return int(value)


def check_level(level: Any, name: str = "level") -> float:
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number in (0, 1); got {level!r}.") from None
    if not 0.0 < level < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1); got {level}.")
    return level


def check_same_length(arrays: Sequence[tuple[str, Sized]]) -> None:
    """Raise when the named sequences differ in length, giving every length."""
    lengths = {name: len(a) for name, a in arrays}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise ValueError(f"Arguments must have equal lengths: {described}.")


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """``np.random.default_rng(rng)`` with an error that names the argument (SPEC 7)."""
    if isinstance(rng, bool) or isinstance(rng, float | np.floating):
        raise TypeError(
            f"`{name}` must be None, a non-negative integer seed, a SeedSequence or a "
            f"numpy.random.Generator; got {rng!r}."
        )
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"`{name}` must be None, a non-negative integer seed, a SeedSequence or a "
            f"numpy.random.Generator; got {rng!r} ({exc})."
        ) from None


def power_of_two_scale(x: NDArray[np.float64]) -> int:
    """Exponent ``e`` such that ``ldexp(x, -e)`` has largest magnitude in [0.5, 1).

    Scaling by a power of two is exact in floating point, so resampling statistics computed on
    the rescaled values are bit-for-bit the rescaled statistics: sums of huge values cannot
    overflow and squares of tiny ones cannot underflow. 0 for an all-zero array.
    """
    top = float(np.max(np.abs(x), initial=0.0))
    return int(np.frexp(top)[1]) if top > 0 else 0
