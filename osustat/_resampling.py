"""Private resampling machinery shared by the sign-flip, interaction and bootstrap code.

One place for the memory bound of a resampling step (:data:`CHUNK_ELEMENTS`), the random
sign matrix of the sign-flip tests and its null sums, and the exact enumeration of all sign
patterns.

The sign matrix is a function of ``(seed, n_resamples, width)`` only. Its stream is fixed:
row chunks of :func:`chunk_rows` ``(width)`` rows, each drawn as
``Generator.integers(0, 2, size=(rows, width), dtype=np.int8)`` (bit 1 means sign -1). That
call takes each 0/1 value from the top bit of one byte of the generator's 32-bit output
stream (numpy's buffered Lemire draw for a range of 2), so the same bits are read here from
``integers(0, 2**32, dtype=np.uint32)`` -- the same 32-bit draws, ten times faster -- and
``tests/osustat/test_resampling.py`` checks the two streams are identical.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CHUNK_ELEMENTS",
    "chunk_rows",
    "enumerated_sums",
    "null_sum_blocks",
    "null_sums",
    "sign_chunks",
    "sign_matrix",
]

#: Elements (rows times width) of a resampling matrix generated at once; bounds memory and
#: fixes the random stream of the sign matrix (see the module docstring).
CHUNK_ELEMENTS = 2_000_000

_LITTLE_ENDIAN = sys.byteorder == "little"


def chunk_rows(width: int) -> int:
    """Rows of a ``(rows, width)`` resampling matrix drawn at once (at least 1)."""
    return max(1, CHUNK_ELEMENTS // max(width, 1))


def _sign_bytes(gen: np.random.Generator, rows: int, width: int) -> NDArray[np.int8]:
    """One chunk of the sign stream as int8 whose sign bit is the drawn bit.

    Equal in its sign bits to ``gen.integers(0, 2, size=(rows, width), dtype=np.int8)``,
    and it advances `gen` the same way: that call consumes ``ceil(rows * width / 4)`` 32-bit
    draws and returns the top bit of their bytes, lowest byte first.
    """
    count = rows * width
    if not _LITTLE_ENDIAN:  # byte order of the view below; keep the reference draw
        bits = gen.integers(0, 2, size=(rows, width), dtype=np.int8)
        return np.negative(bits, out=bits)  # 1 -> -1: sign bit set exactly for a drawn 1
    words = gen.integers(0, 2**32, size=-(-count // 4), dtype=np.uint32)
    return words.view(np.int8)[:count].reshape(rows, width)


def null_sum_blocks(
    seed: int, n_resamples: int, width: int, columns: NDArray[np.float64]
) -> Iterator[tuple[int, int, NDArray[np.float64]]]:
    """Yield ``(start, stop, S[start:stop] @ columns)`` over the random sign matrix ``S``.

    ``S`` is the ``(n_resamples, width)`` matrix of +-1 of the module docstring. `columns`
    may have fewer than `width` rows; the remaining ones count as zeros. Blocks are the
    chunks of the stream, one float64 matrix product each: BLAS rounding can depend on the
    number of rows of a product (splitting a chunk changed sums in the last bits), so fixed
    chunks keep the sums the same bit for bit from call to call.
    """
    used = columns.shape[0]
    # One float buffer for every chunk's signs: a fresh 16 MB array per chunk cost more in
    # page faults than the conversion itself (4x the time at 10^4 x 5,000 signs). The same
    # values in the same C-ordered shape: the products are the same bit for bit.
    buffer = np.empty((min(chunk_rows(width), n_resamples), used))
    for start, stop, raw in sign_chunks(seed, n_resamples, width):
        signs = buffer[: stop - start]
        np.copysign(1.0, raw[:, :used], out=signs)
        yield start, stop, signs @ columns


def sign_chunks(
    seed: int, n_resamples: int, width: int
) -> Iterator[tuple[int, int, NDArray[np.int8]]]:
    """Yield ``(start, stop, raw)`` per chunk of the sign matrix of `seed`.

    ``raw`` is int8 whose sign bit is the drawn bit: entry ``< 0`` means sign -1.
    """
    gen = np.random.default_rng(seed)
    rows = chunk_rows(width)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        yield start, stop, _sign_bytes(gen, stop - start, width)


def null_sums(
    seed: int, n_resamples: int, width: int, columns: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``S @ columns`` for the ``(n_resamples, width)`` random sign matrix ``S`` of `seed`."""
    out = np.empty((n_resamples, columns.shape[1]))
    for start, stop, sums in null_sum_blocks(seed, n_resamples, width, columns):
        out[start:stop] = sums
    return out


def sign_matrix(seed: int, n_resamples: int, width: int) -> NDArray[np.int8]:
    """The random sign matrix ``S`` of `seed` itself, as int8 +-1 (for checks and tests)."""
    parts = [
        np.where(raw < 0, -1, 1).astype(np.int8)
        for _, _, raw in sign_chunks(seed, n_resamples, width)
    ]
    return np.concatenate(parts) if parts else np.empty((0, width), dtype=np.int8)


def enumerated_sums(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """``s @ d`` for all ``2**m`` sign vectors ``s``, without the ``2**m x m`` sign matrix.

    The low and high halves of the sign bits are enumerated separately and added as an outer
    sum, so memory is one float per pattern. Entry 0 is the all-plus (observed) pattern.
    """
    m = d.size
    low = min(m, 16)

    def half(values: NDArray[np.float64]) -> NDArray[np.float64]:
        k = values.size
        bits = (np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1
        return ((1.0 - 2.0 * bits) @ values).astype(np.float64)

    low_sums = half(d[:low])
    high_sums = half(d[low:])
    return (high_sums[:, None] + low_sums[None, :]).ravel()
