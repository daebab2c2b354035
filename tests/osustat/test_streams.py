"""Named random streams: a test's seed depends on the master seed and its name only."""

import numpy as np
import pytest

from osustat import paired_signflip_test
from osustat.streams import stream_rng, stream_seed


class TestStreamSeed:
    # -- Input validation --
    @pytest.mark.parametrize("seed", [-1, 1.5, True, "0", None])
    def test_bad_seed(self, seed):
        with pytest.raises(TypeError, match="`seed` must be a non-negative integer"):
            stream_seed(seed, "t")

    def test_needs_a_name(self):
        with pytest.raises(ValueError, match="a stream needs a name"):
            stream_seed(0)

    # -- Reference values --
    def test_stable_across_processes(self):
        # SHA-256 of "table4\x1fT+E+", first 16 bytes as 4 little-endian words; fixed, so a
        # salted hash() (PYTHONHASHSEED) could not have produced it.
        # python3 -c "import hashlib, struct;
        #   print(struct.unpack('<4I', hashlib.sha256(b'table4\x1fT+E+').digest()[:16]))"
        assert stream_seed(0, "table4", "T+E+").spawn_key == (
            3006763592,
            777397760,
            3217259888,
            3733211664,
        )

    # -- Properties --
    def test_same_name_same_stream_other_name_other_stream(self):
        a = stream_rng(3, "tau", "hit@2", 256).random(5)
        assert np.array_equal(a, stream_rng(3, "tau", "hit@2", 256).random(5))
        assert not np.array_equal(a, stream_rng(3, "tau", "hit@2", 64).random(5))
        assert not np.array_equal(a, stream_rng(4, "tau", "hit@2", 256).random(5))

    def test_adding_a_test_leaves_the_others_p_values(self):
        """p of a named test is the same whether other tests run before it or not."""
        d = np.random.default_rng(0).normal(0.1, 1.0, size=(3, 60))

        def run(names):
            return {
                n: paired_signflip_test(
                    d[k], np.zeros(60), n_resamples=999, rng=stream_rng(0, n)
                ).pvalue
                for k, n in names
            }

        few = run([(0, "a"), (2, "c")])
        more = run([(1, "b"), (0, "a"), (2, "c")])
        assert few["a"] == more["a"] and few["c"] == more["c"]
        # one generator handed from test to test (the old way) does not have this property
        shared = np.random.default_rng(0)
        first = paired_signflip_test(d[0], np.zeros(60), n_resamples=999, rng=shared).pvalue
        shared = np.random.default_rng(0)
        paired_signflip_test(d[1], np.zeros(60), n_resamples=999, rng=shared)
        after = paired_signflip_test(d[0], np.zeros(60), n_resamples=999, rng=shared).pvalue
        assert first != after
