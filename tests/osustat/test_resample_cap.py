"""One resample cap, :data:`osustat._validation.MAX_RESAMPLES`, for every resampling function,
with one message (red team item 3: `signflip_tests` accepted 50,000,000 and suggested 'at
most 134,217,728')."""

from __future__ import annotations

import numpy as np
import pytest

import osustat
from osustat._validation import MAX_RESAMPLES
from osustat.interaction import centered_size_at_equal_variances

ABOVE = MAX_RESAMPLES + 1
MESSAGE = r"`n_resamples` must be at most 33,554,432; got 33,554,433"


def test_the_cap_is_two_to_the_25():
    assert MAX_RESAMPLES == 2**25 == 33_554_432


def _cells(n_per: int = 5):
    return np.repeat(["T+E+", "T+E-", "T-E+", "T-E-"], n_per)


CALLS = {
    # ten columns: the memory check used to answer first, with its own ceiling
    "signflip_tests": lambda d: osustat.signflip_tests(
        [d[:30] + j for j in range(10)], n_resamples=ABOVE
    ),
    "westfall_young": lambda d: osustat.westfall_young(
        np.column_stack([d[:30], d[30:60]]), n_resamples=ABOVE
    ),
    "interaction_test": lambda d: osustat.interaction_test(d[:20], _cells(), n_resamples=ABOVE),
    "centered_size_at_equal_variances": lambda d: centered_size_at_equal_variances(
        [5, 5, 5, 5], n_datasets=10, n_resamples=ABOVE
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_one_above_the_cap_is_refused_with_the_one_message(name):
    d = np.random.default_rng(0).normal(0.1, 1, 60)
    with pytest.raises(ValueError, match=MESSAGE):
        CALLS[name](d)


def test_a_memory_ceiling_never_suggests_more_than_the_cap():
    # nine Monte Carlo columns at the cap exceed the null's memory: the suggestion is below it
    d = np.random.default_rng(0).normal(0.1, 1, 30)
    with pytest.raises(ValueError, match="use at most") as info:
        osustat.signflip_tests([d + j for j in range(9)], n_resamples=MAX_RESAMPLES)
    suggested = int(str(info.value).split("use at most ")[1].split(" ")[0].replace(",", ""))
    assert suggested <= MAX_RESAMPLES
