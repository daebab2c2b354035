import numpy as np
import pytest

from osustat.io.evidence import evidence_metrics, read_evidence
from osustat.io.inputs import records_from_retrievals
from osustat.retrieval import hit_at_k, recall


class TestEvidenceMetrics:
    # -- Input validation --
    def test_empty_evidence(self):
        with pytest.raises(ValueError, match="`evidence` is empty"):
            evidence_metrics(["1"], [])

    # -- Reference values --
    def test_agrees_with_the_retrieval_package(self):
        # The retrieval package's own hit@k/recall (integer step ids) are the reference.
        rng = np.random.default_rng(0)
        for _ in range(200):
            ev = rng.choice(60, size=int(rng.integers(1, 8)), replace=False)
            got = rng.choice(60, size=int(rng.integers(0, 20)), replace=False)
            m = evidence_metrics([str(x) for x in got], [str(x) for x in ev], hit_k=(1, 2, 3))
            for k in (1, 2, 3):
                assert m[f"hit@{k}"] == hit_at_k(got, ev, k)
            assert m["recall"] == recall(got, ev)

    # -- Properties --
    def test_repeated_ids_count_once(self):
        assert evidence_metrics(["a", "a", "b"], ["a", "c"], hit_k=(2,)) == {
            "hit@2": 0.0,
            "recall": 0.5,
        }


class TestOneReader:
    """Evidence and retrieval files go through the records reader's checks."""

    def test_not_utf8_names_the_file(self, tmp_path):
        p = tmp_path / "ev.csv"
        p.write_bytes(b"episode_id,query_id,step\ne1,q1,\xff\n")
        with pytest.raises(ValueError, match=r"evidence file '.*ev.csv' is not UTF-8 text"):
            read_evidence(p)

    def test_empty_file(self, tmp_path):
        p = tmp_path / "ev.jsonl"
        p.write_text("")
        with pytest.raises(ValueError, match=r"evidence file '.*ev.jsonl' is empty"):
            read_evidence(p)

    def test_json_line_not_an_object(self, tmp_path):
        (tmp_path / "ev.jsonl").write_text(
            '{"episode_id": "e1", "query_id": "q1", "evidence": [{"step": "3"}]}\n'
        )
        p = tmp_path / "ret.jsonl"
        p.write_text('{"episode_id": "e1"}\n[1, 2]\n')
        with pytest.raises(ValueError, match=r"ret.jsonl', line 2: expected a JSON object"):
            records_from_retrievals(p, tmp_path / "ev.jsonl")

    def test_folder_is_not_a_file(self, tmp_path):
        (tmp_path / "ev.csv").mkdir()
        with pytest.raises(ValueError, match=r"ev.csv' is a folder, not a file"):
            read_evidence(tmp_path / "ev.csv")
