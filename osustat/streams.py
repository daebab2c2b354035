"""Named random streams: one seed per test, from the master seed and the test's name.

A pipeline that hands one generator to its tests in turn makes every Monte Carlo p-value depend
on how many tests ran before it: adding a comparison shifts the stream of all later ones. One
seed shared by every test makes their Monte Carlo errors identical instead. Here each test gets
its own :class:`numpy.random.SeedSequence`, keyed by the master seed and a stable hash of the
test's name (SHA-256, never Python's salted ``hash``), so a test's p-value is a function of
(master seed, its name, its data) only: adding, removing or reordering other tests leaves it
unchanged, and distinct names give independent streams.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np

__all__ = ["stream_rng", "stream_seed"]


def _key(name: tuple[object, ...]) -> tuple[int, ...]:
    if not name:
        raise ValueError("a stream needs a name: pass at least one part after `seed`.")
    text = "\x1f".join(str(part) for part in name)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def stream_seed(seed: int, *name: object) -> np.random.SeedSequence:
    """The seed of the test called `name` under master `seed`.

    Parameters
    ----------
    seed : int
        The run's master seed (non-negative).
    *name : object
        The test's name, in parts (e.g. ``"tau-bench", "hit@2", 256, "T+E+"``); parts are
        joined as text, so ``1`` and ``"1"`` name the same stream.

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(seed, spawn_key=k)`` with ``k`` four 32-bit words of the SHA-256 of
        the name.

    Examples
    --------
    >>> from osustat.streams import stream_seed
    >>> a, b = stream_seed(0, "table4", "T+E+"), stream_seed(0, "table4", "T+E+")
    >>> a.generate_state(2).tolist() == b.generate_state(2).tolist()
    True
    >>> bool(stream_seed(0, "x").generate_state(1)[0] == stream_seed(0, "y").generate_state(1)[0])
    False
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise TypeError(f"`seed` must be a non-negative integer; got {seed!r}.")
    return np.random.SeedSequence(int(seed), spawn_key=_key(name))


def stream_rng(seed: int, *name: object) -> np.random.Generator:
    """A generator for the test called `name` under master `seed` (see :func:`stream_seed`).

    >>> from osustat.streams import stream_rng
    >>> float(stream_rng(7, "a").random()) == float(stream_rng(7, "a").random())
    True
    """
    return np.random.default_rng(stream_seed(seed, *name))
