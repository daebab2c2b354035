"""The private resampling module: its sign stream is numpy's int8 draw, bit for bit."""

import itertools

import numpy as np
import pytest

from osustat._resampling import (
    chunk_rows,
    enumerated_sums,
    null_sum_blocks,
    null_sums,
    sign_matrix,
)


def reference_signs(seed, n_resamples, width):
    """The stream as first written: int8 draws of 0/1 per chunk, 1 meaning sign -1."""
    gen = np.random.default_rng(seed)
    rows = chunk_rows(width)
    parts = []
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        parts.append(gen.integers(0, 2, size=(stop - start, width), dtype=np.int8))
    return 1 - 2 * np.concatenate(parts).astype(np.int64)


def reference_null_sums(seed, n_resamples, width, columns):
    gen = np.random.default_rng(seed)
    rows = chunk_rows(width)
    out = np.empty((n_resamples, columns.shape[1]))
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        bits = gen.integers(0, 2, size=(stop - start, width), dtype=np.int8)
        out[start:stop] = (1.0 - 2.0 * bits[:, : columns.shape[0]]) @ columns
    return out


@pytest.mark.parametrize(
    ("width", "n_resamples"),
    [(1, 5), (3, 7), (5, 1001), (328, 10_000), (333_333, 20)],  # last: 4 chunks, odd sizes
)
def test_sign_matrix_is_numpys_int8_stream(width, n_resamples):
    np.testing.assert_array_equal(
        sign_matrix(11, n_resamples, width), reference_signs(11, n_resamples, width)
    )


@pytest.mark.parametrize(("width", "used", "k"), [(328, 328, 5), (41, 30, 1), (1000, 999, 3)])
def test_null_sums_equal_the_reference_bit_for_bit(width, used, k):
    rng = np.random.default_rng(3)
    columns = rng.normal(size=(used, k)) * 10.0 ** rng.uniform(-6, 6, size=(used, 1))
    ours = null_sums(5, 6_001, width, columns)
    np.testing.assert_array_equal(ours, reference_null_sums(5, 6_001, width, columns))


def test_blocks_cover_the_rows_in_order():
    columns = np.ones((400_000, 1))  # 5 rows per chunk
    spans = [(a, b) for a, b, _ in null_sum_blocks(0, 12, 400_000, columns)]
    assert spans == [(0, 5), (5, 10), (10, 12)]


def test_enumerated_sums_match_brute_force():
    d = np.array([0.5, -1.25, 2.0, 3.5, 0.125])
    brute = sorted(float(np.dot(s, d)) for s in itertools.product([1.0, -1.0], repeat=d.size))
    ours = enumerated_sums(d)
    assert ours[0] == d.sum()
    assert sorted(ours.tolist()) == brute
