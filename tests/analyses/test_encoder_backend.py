"""``--encoder-backend``: from the CLI through the driver to ``RunSpec.text_encoder()``.

A tiny benchmark of the protocol that reads one file and encodes its lines with
``spec.text_encoder()`` (a stand-in run: the encoder is built, not loaded), so the test sees
which encoder and cache key each backend gives, the provenance that records it, and the
refusals (an unknown backend; a benchmark without texts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import osustat.analyses.driver as driver
from osustat._validation import UsageError
from osustat.analyses.protocol import Benchmark, BenchmarkRun, Choices, DataSpec, RunSpec
from osustat.cli.main import main
from osustat.retrieval.encoder import CachedEncoder


class Texts(Benchmark):
    """Records one row per method; remembers the encoder its run was given."""

    name = "texts"
    description = "encodes nothing, names its encoder"
    data = DataSpec("files")
    choices = Choices("texts", (), "texts/choices.toml")
    claims = None
    references = ("B",)
    multi_seed = False

    def __init__(self, kind: str = "files") -> None:
        self.data = DataSpec(kind)  # type: ignore[arg-type]
        self.encoders: list[Any] = []

    def methods(self) -> tuple[str, ...]:
        return ("A", "B")

    def check(self, spec: RunSpec) -> None:
        pass

    def run(self, spec: RunSpec) -> BenchmarkRun:
        self.encoders.append(spec.text_encoder())
        rows = [
            {"benchmark": "texts", "episode_id": "e0", "query_id": f"q{i}", "method": m,
             "budget": 64, "seed": spec.seed, "metric": "hit@2", "value": float(i % 2),
             "cell": "T+E+"}
            for i in range(4) for m in ("A", "B")
        ]  # fmt: skip
        return BenchmarkRun(pd.DataFrame(rows))

    def analyze(self, run: BenchmarkRun, spec: RunSpec) -> Any:
        return None

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        return "# Texts\n"


@pytest.fixture
def texts(monkeypatch, tmp_path) -> Texts:
    bench = Texts()
    monkeypatch.setattr(driver, "get_benchmark", lambda name: bench)
    (tmp_path / "in.txt").write_text("one\ntwo\n")
    return bench


def _argv(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "reproduce", "toolbench", "--out", str(tmp_path / "o"), "--data", str(tmp_path / "in.txt"),
        "--cache", str(tmp_path / "cache"), "--resamples", "99", "--no-progress", *extra,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("backend", "suffix"), [("torch", ""), ("onnx", " [onnxruntime]"), ("openvino", None)]
)
def test_the_backend_reaches_the_encoder_its_cache_key_and_the_provenance(
    texts, tmp_path, backend, suffix
):
    if backend == "openvino":
        pytest.importorskip("openvino")
        from osustat.retrieval.encoder_onnx import openvino_precision

        suffix = f" [openvino-{openvino_precision()}]"
    extra = () if backend == "torch" else ("--encoder-backend", backend)
    assert main(_argv(tmp_path, *extra)) == 0
    (enc,) = texts.encoders
    assert isinstance(enc, CachedEncoder)
    assert enc.encoder.backend == backend and not enc.encoder.is_loaded
    assert enc.name == "sentence-transformers/all-MiniLM-L6-v2" + suffix
    assert enc.directory.parent == tmp_path / "cache"
    prov = (tmp_path / "o" / "provenance.json").read_text()
    assert f'\\"encoder_backend\\": \\"{backend}\\"' in prov


def test_the_default_backend_is_the_reference(texts, tmp_path):
    request = driver.Request("texts", tmp_path / "o", data=(str(tmp_path / "in.txt"),))
    assert driver.plan(request).spec.encoder_backend == "torch"
    assert RunSpec().encoder_backend == "torch"


def test_a_stand_in_encoder_wins_over_the_backend():
    stand_in = object()
    assert RunSpec(encoder=stand_in, encoder_backend="onnx").text_encoder() is stand_in


def test_an_unknown_backend_is_refused_before_any_work(texts, tmp_path, capsys):
    request = driver.Request(
        "texts", tmp_path / "o", data=(str(tmp_path / "in.txt"),), encoder_backend="tvm"
    )
    with pytest.raises(UsageError, match="`--encoder-backend` must be one of"):
        driver.plan(request)
    with pytest.raises(SystemExit) as exc:  # argparse lists the backends
        main(_argv(tmp_path, "--encoder-backend", "tvm"))
    assert exc.value.code == 2 and "invalid choice: 'tvm'" in capsys.readouterr().err
    assert texts.encoders == []


def test_a_benchmark_without_texts_refuses_another_backend(monkeypatch, tmp_path, capsys):
    bench = Texts(kind="none")
    monkeypatch.setattr(driver, "get_benchmark", lambda name: bench)
    argv = ["reproduce", "synthetic", "--out", str(tmp_path / "o"), "--encoder-backend", "onnx"]
    assert main(argv) == 2
    assert "has no effect on `reproduce texts`" in capsys.readouterr().err
    assert bench.encoders == [] and not (tmp_path / "o").exists()
    # the default stays accepted for every benchmark
    assert driver.plan(driver.Request("texts", tmp_path / "p")).spec.encoder_backend == "torch"


def test_the_choice_keys_the_encoder_and_its_cache(tmp_path) -> None:
    """The choice ``encoder-backend`` (what ``--sensitivity``'s points set) picks the encoder,
    each backend with its own cache directory; τ-bench's shared workspace keeps one encoder and
    one built data set per backend, so a grid point never reuses another backend's vectors."""
    from osustat.analyses.tau_bench.benchmark import BENCHMARK
    from osustat.analyses.tau_bench.workspace import Workspace, _data_key

    base = BENCHMARK.choices.defaults()
    specs = {
        b: RunSpec(choices={**base, "encoder-backend": b}, cache=tmp_path / "c")
        for b in ("torch", "onnx", "openvino")
    }
    encoders = {b: s.text_encoder() for b, s in specs.items()}
    assert {b: e.encoder.backend for b, e in encoders.items()} == {
        b: b for b in ("torch", "onnx", "openvino")
    }
    assert len({e.directory for e in encoders.values()}) == 3
    # the choice wins over the field (one source for a benchmark that declares it)
    assert RunSpec(
        choices={"encoder-backend": "onnx"}, encoder_backend="openvino"
    ).text_backend == ("onnx")
    ws = Workspace(specs["torch"])
    got = {b: ws.encoder(s) for b, s in specs.items()}
    assert len({id(e) for e in got.values()}) == 3 and ws.encoder(specs["onnx"]) is got["onnx"]
    assert len({_data_key(s) for s in specs.values()}) == 3
