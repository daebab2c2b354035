"""Validated records, the metric registry, the typed row and integer cell codes."""

import numpy as np
import pandas as pd
import pytest

import osustat.schema
from osustat import paired, validate_records
from osustat.audit.claims import parse_claims
from osustat.cells import CELLS, Cell, as_cells, cell_codes
from osustat.metrics import METRICS, metric_spec, normalize_metric
from osustat.record_row import RecordRow
from osustat.retrieval.metrics import QueryOutcome, outcomes_to_records
from osustat.schema import ValidatedRecords


def records(metric="hit@2", values=(1, 0, 0, 0)):
    return pd.DataFrame(
        {
            "episode_id": ["e1"] * 4,
            "query_id": ["q1", "q2"] * 2,
            "method": ["a", "a", "b", "b"],
            "budget": 256,
            "metric": metric,
            "value": list(values),
            "cell": ["T+E+", "T-E-"] * 2,
        }
    )


class TestValidatedRecords:
    def test_validated_once_and_used_as_is(self, monkeypatch):
        checked = validate_records(records())
        assert isinstance(checked, ValidatedRecords)
        assert validate_records(checked) is checked

        def fail(df):
            raise AssertionError("validated again")

        monkeypatch.setattr(osustat.schema, "_check_metric_values", fail)
        p = paired(checked, "a", "b", metric="hit@2", budget=256)  # no second check
        assert p.differences.tolist() == [1.0, 0.0]
        with pytest.raises(AssertionError, match="validated again"):
            paired(records(), "a", "b", metric="hit@2", budget=256)

    def test_derived_frames_are_plain_and_checked_again(self):
        checked = validate_records(records())
        assert type(checked[checked["value"] > 0]) is pd.DataFrame
        assert type(checked.assign(value=2.0)) is pd.DataFrame
        with pytest.raises(ValueError, match="hit@k values must be 0 or 1"):
            validate_records(checked.assign(value=2.0))


class TestMetricRegistry:
    @pytest.mark.parametrize(
        ("metric", "family", "binary"),
        [
            ("hit@2", "hit@k", True),
            ("recall", "recall", False),
            ("recall_near", "recall", False),
            ("soft_recall", "soft_recall", False),
            ("hard_recall@0.5", "recall", False),
            ("tokens", "tokens", False),
        ],
    )
    def test_families(self, metric, family, binary):
        spec = metric_spec(metric)
        assert spec is not None and spec.name == family and spec.binary is binary
        assert sum(s.matches(metric) for s in METRICS) == 1

    def test_unknown_and_unbounded_metrics_are_free(self):
        assert metric_spec("ndcg@10") is None
        validate_records(records("ndcg@10", (0.3, 7.0, -2.0, 0.0)))
        assert not metric_spec("soft_recall").unit_interval  # cosines: no [0, 1] bound
        validate_records(records("soft_recall", (0.3, 1.2, -0.4, 0.0)))

    @pytest.mark.parametrize(
        ("metric", "value", "message"),
        [
            ("recall_far", 1.5, r"recall values must lie in \[0, 1\]"),
            ("hard_recall@0.5", -0.1, r"recall values must lie in \[0, 1\]"),
            ("tokens", -3.0, "tokens values must lie in >= 0"),
            ("hit@5", 0.5, "hit@k values must be 0 or 1"),
        ],
    )
    def test_records_enforce_the_registry(self, metric, value, message):
        with pytest.raises(ValueError, match=message + ".*rows 2"):
            validate_records(records(metric, (0, 0, value, 0)))

    def test_claims_bound_the_same_metrics(self):
        text = """
        [[claim]]
        id = "c"
        family = "f"
        treatment = "a"
        baseline = "b"
        metric = "{m}"
        budget = 256
        cell = "T+E+"
        direction = "greater"
        threshold = 1.5
        """
        with pytest.raises(ValueError, match="impossible for metric 'recall_near'"):
            parse_claims(text.format(m="recall_near"))
        parse_claims(text.format(m="tokens"))  # not a [0, 1] metric: any threshold

    def test_normalize(self):
        assert normalize_metric(" Hit @2 ") == "hit@2"


def test_record_rows_fix_the_columns():
    o = QueryOutcome("syn", "e1", "q1", "m", 256, 0, (3, 7), (3, 7, 100), 120, 30.0, "T+E+")
    rows = outcomes_to_records([o])
    assert all(tuple(r) == RecordRow._fields for r in rows)
    assert RecordRow(**rows[0]).value == 1.0


class TestCellCodes:
    def test_codes_are_table_positions(self):
        labels = ["T-E-", Cell.TE, "T+E-", "t-e+", "T−E−"]
        codes = cell_codes(labels)
        assert codes.tolist() == [3, 0, 1, 2, 3]
        assert [CELLS[k] for k in codes] == list(as_cells(labels))

    def test_unknown_labels_named(self):
        with pytest.raises(ValueError, match=r"positions 1 \('x'\), 2 \(nan\)"):
            cell_codes(["T+E+", "x", np.nan])


class TestIssue23SilentAnswers:
    """Inputs the records path used to accept and answer wrongly (issue 23)."""

    @pytest.mark.parametrize("budget", [0, -128])
    def test_nonpositive_budgets_are_refused_everywhere(self, budget):
        df = records().assign(budget=budget)
        with pytest.raises(ValueError, match=r"`budget` must be positive \(a token budget\)"):
            validate_records(df)
        with pytest.raises(ValueError, match=r"`budget` must be positive \(a token budget\)"):
            paired(df, "a", "b", metric="hit@2", budget=budget)
        with pytest.raises(ValueError, match=r"`budget` must be positive \(a token budget\)"):
            osustat.analyze(df, treatment="a", baseline="b")

    def test_ids_mixing_text_and_numbers_are_refused(self):
        # 1 and "1" became one episode (117 -> 116 episodes)
        df = records().assign(episode_id=[1, "1", 1, "1"])
        with pytest.raises(ValueError, match=r"`episode_id` mixes text and numbers.*rows 0, 2"):
            validate_records(df)
        df = records().assign(query_id=["q1", 2, "q1", 2])
        with pytest.raises(ValueError, match=r"`query_id` mixes text and numbers"):
            validate_records(df)
        assert validate_records(records().assign(episode_id=7)).episode_id.tolist() == ["7"] * 4
