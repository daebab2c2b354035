import numpy as np
import pandas as pd
import pytest

from osustat import validate_records
from osustat.retrieval import QueryOutcome, hit_at_k, near_far_recall, outcomes_to_records, recall


class TestMetrics:
    def test_hit_at_k_is_at_least_k_evidence_steps(self):
        assert hit_at_k([1, 2, 3], [2, 3, 9], k=2) == 1.0
        assert hit_at_k([1, 2], [2, 3, 9], k=2) == 0.0  # one evidence step: not Hit@2
        assert hit_at_k([2], [2, 3, 9], k=1) == 1.0
        assert hit_at_k([2, 2, 2], [2, 3], k=2) == 0.0  # duplicates count once

    def test_recall(self):
        assert recall([], [1, 2]) == 0.0
        assert recall([1, 2, 5], [1, 2]) == 1.0

    def test_empty_evidence_is_an_error(self):
        with pytest.raises(ValueError, match="Hit@k is undefined"):
            hit_at_k([1], [])
        with pytest.raises(ValueError, match="recall is undefined"):
            recall([1], [])
        with pytest.raises(ValueError, match="`k` must be >= 1"):
            hit_at_k([1], [1], k=0)

    def test_near_far_boundary(self):
        near, far = near_far_recall([150], [150, 149], time=200)
        assert (near, far) == (1.0, 0.0)  # 200 - 150 = 50 is near, 51 is far
        assert np.isnan(near_far_recall([1], [1], time=10)[1])

    def test_records_validate(self):
        outcomes = [
            QueryOutcome("syn", "e1", f"q{i}", m, 256, 0, (1, 2), (1, 2, 180), 200, 30.0, "T+E+")
            for i in range(3)
            for m in ("a", "b")
        ]
        df = validate_records(pd.DataFrame(outcomes_to_records(outcomes)))
        assert set(df["metric"]) == {"hit@2", "recall", "recall_near", "recall_far"}
        assert len(df) == 6 * 4
