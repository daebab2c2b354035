from pathlib import Path

from osustat.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_example_retriever_passes(monkeypatch, capsys):
    monkeypatch.chdir(EXAMPLES)  # importable from the current directory, like python -m
    assert main(["check-retriever", "my_retriever:RecencyCosine"]) == 0
    out = capsys.readouterr().out
    assert "retriever contract: Recency Cosine" in out
    assert "12 of 12 checks passed" in out


def test_failing_retriever_exits_1(tmp_path, monkeypatch, capsys):
    (tmp_path / "bad_retriever.py").write_text(
        "import numpy as np\n"
        "from osustat.retrieval import FlatVector, RetrievalResult\n"
        "class Greedy(FlatVector):\n"
        "    name = 'greedy'\n"
        "    def _retrieve(self, q, budget, end, evidence):\n"
        "        steps = np.arange(end, dtype=np.int64)\n"
        "        return RetrievalResult(steps, float(self.trajectory_.costs[:end].sum()))\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check-retriever", "bad_retriever:Greedy"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  budget, duplicates, step range" in out


def test_bad_spec_exits_2(capsys):
    assert main(["check-retriever", "no_such_module_abc:X"]) == 2
    assert "cannot import module 'no_such_module_abc'" in capsys.readouterr().err
